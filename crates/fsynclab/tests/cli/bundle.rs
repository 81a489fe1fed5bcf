//! Bundles end to end: `export --format bundle` then `import` into other databases, and
//! hostile bundles refused by name with nothing imported.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{Lab, json_of};
use fsynclab::store::Store;

/// Three runs in `lab`: two repeats of one experiment (label `rep`, tag `x`) and one
/// imported fio run (its origin kept).
fn seed(lab: &Lab) {
    lab.run_doc(&[
        "--file-size",
        "128k",
        "--repeat",
        "2",
        "--label",
        "rep",
        "--tag",
        "x",
    ]);
    let out = lab
        .cmd()
        .arg("import")
        .arg(fixture("seed000-jsonplus.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/fio")
        .join(name)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `fsynclab export <selection> --format bundle --out <dir>/<name>`; the bundle's path.
fn export(lab: &Lab, selection: &[&str], name: &str) -> PathBuf {
    let path = lab.dir.path().join(name);
    let out = lab
        .cmd()
        .arg("export")
        .args(selection)
        .args(["--format", "bundle", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    path
}

fn import(lab: &Lab, file: &Path) -> Output {
    lab.cmd().arg("import").arg(file).output().unwrap()
}

/// Every run, loaded whole, as JSON without what differs between databases by design
/// (local ids, the experiment's local id, the exporting machine's run directory).
fn runs_of(db: &Path) -> Vec<serde_json::Value> {
    let store = Store::open_read_only(db).unwrap();
    let mut rows = store.list_runs(&Default::default()).unwrap();
    rows.reverse();
    rows.iter()
        .map(|row| {
            let mut v = serde_json::to_value(store.load_run(row.id).unwrap()).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("run_dir");
            let r = o["row"].as_object_mut().unwrap();
            r.remove("id");
            r.remove("experiment_id");
            if let Some(result) = o.get_mut("result").and_then(|r| r.as_object_mut()) {
                result.remove("id");
            }
            v
        })
        .collect()
}

fn run_count(db: &Path) -> usize {
    let store = Store::open_read_only(db).unwrap();
    store.list_runs(&Default::default()).unwrap().len()
}

#[test]
fn export_then_import_into_an_empty_database_gives_identical_runs() {
    let a = Lab::new();
    seed(&a);
    let bundle = export(&a, &["--all"], "all.fsynclab");
    let b = Lab::new();
    let out = import(&b, &bundle);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("3 new, 0 already present (2 new experiments)"),
        "{}",
        stdout(&out)
    );
    let before = runs_of(&a.db);
    assert_eq!(before.len(), 3);
    assert_eq!(before, runs_of(&b.db));
    // Every run has a uuid, and it travelled.
    for run in &before {
        let uuid = run["row"]["uuid"].as_str().unwrap();
        assert_eq!(uuid.len(), 36, "{uuid}");
    }
    // The comparison reads the same in both labs (ids are 1..3 in both).
    let compare = |lab: &Lab| {
        let out = lab.cmd().args(["compare", "1", "2"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    assert_eq!(compare(&a), compare(&b));
    // The two repeats stay in one experiment, apart from the fio run's.
    let store = Store::open_read_only(&b.db).unwrap();
    let rows = store.list_runs(&Default::default()).unwrap();
    let rep: Vec<_> = rows
        .iter()
        .filter(|r| r.label.as_deref() == Some("rep"))
        .collect();
    assert_eq!(rep.len(), 2);
    assert!(rep[0].experiment_id.is_some());
    assert_eq!(rep[0].experiment_id, rep[1].experiment_id);
    assert_eq!(rep[0].tags, vec!["x".to_string()]);
    let fio = rows.iter().find(|r| r.kind == "fio").unwrap();
    assert_ne!(fio.experiment_id, rep[0].experiment_id);
    assert_eq!(store.list_experiments().unwrap().len(), 2);
}

#[test]
fn a_second_import_adds_nothing_and_other_runs_are_kept() {
    let a = Lab::new();
    seed(&a);
    let bundle = export(&a, &["--label", "rep"], "rep.fsynclab");
    let b = Lab::new();
    // b has a run of its own first.
    let out = b
        .cmd()
        .arg("import")
        .arg(fixture("seed000-json.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let own = runs_of(&b.db);
    let out = import(&b, &bundle);
    assert!(
        stdout(&out).contains("2 new, 0 already present"),
        "{}",
        stdout(&out)
    );
    assert_eq!(run_count(&b.db), 3);
    let out = import(&b, &bundle);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("0 new, 2 already present"),
        "{}",
        stdout(&out)
    );
    assert_eq!(run_count(&b.db), 3);
    // Imported runs keep their creation times, so they list before b's own run.
    let by_uuid = |runs: Vec<serde_json::Value>| {
        let mut runs = runs;
        runs.sort_by_key(|r| r["row"]["uuid"].as_str().unwrap().to_string());
        runs
    };
    let mut expected = own;
    expected.extend(
        runs_of(&a.db)
            .into_iter()
            .filter(|r| r["row"]["label"] == "rep"),
    );
    assert_eq!(by_uuid(runs_of(&b.db)), by_uuid(expected));
    // A run exported from b and imported back into a is not duplicated either.
    let back = export(&b, &["--all"], "back.fsynclab");
    let out = import(&a, &back);
    assert!(
        stdout(&out).contains("1 new, 2 already present"),
        "{}",
        stdout(&out)
    );
    assert_eq!(run_count(&a.db), 4);
}

#[test]
fn selections_and_outputs_are_checked() {
    let a = Lab::new();
    seed(&a);
    let one = export(&a, &["--runs", "2"], "one.fsynclab");
    let b = Lab::new();
    assert!(stdout(&import(&b, &one)).contains("1 new"));
    let bundle = export(&a, &["--experiment", "1"], "exp.fsynclab");
    let c = Lab::new();
    assert!(stdout(&import(&c, &bundle)).contains("2 new"));
    for (args, needle) in [
        (vec!["--runs", "99"], "no run with id 99"),
        (vec!["--label", "nosuch"], "label \"nosuch\" holds no run"),
        (vec!["--runs", "3-1"], "--runs"),
        (vec!["--all"], "--out F"),
    ] {
        let out = a
            .cmd()
            .arg("export")
            .args(&args)
            .args(["--format", "bundle"])
            .args(if needle == "--out F" {
                vec![]
            } else {
                vec![
                    "--out".to_string(),
                    a.dir.path().join("x").display().to_string(),
                ]
            })
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    // An existing file is replaced only with --force; a symlink never.
    let out = a
        .cmd()
        .args(["export", "--all", "--format", "bundle", "--out"])
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    let link = a.dir.path().join("link.fsynclab");
    std::os::unix::fs::symlink(&one, &link).unwrap();
    let before = std::fs::read(&one).unwrap();
    let out = a
        .cmd()
        .args(["export", "--all", "--format", "bundle", "--force", "--out"])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&one).unwrap(), before);
}

/// A copy of `bundle` changed with `sql` (run through sqlite3's own library, as an
/// attacker would).
fn tampered(lab: &Lab, bundle: &Path, name: &str, sql: &str) -> PathBuf {
    let path = lab.dir.path().join(name);
    std::fs::copy(bundle, &path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    path
}

/// Imports `file` into a fresh lab and expects exit 2 naming `needle`, nothing imported
/// and the file unchanged.
fn refused(file: &Path, needle: &str) {
    let lab = Lab::new();
    // Only a regular file is read here (opening a FIFO would wait for a writer).
    let regular = std::fs::symlink_metadata(file).is_ok_and(|m| m.is_file());
    let read = || regular.then(|| std::fs::read(file).unwrap());
    let bytes = read();
    let out = import(&lab, file);
    assert_eq!(out.status.code(), Some(2), "{needle}: {}", stderr(&out));
    assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    if lab.db.exists() {
        assert_eq!(run_count(&lab.db), 0, "{needle}");
    }
    assert_eq!(read(), bytes, "{needle}: the file was changed");
}

#[test]
fn a_newer_bundle_is_refused_untouched() {
    let a = Lab::new();
    seed(&a);
    let bundle = export(&a, &["--all"], "all.fsynclab");
    let newer = tampered(&a, &bundle, "newer.fsynclab", "PRAGMA user_version = 999;");
    refused(&newer, "newer fsynclab (schema 999");
}

#[test]
fn hostile_bundles_are_refused_by_name() {
    let a = Lab::new();
    seed(&a);
    let bundle = export(&a, &["--all"], "all.fsynclab");
    let cases = [
        (
            "CREATE TRIGGER evil AFTER INSERT ON runs BEGIN DELETE FROM experiments; END;",
            "a trigger named \"evil\"",
        ),
        ("CREATE VIEW v AS SELECT 1;", "a view named \"v\""),
        ("CREATE TABLE extra (x);", "a table named \"extra\""),
        (
            "DROP INDEX runs_by_uuid;",
            "index \"runs_by_uuid\" is missing",
        ),
        (
            "UPDATE runs SET wall_ns = 'soon' WHERE id = 1;",
            "runs.wall_ns (run 1",
        ),
        // A negative count is named by its column (it said "Integer -1 out of range at
        // index 17").
        (
            "UPDATE runs SET syncs = -1 WHERE id = 1;",
            "runs.syncs (run 1 in the bundle) is negative (-1)",
        ),
        (
            "UPDATE runs SET iops = -5 WHERE id = 2;",
            "runs.iops (run 2 in the bundle) is -5",
        ),
        (
            "UPDATE runs SET preset_scale = 1e300 WHERE id = 1;",
            "runs.preset_scale (run 1",
        ),
        (
            "UPDATE runs SET created_at_ms = 9223372036854775807 WHERE id = 1;",
            "a time after the year 9999",
        ),
        (
            "UPDATE runs SET spec_json = json_set(spec_json, '$.threads', 0) WHERE id = 1;",
            "is a workload no run can have made (threads 0",
        ),
        (
            "UPDATE runs SET uuid = 'not-a-uuid' WHERE id = 2;",
            "runs.uuid (run 2",
        ),
        (
            "DELETE FROM histograms WHERE run_id = 1;",
            "run 1 in the bundle cannot be read",
        ),
        (
            "UPDATE runs SET spec_json = '{' WHERE id = 2;",
            "run 2 in the bundle cannot be read",
        ),
        (
            "UPDATE histograms SET data = zeroblob(20000000) WHERE run_id = 1;",
            "holds a value larger than 16 MiB",
        ),
        ("PRAGMA user_version = 0;", "without fsynclab's schema"),
        // A workload no run can have made, in the settings issue 35 added with their checks.
        (
            "UPDATE runs SET spec_json = json_set(spec_json, '$.sync_only', json('true'), \
             '$.mode', 'sysbench', '$.requests', 100) WHERE id = 1;",
            "runs.spec_json (run 1",
        ),
        (
            "UPDATE runs SET spec_json = json_set(spec_json, '$.sync', \
             'sync_file_range+fdatasync', '$.ioengine', 'io_uring') WHERE id = 2;",
            "runs.spec_json (run 2",
        ),
    ];
    for (i, (sql, needle)) in cases.iter().enumerate() {
        let file = tampered(&a, &bundle, &format!("hostile-{i}.fsynclab"), sql);
        refused(&file, needle);
    }
    // Damaged pages: a page in the middle overwritten.
    let mut bytes = std::fs::read(&bundle).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid..mid + 4096].fill(0xA5);
    let damaged = a.dir.path().join("damaged.fsynclab");
    std::fs::write(&damaged, &bytes).unwrap();
    refused(&damaged, "damaged");
    // Cut short.
    let short = a.dir.path().join("short.fsynclab");
    std::fs::write(&short, &std::fs::read(&bundle).unwrap()[..200]).unwrap();
    refused(&short, "damaged");
    // A FIFO is refused by name, never opened (no hang).
    let fifo = a.dir.path().join("fifo.fsynclab");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    refused(&fifo, "FIFO");
    // A symlink to a good bundle is not followed.
    let link = a.dir.path().join("link.fsynclab");
    std::os::unix::fs::symlink(&bundle, &link).unwrap();
    refused(&link, "symbolic link");
}

#[test]
fn a_running_run_arrives_interrupted_without_the_exporters_paths() {
    let a = Lab::new();
    seed(&a);
    let bundle = export(&a, &["--all"], "all.fsynclab");
    let file = tampered(
        &a,
        &bundle,
        "running.fsynclab",
        "UPDATE runs SET status = 'running', owner_pid = 1, run_dir_name = 'fsynclab-1', \
         target = '/etc' WHERE id = 1; \
         UPDATE experiments SET name = 'x' || char(27) || ']0;owned' || char(7); \
         UPDATE runs SET preset = 'p' || char(27) || '[31m' || printf('%.100000c', 'x') \
         WHERE id = 2;",
    );
    let b = Lab::new();
    let out = import(&b, &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let conn = rusqlite::Connection::open(&b.db).unwrap();
    let (status, pid, dir): (String, Option<i64>, Option<String>) = conn
        .query_row(
            "SELECT status, owner_pid, run_dir_name FROM runs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(status, "interrupted");
    assert_eq!(pid, None);
    assert_eq!(dir, None);
    // An experiment's name arrives with its control characters escaped, as a label's.
    let names = b.experiment_names();
    assert!(!names.is_empty());
    for name in names {
        assert_eq!(name, "x\\u001b]0;owned\\u0007");
    }
    // A preset name is escaped and cut to a preset name's length.
    let preset: String = conn
        .query_row("SELECT preset FROM runs WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    assert!(
        preset.starts_with("p\\u001b[31mxxx") && preset.len() <= 64,
        "{preset}"
    );
    let listed = json_of(&b.cmd().args(["list", "--json"]).output().unwrap().stdout);
    // One versioned shape: {"schema_version", "runs": [...]} / {"schema_version", "run": {...}}.
    let listed = &listed["runs"];
    assert_eq!(listed.as_array().unwrap().len(), 3);
    // list --json and show --json (finished and not) print the same uuid.
    for row in listed.as_array().unwrap() {
        let id = row["id"].to_string();
        let shown = json_of(
            &b.cmd()
                .args(["show", &id, "--json"])
                .output()
                .unwrap()
                .stdout,
        );
        assert_eq!(shown["run"]["uuid"], row["uuid"], "run {id}");
        assert_eq!(row["uuid"].as_str().unwrap().len(), 36);
    }
}
