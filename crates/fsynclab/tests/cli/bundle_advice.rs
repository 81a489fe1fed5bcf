//! Stored advice in bundles (issue 35): it travels with the experiment of its runs, is
//! matched by uuid on a second import, keeps its experiment mapped, and a hostile one
//! (JSON that is not JSON, control characters in its target) is refused or cleaned.

use std::path::{Path, PathBuf};

use crate::common::Lab;
use fsynclab::analysis::{Advice, AdviceInputs, AdvicePoint};
use fsynclab::store::{NewAdvice, Store};

/// An advice whose one point cites `runs`.
fn advice_json(runs: &[i64]) -> String {
    let advice = Advice::build(AdviceInputs {
        target: "/mnt/x".into(),
        fs_type: Some("ext4".into()),
        quick: true,
        record_size: 4096,
        log: "preallocated".into(),
        writers: 16,
        points: vec![AdvicePoint {
            strategy: "solo".into(),
            writers: 16,
            commits_per_sec: vec![1000.0; runs.len()],
            p99_us: vec![900.0; runs.len()],
            run_ids: runs.to_vec(),
            ..AdvicePoint::default()
        }],
        ..AdviceInputs::default()
    });
    serde_json::to_string(&advice).unwrap()
}

/// Two runs in one experiment and an advice citing them stored beside them; the bundle of
/// `--all`, and the runs' ids in it.
fn seeded_bundle(lab: &Lab) -> PathBuf {
    seeded(lab).0
}

fn seeded(lab: &Lab) -> (PathBuf, Vec<i64>) {
    let doc = lab.run_doc(&["--file-size", "128k", "--repeat", "2", "--label", "adv"]);
    let experiment = doc["experiments"][0]["experiment_id"].as_i64().unwrap();
    let runs: Vec<i64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let store = Store::open(&lab.db).unwrap();
    store
        .save_advice(&NewAdvice {
            experiment_id: Some(experiment),
            target: "/mnt/x",
            fs_type: Some("ext4"),
            inputs_json: r#"{"quick":true}"#,
            advice_json: &advice_json(&runs),
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
    (path, runs)
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
    let stored: serde_json::Value = serde_json::from_str(&advice[0].advice_json).unwrap();
    assert_eq!(stored["target"], "/mnt/x");
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

/// The advice's run ids are the importing database's: the same runs, whatever ids they had
/// where they were exported; an advice citing a run the bundle does not hold, or that is not
/// an advice this build reads, is refused with nothing imported.
#[test]
fn imported_advice_cites_the_runs_it_came_with() {
    let a = Lab::new();
    let (bundle, runs) = seeded(&a);
    let b = Lab::new();
    // Three runs of b's own first: the bundle's runs get other ids here.
    b.run_doc(&["--file-size", "128k", "--repeat", "3", "--label", "mine"]);
    let out = import(&b, &bundle);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&b.db).unwrap();
    let advice = &store.list_advice().unwrap()[0];
    let json: serde_json::Value = serde_json::from_str(&advice.advice_json).unwrap();
    let cited: Vec<i64> = json["points"][0]["run_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let experiment = advice.experiment_id.unwrap();
    let mut theirs = store.run_ids_in_experiment(experiment).unwrap();
    theirs.sort_unstable();
    assert_eq!(cited, theirs, "exported as {runs:?}");
    assert!(
        cited.iter().all(|id| !runs.contains(id)),
        "{cited:?} vs {runs:?}"
    );
    drop(store);

    let tamper = |name: &str, sql: &str| {
        let path = a.dir.path().join(name);
        std::fs::copy(&bundle, &path).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
        path
    };
    let missing = advice_json(&[runs[0], 999]);
    for (name, sql, said) in [
        (
            "gone.fsynclab",
            format!("UPDATE advice SET advice_json = '{missing}';"),
            "cites run 999, which the bundle does not hold",
        ),
        (
            "empty.fsynclab",
            "UPDATE advice SET advice_json = '{}';".to_string(),
            "is not an advice this build reads",
        ),
        (
            "writers.fsynclab",
            "UPDATE advice SET advice_json = json_set(advice_json, '$.writers', -1);".to_string(),
            "advice 1 in the bundle",
        ),
    ] {
        let c = Lab::new();
        let out = import(&c, &tamper(name, &sql));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(said), "{name}: {err}");
        if c.db.exists() {
            let store = Store::open(&c.db).unwrap();
            assert!(store.list_advice().unwrap().is_empty(), "{name}");
            let runs = store.list_runs(&Default::default()).unwrap();
            assert!(runs.is_empty(), "{name}");
        }
    }
}
