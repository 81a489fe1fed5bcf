//! The harness of the fuzz targets in crates/fsynclab/tests/cli/fuzz_parsers.rs: generated cases through
//! proptest (their number from `PROPTEST_CASES`), and each target's corpus
//! (`tests/fuzz_corpus/<target>/`) replayed, every input counted and none allowed to panic.

use std::path::{Path, PathBuf};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestRunner};

/// Generated cases per target: `PROPTEST_CASES`, or `default` (kept small so that all of
/// `cargo test -p fsynclab --test cli fuzz_parsers` stays well under 20 s in a debug build).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `property` on `cases` generated inputs and prints the number of executions (the
/// corpus is replayed apart, by [`replay_corpus`]).
pub fn fuzz<S: Strategy>(target: &str, default_cases: u32, strategy: S, property: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let cases = cases(default_cases);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |value| {
        property(value);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{target}: {e} (add the shrunk input to tests/fuzz_corpus/)");
    }
    eprintln!("fuzz {target}: {cases} generated cases, no failure");
}

fn corpus(target: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fuzz_corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "empty corpus {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect()
}

/// Replays a string corpus through `check`, counting the inputs.
pub fn replay_corpus(target: &str, check: impl Fn(&str)) -> usize {
    let corpus = corpus(target);
    for (path, text) in &corpus {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(text)));
        assert!(
            outcome.is_ok(),
            "{target}: corpus input {} panicked",
            path.display()
        );
    }
    corpus.len()
}
