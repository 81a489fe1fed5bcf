//! A workload kind lives in its own files (issue 32): outside its spec module
//! (`crates/core/src/spec/kinds/<kind>.rs`), its engine module (`crates/engine/src/engine/
//! <kind>*`) and the registry, no library or front-end code names it — by its
//! `WorkloadKind` variant or its table of the spec (`.<kind>.`) — except the special cases
//! listed here, each with its reason. A kind added since the registry (append) has none; a
//! new special case must be listed, or moved into the kind's table.

use std::path::{Path, PathBuf};

use super::library_words::{is_test_file, library_part, rust_files};

/// The source trees scanned: the library crates and both front ends.
const ROOTS: [&str; 8] = [
    "crates/core/src",
    "crates/sys/src",
    "crates/engine/src",
    "crates/store/src",
    "crates/analysis/src",
    "src",
    "crates/gui/src",
    "crates/fsynclab/src",
];

/// (kind, file, why): the places a kind is still named outside its own files.
const SPECIAL: [(&str, &str, &str); 26] = [
    (
        "fileio",
        "src/lab/advise_plan.rs",
        "the commit advisor's sync-parallelism and sync-method runs are fileio runs",
    ),
    (
        "fileio",
        "crates/engine/src/engine/mod.rs",
        "a run on a bare block device (issue 34) is a fileio run: its workers' parts of the range",
    ),
    (
        "fileio",
        "src/lab/device.rs",
        "only fileio runs on a bare block device: its range is threads × file size",
    ),
    (
        "fileio",
        "crates/core/src/spec/mod.rs",
        "the default kind, and WorkloadKind's own definition",
    ),
    (
        "fileio",
        "crates/core/src/spec/flat.rs",
        "the flat form: fileio's settings are its top-level fields, as stored before kinds had tables",
    ),
    (
        "fileio",
        "crates/core/src/spec/typed.rs",
        "an imported fio run keeps fileio's settings, and fileio() hands them to their readers",
    ),
    (
        "fileio",
        "crates/core/src/spec/describe.rs",
        "an imported fio run is described by fileio's settings",
    ),
    (
        "fileio",
        "crates/analysis/src/report/text.rs",
        "the fileio run line: its block size and io_uring depth",
    ),
    (
        "fileio",
        "crates/analysis/src/words/target.rs",
        "an imported run's open-files advice falls back to fileio's rows",
    ),
    (
        "fileio",
        "src/fio/export.rs",
        "a fio job file is written from fileio's settings",
    ),
    (
        "fileio",
        "src/fio/import/entry.rs",
        "an imported fio run keeps fileio's settings as kind fio",
    ),
    (
        "fileio",
        "src/lab/mod.rs",
        "preflight: fileio's block as the default write unit, its shared files' descriptors",
    ),
    (
        "fileio",
        "crates/core/src/metrics/sysbench.rs",
        "sysbench mode is fileio's",
    ),
    (
        "fileio",
        "crates/analysis/src/report/kinds.rs",
        "fileio keeps the IOPS line, no kind line",
    ),
    (
        "fileio",
        "crates/analysis/src/analysis/rank.rs",
        "commit methods: fileio's sync method and flags",
    ),
    (
        "fileio",
        "src/fio/job/options.rs",
        "a fio job file runs as fileio",
    ),
    (
        "fileio",
        "src/fio/export/checks.rs",
        "only fileio has a fio equivalent",
    ),
    (
        "smallfiles",
        "crates/core/src/spec/kinds/def.rs",
        "the doc of KindTable names the SQL path $.smallfiles.sync",
    ),
    (
        "smallfiles",
        "crates/store/src/store/query.rs",
        "list --sync filters on $.smallfiles.sync",
    ),
    (
        "smallfiles",
        "crates/analysis/src/report/kinds.rs",
        "its fs_mark-style kind line",
    ),
    (
        "smallfiles",
        "crates/analysis/src/analysis/rank.rs",
        "its per-file sync is its commit method",
    ),
    (
        "smallfiles",
        "crates/analysis/src/analysis/durability.rs",
        "its per-file sync is what makes a file durable",
    ),
    (
        "fileserver",
        "crates/analysis/src/report/kinds.rs",
        "its dbench-style kind line",
    ),
    (
        "fileserver",
        "crates/analysis/src/analysis/metrics.rs",
        "dbench's MB/sec and ops/s",
    ),
    (
        "fileserver",
        "src/lab/mod.rs",
        "open files per client in the descriptor preflight",
    ),
    (
        "grouplog",
        "crates/analysis/src/report/kinds.rs",
        "its group-commit kind line",
    ),
];

/// Also grouplog's (its strategy is a commit method; the window's strategy chips are
/// greyed out without io_uring).
const SPECIAL_GROUPLOG: [&str; 4] = [
    // The commit advisor compares grouplog's strategies; stored crash verdicts are read per
    // strategy ($.grouplog.strategy).
    "src/lab/advise_plan.rs",
    "crates/store/src/store/advice.rs",
    "crates/analysis/src/analysis/rank.rs",
    "crates/gui/src/panels/setup_kinds.rs",
];

fn repo() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).to_path_buf()
}

/// Whether `file` (relative to the repository) is one of `module`'s own or the registry.
fn at_home(file: &str, module: &str) -> bool {
    file.ends_with(&format!("spec/kinds/{module}.rs"))
        || file.contains(&format!("spec/kinds/{module}/"))
        || file.contains(&format!("engine/src/engine/{module}"))
        || file.ends_with("spec/kinds/mod.rs")
}

/// Whether `code` names the kind `module`: its `WorkloadKind` or `KindSpec` variant, its
/// module of the spec (`kinds::grouplog::`), its accessor (`.fileio()`) or its table of the
/// flat form (`.grouplog.`).
fn names(code: &str, module: &str) -> bool {
    let title = format!("{}{}", module[..1].to_uppercase(), &module[1..]);
    let variant = |enum_name: &str| {
        let v = format!("{enum_name}::{title}");
        code.match_indices(&v)
            .any(|(i, _)| !code[i + v.len()..].starts_with(char::is_alphanumeric))
    };
    variant("WorkloadKind")
        || variant("KindSpec")
        || code.contains(&format!("kinds::{module}::"))
        || code.contains(&format!(".{module}()"))
        || (module != "fileio" && code.contains(&format!(".{module}.")))
}

#[test]
fn every_kind_is_named_only_in_its_own_files_and_the_listed_special_cases() {
    let repo = repo();
    let mut files = Vec::new();
    for root in ROOTS {
        rust_files(&repo.join(root), &mut files);
    }
    let mut strays = Vec::new();
    let mut scanned = 0;
    for path in &files {
        let file = path
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if is_test_file(path) || file.contains("/tests/") {
            continue;
        }
        scanned += 1;
        let source = std::fs::read_to_string(path).unwrap();
        let code = library_part(&source);
        for kind in fsynclab::spec::KINDS {
            let module = kind.kind.as_str();
            let named = names(code, module);
            let listed = SPECIAL.iter().any(|(k, f, _)| *k == module && *f == file)
                || (module == "grouplog" && SPECIAL_GROUPLOG.contains(&file.as_str()));
            if named && !at_home(&file, module) && !listed {
                strays.push(format!("{file}: names {module}"));
            }
        }
    }
    assert!(scanned > 150, "the scan read the tree ({scanned} files)");
    assert!(
        strays.is_empty(),
        "kinds named outside their own files (move it into the kind's table, or list it \
         here with its reason):\n{}",
        strays.join("\n")
    );
}

/// Every special case still names its kind (a stale entry is removed, not kept).
#[test]
fn every_listed_special_case_is_still_one() {
    let repo = repo();
    let grouplog = SPECIAL_GROUPLOG.iter().map(|f| ("grouplog", *f));
    for (kind, file) in SPECIAL.iter().map(|(k, f, _)| (*k, *f)).chain(grouplog) {
        let source = std::fs::read_to_string(repo.join(file)).unwrap();
        let code = library_part(&source);
        assert!(
            names(code, kind),
            "{file} no longer names {kind}: drop it from the list"
        );
    }
}
