//! No two files (or folders of files) of a crate import each other, directly or round a
//! loop, at any level of its module tree (issue 29): Cargo refuses cycles between crates,
//! this test refuses them inside each crate. Reads the sources: every `crate::…`,
//! `super::…` and `self::…` path outside comments and test modules (`use` trees expanded)
//! is an edge from the file to the module it names; an edge between two files is also an
//! edge between the folders that hold them, below their common parent.
//!
//! The library's layers are crates (docs/ARCHITECTURE.md): each holds its layer's modules and
//! depends only on crates below it (Cargo then refuses any import that runs back up).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside its crate: `["scratch", "manager"]`; the crate root is empty.
type ModPath = Vec<String>;

/// The library's crates by layer, bottom first, with the top-level modules each holds: data
/// types and their parsing; the system (probe, scratch, paths, tracer); the engine; the
/// store; the figures; the lab.
const LAYERS: &[(&str, &str, &[&str])] = &[
    (
        "crates/core",
        "fsynclab-core",
        &[
            "cleanup",
            "crashlog",
            "uring",
            "clock",
            "identity",
            "spec",
            "fsopts",
            "sysinfo",
            "metrics",
            "warning",
            "failure",
            "recorded",
            "io_cause",
            "target",
            "trace_note",
        ],
    ),
    (
        "crates/sys",
        "fsynclab-sys",
        &[
            "pathwalk", "owner", "probe", "scratch", "ktrace", "crashdev", "rawdev",
        ],
    ),
    ("crates/engine", "fsynclab-engine", &["engine"]),
    ("crates/store", "fsynclab-store", &["store"]),
    (
        "crates/analysis",
        "fsynclab-analysis",
        &["words", "analysis", "report"],
    ),
    (".", "fsynclab-lab", &["lab", "fio"]),
];

/// The library crates' folders, bottom first.
pub(crate) const LIBRARY_CRATES: [&str; 6] = [
    "crates/core",
    "crates/sys",
    "crates/engine",
    "crates/store",
    "crates/analysis",
    ".",
];

fn repo() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).to_path_buf()
}

/// Every `.rs` file under `src` that is not a test file, by module path.
fn modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: ModPath = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if parts.iter().any(|p| p.contains("test")) {
                continue;
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The file's code without its test module and comment lines (`module_layers` reads it
/// the same way).
pub(crate) fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of a `use` tree written after `prefix::`: `a::b`, `{a, b::{c, d}}`.
fn expand(text: &str) -> Vec<Vec<String>> {
    let mut chars = text.chars().peekable();
    expand_tree(&mut chars)
}

fn expand_tree(chars: &mut std::iter::Peekable<std::str::Chars>) -> Vec<Vec<String>> {
    let mut head = Vec::new();
    let mut word = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            chars.next();
        } else if c == ':' {
            chars.next();
            if !word.is_empty() {
                head.push(std::mem::take(&mut word));
            }
        } else if c == '{' {
            chars.next();
            let mut out = Vec::new();
            loop {
                for tail in expand_tree(chars) {
                    out.push([head.clone(), tail].concat());
                }
                match chars.next() {
                    Some(',') => continue,
                    _ => break, // '}' or the end
                }
            }
            return out;
        } else if c.is_whitespace() && word.is_empty() {
            chars.next();
        } else {
            break;
        }
    }
    if !word.is_empty() {
        head.push(word);
    }
    vec![head]
}

/// Edges from each file to the modules it names (itself and the crate root left out).
fn file_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mods = modules(src);
    let mut graph = BTreeMap::new();
    for (module, path) in &mods {
        let code = code_of(path);
        let mut deps = BTreeSet::new();
        for base in ["crate::", "super::", "self::"] {
            for (i, _) in code.match_indices(base) {
                let before = code[..i].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let start: ModPath = match base {
                    "crate::" => Vec::new(),
                    "self::" => module.clone(),
                    _ => module[..module.len().saturating_sub(1)].to_vec(),
                };
                for segments in expand(&code[i + base.len()..]) {
                    let mut full = start.clone();
                    for s in segments {
                        if s == "super" {
                            full.pop();
                        } else {
                            full.push(s);
                        }
                    }
                    let target = (0..=full.len())
                        .rev()
                        .map(|k| full[..k].to_vec())
                        .find(|p| mods.contains_key(p));
                    if let Some(target) = target
                        && &target != module
                        && !target.is_empty()
                    {
                        deps.insert(target);
                    }
                }
            }
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

/// Every cycle at every level: (the folder, the sorted members of one strongly connected
/// group of its children).
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> BTreeSet<(String, Vec<String>)> {
    let mut levels: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, targets) in graph {
        for to in targets {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                levels
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry(from[common].clone())
                    .or_default()
                    .insert(to[common].clone());
            }
        }
    }
    let mut out = BTreeSet::new();
    for (level, edges) in levels {
        for group in strongly_connected(&edges) {
            out.insert((level.join("/"), group));
        }
    }
    out
}

/// The groups of more than one node that reach each other (Kosaraju), each sorted.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String, forward: bool| -> BTreeSet<String> {
        let mut seen = BTreeSet::from([from.clone()]);
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            let next: Vec<String> = if forward {
                edges.get(&n).into_iter().flatten().cloned().collect()
            } else {
                edges
                    .iter()
                    .filter(|(_, t)| t.contains(&n))
                    .map(|(f, _)| f.clone())
                    .collect()
            };
            for m in next {
                if seen.insert(m.clone()) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let mut groups = BTreeSet::new();
    for node in edges.keys() {
        let group: Vec<String> = reach(node, true)
            .intersection(&reach(node, false))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

#[test]
fn no_crate_has_a_cycle_between_its_files() {
    let crates = LIBRARY_CRATES
        .iter()
        .chain(&["crates/gui", "crates/fsynclab"]);
    for krate in crates {
        let graph = file_graph(&repo().join(krate).join("src"));
        assert!(graph.len() > 8, "{krate}: read too few files: {graph:?}");
        let found = cycles(&graph);
        assert!(
            found.is_empty(),
            "{krate}: files that import each other round a loop (folder, members): {found:#?}"
        );
    }
}

/// The `pub mod` names of a crate root.
fn declared_modules(lib_rs: &Path) -> BTreeSet<String> {
    code_of(lib_rs)
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').trim().to_string())
        .collect()
}

#[test]
fn each_library_crate_holds_its_layer_and_depends_only_on_those_below() {
    assert_eq!(LAYERS.len(), LIBRARY_CRATES.len());
    let mut problems = Vec::new();
    for (layer, (dir, package, modules)) in LAYERS.iter().enumerate() {
        assert_eq!(LIBRARY_CRATES[layer], *dir);
        let mut declared = declared_modules(&repo().join(dir).join("src/lib.rs"));
        // The tests' skip rule and counters (test builds and `test-support` only).
        declared.retain(|m| !m.starts_with("test_"));
        let expected: BTreeSet<String> = modules.iter().map(|m| m.to_string()).collect();
        if declared != expected {
            problems.push(format!(
                "{dir} declares {declared:?}, its layer is {expected:?}"
            ));
        }
        let manifest = std::fs::read_to_string(repo().join(dir).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&manifest).unwrap();
        assert_eq!(manifest["package"]["name"].as_str(), Some(*package));
        let deps = manifest.get("dependencies").and_then(|d| d.as_table());
        for name in deps.into_iter().flat_map(|d| d.keys()) {
            let below = LAYERS[..layer].iter().any(|(_, p, _)| p == name);
            if name.starts_with("fsynclab") && !below {
                problems.push(format!("{package} depends on {name}, not a layer below"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_reader_sees_a_cycle_and_a_use_tree() {
    assert_eq!(
        expand("{a, b::{c, d}} rest"),
        [vec!["a"], vec!["b", "c"], vec!["b", "d"]]
    );
    assert_eq!(expand("x::y::Z;"), [vec!["x", "y", "Z"]]);
    let graph: BTreeMap<ModPath, BTreeSet<ModPath>> = [
        (vec!["a".into(), "x".into()], [vec!["b".into()]].into()),
        (vec!["b".into()], [vec!["a".into()]].into()),
        (vec!["c".into()], [vec!["a".into(), "x".into()]].into()),
    ]
    .into();
    let found = cycles(&graph);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [(String::new(), vec!["a".to_string(), "b".to_string()])]
    );
}
