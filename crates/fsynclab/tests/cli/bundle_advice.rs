//! Stored advice in bundles (issue 35): it travels with the experiment of its runs, is
//! matched by uuid on a second import, keeps its experiment mapped, and a hostile one
//! (JSON that is not JSON, control characters in its target) is refused or cleaned.

use std::path::{Path, PathBuf};

use crate::common::Lab;
use fsynclab::store::{NewAdvice, Store};

/// Two runs in one experiment and an advice stored beside them; the bundle of `--all`.
fn seeded_bundle(lab: &Lab) -> PathBuf {
    let doc = lab.run_doc(&["--file-size", "128k", "--repeat", "2", "--label", "adv"]);
    let experiment = doc["experiments"][0]["experiment_id"].as_i64().unwrap();
    let store = Store::open(&lab.db).unwrap();
    store
        .save_advice(&NewAdvice {
            experiment_id: Some(experiment),
            target: "/mnt/x",
            fs_type: Some("ext4"),
            inputs_json: r#"{"quick":true}"#,
            advice_json: r#"{"target":"/mnt/x","writers":16}"#,
        })
        .unwrap();
    drop(store);
    let path = lab.dir.path().join("all.fsynclab");
    let out = lab
        .cmd()
        .args(["export", "--all", "--format", "bundle", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

fn import(lab: &Lab, file: &Path) -> std::process::Output {
    lab.cmd().arg("import").arg(file).output().unwrap()
}

#[test]
fn advice_travels_with_its_experiment_once() {
    let a = Lab::new();
    let bundle = seeded_bundle(&a);
    let b = Lab::new();
    let out = import(&b, &bundle);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("stored advice 1"), "{said}");
    let store = Store::open(&b.db).unwrap();
    let advice = store.list_advice().unwrap();
    assert_eq!(advice.len(), 1);
    let experiment = advice[0].experiment_id.expect("experiment mapped");
    assert_eq!(store.run_ids_in_experiment(experiment).unwrap().len(), 2);
    assert_eq!(advice[0].advice_json, r#"{"target":"/mnt/x","writers":16}"#);
    drop(store);
    // Again: nothing new.
    let again = import(&b, &bundle);
    assert!(again.status.success());
    assert_eq!(Store::open(&b.db).unwrap().list_advice().unwrap().len(), 1);
}

#[test]
fn hostile_advice_in_a_bundle_is_refused_or_cleaned() {
    let a = Lab::new();
    let bundle = seeded_bundle(&a);
    let tamper = |name: &str, sql: &str| {
        let path = a.dir.path().join(name);
        std::fs::copy(&bundle, &path).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
        path
    };
    let not_json = tamper(
        "bad.fsynclab",
        "UPDATE advice SET advice_json = 'not json';",
    );
    let b = Lab::new();
    let out = import(&b, &not_json);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("advice") && err.contains("is not JSON"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Nothing of it was imported: one transaction.
    if b.db.exists() {
        assert!(
            Store::open(&b.db)
                .unwrap()
                .list_advice()
                .unwrap()
                .is_empty()
        );
    }
    let escaped = tamper(
        "esc.fsynclab",
        "UPDATE advice SET target = '/mnt/' || char(27) || '[31mred';",
    );
    let c = Lab::new();
    assert!(import(&c, &escaped).status.success());
    let stored = Store::open(&c.db).unwrap().list_advice().unwrap();
    assert_eq!(stored[0].target, "/mnt/\\u001b[31mred");
}
