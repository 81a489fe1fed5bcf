//! docs/SCHEMA.md stays true: every column of the real schema is described there (with the
//! migration that added it), and its ten worked queries run on a real database — real
//! `fsynclab run`s on a disk directory and on tmpfs, repeats under two labels, a sweep, a
//! timed run, a cancelled and an interrupted run (and as root a failed one), an `import` of
//! a real fio result — returning the columns the page shows and plausible values. The
//! page's Python histogram decoder and the `sqlite3` shell are run against it too.

use crate::common;
use crate::schema_doc_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Lab;
use crate::schema_doc_common::{check, int, query};
use rusqlite::{Connection, OpenFlags};

fn doc() -> String {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("docs/SCHEMA.md");
    std::fs::read_to_string(path).expect("docs/SCHEMA.md")
}

/// The fenced blocks of `doc`: (info string, body).
fn fenced_blocks(doc: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        blocks.push((info.trim().to_string(), body.join("\n") + "\n"));
    }
    blocks
}

/// Each ```sql block with the column names of the ```text output block that follows it.
fn worked_queries(doc: &str) -> Vec<(String, Vec<String>)> {
    let blocks = fenced_blocks(doc);
    let mut queries = Vec::new();
    for (i, (info, body)) in blocks.iter().enumerate() {
        if info != "sql" {
            continue;
        }
        let header = match blocks.get(i + 1) {
            Some((next, output)) if next == "text" => output
                .lines()
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(String::from)
                .collect(),
            _ => panic!(
                "query {} has no ```text output block after it",
                queries.len() + 1
            ),
        };
        queries.push((body.clone(), header));
    }
    queries
}

fn read_only(db: &Path) -> Connection {
    let uri = format!("file:{}?mode=ro", db.display());
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .expect("open the database read-only")
}

/// The doc's section of table `table`: from `### \`table\`` to the next heading.
fn table_section<'a>(doc: &'a str, table: &str) -> &'a str {
    let heading = format!("\n### `{table}`\n");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/SCHEMA.md has no section {heading:?}"))
        + heading.len();
    let rest = &doc[start..];
    let end = ["\n### ", "\n## "]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Migration number (`0004`) that created each table and added each column, read from
/// crates/store/src/store/migrations/*.sql.
fn migration_of_columns() -> (BTreeMap<String, String>, BTreeMap<(String, String), String>) {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("crates/store/src/store/migrations");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    let (mut created, mut added) = (BTreeMap::new(), BTreeMap::new());
    for file in files {
        let number = file.file_name().unwrap().to_string_lossy()[..4].to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let code: String = text
            .lines()
            .map(|l| l.split("--").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ");
        for statement in code.split(';') {
            let words: Vec<&str> = statement.split_whitespace().collect();
            match words.as_slice() {
                ["CREATE", "TABLE", table, ..] => {
                    created.entry(table.to_string()).or_insert(number.clone());
                }
                ["ALTER", "TABLE", table, "ADD", "COLUMN", column, ..] => {
                    added
                        .entry((table.to_string(), column.to_string()))
                        .or_insert(number.clone());
                }
                _ => {}
            }
        }
    }
    (created, added)
}

#[test]
fn every_column_of_the_schema_is_described_with_its_migration() {
    let lab = Lab::new();
    common::create_db(&lab);
    let conn = read_only(&lab.db);
    let doc = doc();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(
        doc.contains(&format!("schema version {version} (`PRAGMA user_version`)")),
        "docs/SCHEMA.md must describe schema version {version}"
    );
    let (created, added) = migration_of_columns();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(tables.len() >= 6, "{tables:?}");
    let mut described = 0;
    for table in &tables {
        let section = table_section(&doc, table);
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for column in &columns {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| `{column}` |")))
                .unwrap_or_else(|| {
                    panic!(
                        "docs/SCHEMA.md: column {table}.{column} is not in the table of `{table}`"
                    )
                });
            let migration = added
                .get(&(table.clone(), column.clone()))
                .or_else(|| created.get(table))
                .unwrap_or_else(|| panic!("no migration creates {table}"));
            assert!(
                row.contains(&format!("| {migration} |")),
                "docs/SCHEMA.md: {table}.{column} was added by migration {migration}: {row}"
            );
            described += 1;
        }
        // And nothing is described that does not exist.
        for line in section.lines().filter(|l| l.starts_with("| `")) {
            let name = line[3..].split('`').next().unwrap();
            assert!(
                columns.iter().any(|c| c == name),
                "docs/SCHEMA.md describes {table}.{name}, which the schema does not have"
            );
        }
    }
    assert!(described > 60, "{described} columns");
}

/// `fsynclab --db DB <args>` that must succeed.
fn ok(lab: &Lab, args: &[&str], target: Option<&Path>) {
    let mut cmd = lab.cmd();
    cmd.args(args);
    if let Some(target) = target {
        cmd.arg("--target").arg(target);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "fsynclab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts a long run and returns once it has streamed progress.
fn start_long_run(lab: &Lab, target: &Path, label: &str) -> Child {
    let mut child = lab.spawn_run(
        target,
        &[
            "--threads",
            "1",
            "--bs",
            "4k",
            "--file-size",
            "1M",
            "--sync",
            "fsync",
            "--duration",
            "30",
            "--label",
            label,
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let progress: Option<i64> = read_only(&lab.db)
            .query_row(
                "SELECT max(progress_writes) FROM runs WHERE status = 'running' AND label = ?1",
                [label],
                |r| r.get(0),
            )
            .ok()
            .flatten();
        if progress.is_some_and(|w| w > 0) {
            return child;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the {label} run streamed no progress");
        }
    }
}

/// The lab the queries run on. Returns whether a failed run was made (root only).
fn build(lab: &Lab, disk: &Path, tmpfs: &Path) -> bool {
    let preset = [
        "run",
        "--quiet",
        "--preset",
        "btrfs-log-commit",
        "--scale",
        "0.002",
    ];
    let before = [&preset[..], &["--repeat", "3", "--label", "before"]].concat();
    ok(
        lab,
        &[&before[..], &["--tag", "baseline", "--tag", "disk"]].concat(),
        Some(disk),
    );
    let after = [&preset[..], &["--repeat", "3", "--label", "after"]].concat();
    ok(
        lab,
        &[&after[..], &["--set", "sync=fdatasync"]].concat(),
        Some(disk),
    );
    let on_tmpfs = [&preset[..], &["--repeat", "2", "--label", "tmpfs"]].concat();
    ok(
        lab,
        &[&on_tmpfs[..], &["--tag", "tmpfs"]].concat(),
        Some(tmpfs),
    );
    ok(
        lab,
        &[
            "run",
            "--quiet",
            "--file-size",
            "256k",
            "--sync",
            "fdatasync",
            "--sweep",
            "threads=1,2,4",
            "--repeat",
            "2",
            "--label",
            "sweep",
            "--tag",
            "baseline",
            "--tag",
            "sweep",
        ],
        Some(disk),
    );
    ok(
        lab,
        &[
            "run",
            "--quiet",
            "--threads",
            "3",
            "--file-size",
            "1M",
            "--sync",
            "fsync",
            "--duration",
            "1.2",
            "--label",
            "timed",
        ],
        Some(disk),
    );
    // From the crate's directory, so the experiment is named as the page shows it.
    let out = lab
        .cmd()
        .args(["import", "tests/fixtures/fio/A-ext4.out"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    unfinished_runs(lab, disk)
}

/// A cancelled and an interrupted run, and as root a failed one: returns whether it made
/// the failed one.
fn unfinished_runs(lab: &Lab, disk: &Path) -> bool {
    // Cancelled: SIGINT, stored with what it measured (exit 130).
    let child = start_long_run(lab, disk, "cancel-me");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    // Interrupted: SIGKILL; the next fsynclab marks it, `clean` removes its directory.
    let mut child = start_long_run(lab, disk, "kill-me");
    child.kill().unwrap();
    child.wait().unwrap();
    {
        let _sweeps = crate::clean_lock();
        ok(lab, &["clean"], None);
    }

    let failed = common::require_root(
        "the_worked_queries_run_on_a_real_database (its failed run)",
        "fills a 1 MiB tmpfs",
    );
    if failed {
        let small = common::TmpfsMount::new("size=1m");
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--threads", "1", "--file-size", "4M"])
            .args(["--sync", "none", "--label", "full", "--target"])
            .arg(&small.path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "a failed run exits 1");
    }
    failed
}

/// The page's Python decoder (when python3 is there; CI installs it): its percentiles are
/// the stored ones.
fn check_python_recipe(lab: &Lab, conn: &Connection, doc: &str) {
    if Command::new("python3").arg("--version").output().is_err() {
        common::skip_or_fail("the Python histogram recipe", "needs python3");
        return;
    }
    let script = fenced_blocks(doc)
        .into_iter()
        .find(|(info, _)| info == "python")
        .expect("a ```python block")
        .1;
    let path = lab.dir.path().join("hist.py");
    std::fs::write(&path, script).unwrap();
    let sql = "SELECT id, writes, syncs, write_p50_ns, write_p99_ns, sync_p50_ns, sync_p99_ns \
               FROM runs WHERE status = 'finished' AND kind <> 'fio'";
    let runs = query(conn, sql).1;
    assert!(runs.len() >= 15);
    for run in runs.iter().step_by(4) {
        for name in ["write", "sync"] {
            let out = Command::new("python3")
                .arg(&path)
                .arg(&lab.db)
                .arg(int(run, "id").to_string())
                .arg(name)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let printed: BTreeMap<String, i64> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
                .collect();
            let count = if name == "write" { "writes" } else { "syncs" };
            assert_eq!(printed["count"], int(run, count), "{name} of {run:?}");
            assert_eq!(printed["p50_ns"], int(run, &format!("{name}_p50_ns")));
            assert_eq!(printed["p99_ns"], int(run, &format!("{name}_p99_ns")));
        }
    }
}

/// The queries through the `sqlite3` shell, read-only (when it is there; CI installs it).
fn check_sqlite3_shell(db: &Path, queries: &[(String, Vec<String>)], rows: &[usize]) {
    if Command::new("sqlite3").arg("--version").output().is_err() {
        common::skip_or_fail(
            "the sqlite3 shell check",
            "needs sqlite3 (apt-get install sqlite3)",
        );
        return;
    }
    for ((sql, header), expected_rows) in queries.iter().zip(rows) {
        let mut child = Command::new("sqlite3")
            .args(["-readonly", "-header", "-csv"])
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(sql.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}: {sql}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = stdout.lines();
        assert_eq!(lines.next().unwrap_or_default(), header.join(","), "{sql}");
        assert_eq!(lines.count(), *expected_rows, "{sql}");
    }
}

#[test]
fn the_worked_queries_run_on_a_real_database() {
    let lab = Lab::new();
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tmpfs = tempfile::tempdir_in("/dev/shm").expect("a private directory in /dev/shm (tmpfs)");
    let failed_run = build(&lab, disk.path(), tmpfs.path());
    assert!(
        common::entries(disk.path()).is_empty(),
        "no run left files behind"
    );
    let flushes: Option<i64> = read_only(&lab.db)
        .query_row(
            "SELECT min(device_flushes) FROM runs WHERE label = 'before'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        flushes.is_some(),
        "the queries need device flush counts: CARGO_TARGET_TMPDIR ({}) must be on a block device",
        env!("CARGO_TARGET_TMPDIR")
    );
    // FSYNCLAB_SCHEMA_DOC_DB=PATH keeps a copy (the page's sample output comes from one).
    if let Ok(keep) = std::env::var("FSYNCLAB_SCHEMA_DOC_DB") {
        let _ = std::fs::remove_file(&keep);
        Connection::open(&lab.db)
            .unwrap()
            .execute("VACUUM INTO ?1", [&keep])
            .unwrap();
    }

    let doc = doc();
    let queries = worked_queries(&doc);
    assert_eq!(queries.len(), 10, "docs/SCHEMA.md has ten worked queries");
    let conn = read_only(&lab.db);
    let mut counts = Vec::new();
    for (n, (sql, header)) in queries.iter().enumerate() {
        let (names, rows) = query(&conn, sql);
        assert_eq!(
            &names,
            header,
            "query {}: the columns the page shows",
            n + 1
        );
        assert!(!rows.is_empty(), "query {} returned no rows: {sql}", n + 1);
        check(
            n + 1,
            &schema_doc_common::Lab {
                conn: &conn,
                failed_run,
            },
            &rows,
        );
        counts.push(rows.len());
    }
    check_python_recipe(&lab, &conn, &doc);
    check_sqlite3_shell(&lab.db, &queries, &counts);
}
