//! The engine's (and the analysis') modules form no import cycle (issue 11): a kind never imports the runner
//! or the registry, the harness never imports a kind, and no module imports from
//! `mod.rs`. Reads the sources: every `super::<module>` / `crate::engine::<module>` path
//! outside comments and test modules is an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::file_cycles::code_of;

/// Module name → engine modules it refers to (`mod.rs` itself left out: it is the top).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of("engine")
}

/// Module name → sibling modules it refers to, for `crates/<module>/src/<module>` (`mod.rs`
/// left out).
fn graph_of(module: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("crates")
        .join(module)
        .join("src")
        .join(module);
    let crate_prefix = format!("crate::{module}::");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files.insert(name, path.join("mod.rs"));
        } else if name != "mod" && !name.contains("test") {
            files.insert(name, path);
        }
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (name, path) in &files {
        let code = code_of(path);
        let mut deps = BTreeSet::new();
        for prefix in ["super::", crate_prefix.as_str()] {
            for (i, _) in code.match_indices(prefix) {
                let rest = &code[i + prefix.len()..];
                let word: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if names.contains(&word) && &word != name {
                    deps.insert(word);
                }
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for dep in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(dep, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn engine_modules_have_no_import_cycle() {
    let graph = graph();
    assert!(graph.len() >= 15, "read the engine: {graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:#?}");
}

#[test]
fn analysis_modules_have_no_import_cycle() {
    let graph = graph_of("analysis");
    assert!(graph.len() >= 5, "read the analysis: {graph:?}");
    assert!(graph["compare"].contains("rows"), "{graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:#?}");
}

#[test]
fn kinds_sit_above_the_harness_and_below_the_runner() {
    let graph = graph();
    for kind in ["fileio", "grouplog", "fileserver", "smallfiles"] {
        let deps = &graph[kind];
        assert!(deps.contains("kind"), "{kind} implements Kind: {deps:?}");
        assert!(
            !deps.contains("runner"),
            "{kind} imports the runner: {deps:?}"
        );
    }
    assert!(graph["runner"].contains("kind"));
    for kind in ["fileio", "grouplog", "fileserver", "smallfiles", "runner"] {
        assert!(!graph["harness"].contains(kind));
    }
    // api is the bottom but for the typed errors it holds (issue 11 §5), which import no
    // engine module at all.
    let errors: BTreeSet<String> = ["failure", "target_error"].map(String::from).into();
    assert!(
        graph["api"].is_subset(&errors),
        "api is the bottom: {:?}",
        graph["api"]
    );
    for leaf in &errors {
        assert!(graph[leaf].is_empty(), "{leaf}: {:?}", graph[leaf]);
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut graph = graph();
    graph.get_mut("harness").unwrap().insert("runner".into());
    let cycle = find_cycle(&graph).expect("harness → runner → harness");
    assert!(cycle.contains(&"harness".to_string()) && cycle.contains(&"runner".to_string()));
}
