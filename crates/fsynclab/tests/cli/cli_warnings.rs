//! Typed warnings (issue 32) against what the release before them wrote: a database of
//! schema version 9 and a bundle exported by that release (`tests/fixtures/pre32/`, made
//! with main 5159068: a run on tmpfs and an imported plain-JSON fio result) keep their
//! warnings' sentences, shown as they were, and new runs store codes and parameters.

use std::path::{Path, PathBuf};

use crate::common::{Lab, bare_cmd, json_of};

const TMPFS: &str = "target is on tmpfs: fsync and fdatasync return immediately (nothing is \
                     persisted), so sync latency here is pure syscall cost";
const FIO: [&str; 2] = [
    "imported: machine facts unknown (fio's JSON names no kernel, CPU, memory, filesystem or \
     device; only the host in client mode)",
    "no latency histogram: fio's plain JSON has percentiles only (fio's json+ output format has \
     the histogram); fio's printed percentiles are the figures",
];

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/pre32")
        .join(name)
}

/// `fsynclab --db DB ARGS… [LAST]`, which must succeed: its standard output.
pub(crate) fn fsynclab(db: &Path, args: &[&str], last: Option<&Path>) -> Vec<u8> {
    let out = bare_cmd()
        .arg("--db")
        .arg(db)
        .args(args)
        .args(last)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub(crate) fn show(db: &Path, id: &str) -> serde_json::Value {
    json_of(&fsynclab(db, &["show", "--json", id], None))["run"].clone()
}

pub(crate) fn user_version(db: &Path) -> String {
    sql(
        db,
        "SELECT CAST(user_version AS TEXT) FROM pragma_user_version",
    )
}

pub(crate) fn sql(db: &Path, query: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(query, [], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .unwrap_or_else(|| "NULL".into())
}

/// Runs 1 (tmpfs) and 2 (fio import) of a store holding the fixtures' runs show the
/// sentences the earlier release stored, each coded `text`.
fn assert_old_sentences(db: &Path, tmpfs: &str, fio: &str) {
    let run = show(db, tmpfs);
    assert_eq!(run["warnings"], serde_json::json!([TMPFS]), "{run}");
    assert_eq!(run["warning_codes"], serde_json::json!(["text"]));
    let run = show(db, fio);
    assert_eq!(run["warnings"], serde_json::json!(FIO), "{run}");
    assert_eq!(run["warning_codes"], serde_json::json!(["text", "text"]));
}

#[test]
fn a_database_of_the_release_before_keeps_its_warnings_as_they_were() {
    let lab = Lab::new();
    let db = lab.dir.path().join("v9.sqlite");
    std::fs::copy(fixture("runs-v9.sqlite"), &db).unwrap();
    assert_eq!(user_version(&db), "9");
    assert_old_sentences(&db, "1", "2");
    // Opened for writing (a run), it migrates; the old rows have no codes, the new one has.
    let run = ["run", "--quiet", "--file-size", "64k", "--keep", "--target"];
    fsynclab(&db, &run, Some(&lab.target));
    assert_eq!(user_version(&db), "13");
    assert_eq!(
        sql(&db, "SELECT warning_codes FROM runs WHERE id = 1"),
        "NULL"
    );
    assert_eq!(
        sql(&db, "SELECT warning_codes FROM runs WHERE id = 3"),
        "files_kept"
    );
    let stored = sql(&db, "SELECT warnings_json FROM runs WHERE id = 3");
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored[0]["code"], "files_kept", "{stored}");
    assert!(stored[0]["dir"].as_str().is_some(), "{stored}");
    let run = show(&db, "3");
    assert_eq!(run["warning_codes"], serde_json::json!(["files_kept"]));
    let words = run["warnings"][0].as_str().unwrap();
    assert!(words.starts_with("test files kept in ") && words.ends_with(" (kept as asked)"));
    assert_old_sentences(&db, "1", "2");
}

#[test]
fn a_bundle_of_the_release_before_imports_with_its_warnings_as_they_were() {
    let lab = Lab::new();
    fsynclab(&lab.db, &["import"], Some(&fixture("runs-v9.fsynclab")));
    assert_old_sentences(&lab.db, "1", "2");
    let text = fsynclab(&lab.db, &["show", "1"], None);
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains(&format!("warning   {TMPFS}")), "{text}");
}
