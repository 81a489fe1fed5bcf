//! What the release before issue 32's step 1 (kinds in one place) stored keeps its meaning:
//! `tests/fixtures/pre-kinds/` holds a database of schema version 10 and its bundle, made by
//! main 02b12cb (`record.sh`: one run of each workload shape, each built-in preset, a fio
//! import and a run with fields its kind does not read), with what that release printed for
//! `list`, `list --json` and `show ID`. Today's fsynclab prints the same, from the database
//! and from the bundle imported into a fresh one, and reads every stored spec back to the
//! same JSON but for the settings of other kinds than the run's, which read at their
//! defaults (the typed spec keeps its kind's only; they never had an effect).

use std::path::{Path, PathBuf};

use crate::cli_warnings::{fsynclab, sql};
use crate::common::{Lab, json_of};

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/pre-kinds")
        .join(name)
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(fixture("expected").join(name)).unwrap()
}

fn text(db: &Path, args: &[&str]) -> String {
    String::from_utf8(fsynclab(db, args, None)).unwrap()
}

/// `list`, `list --json` and every `show ID` of `db` as the release before printed them;
/// every stored spec reads back to the JSON stored, another kind's settings at defaults.
fn assert_as_recorded(db: &Path) {
    assert_eq!(text(db, &["list"]), expected("list.txt"));
    let mut listed = json_of(&fsynclab(db, &["list", "--json"], None));
    // The one key added since (docs/EXPORT.md): the failure's code beside its sentence.
    for row in listed["runs"].as_array_mut().unwrap() {
        let code = row.as_object_mut().unwrap().remove("error_code");
        assert_eq!(code, Some(serde_json::Value::Null), "no run here failed");
    }
    let recorded: serde_json::Value = serde_json::from_str(&expected("list.json")).unwrap();
    assert_eq!(listed, recorded);
    let ids = recorded["runs"].as_array().unwrap();
    assert_eq!(ids.len(), 20, "one run of each shape, preset and import");
    let mut normalized = 0;
    for run in ids {
        let id = run["id"].to_string();
        // The lines added since: the SHORT RUN and BUSY MACHINE notes, derived from the
        // stored figures (docs/STATISTICS.md, "Noise guard").
        let shown: String = text(db, &["show", &id])
            .lines()
            .filter(|l| {
                !l.starts_with("short     SHORT RUN: ")
                    && !l.starts_with("busy      BUSY MACHINE: ")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(shown, expected(&format!("show-{id}.txt")), "show {id}");
        let shown = json_of(&fsynclab(db, &["show", "--json", &id], None));
        let stored = sql(db, &format!("SELECT spec_json FROM runs WHERE id = {id}"));
        let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
        normalized += same_but_other_kinds(&shown["run"]["workload"], &stored, &id);
    }
    // The grouplog run given fileio's --bs 8k --pattern seq.
    assert_eq!(normalized, 2, "block_size and pattern of run 9");
}

/// The spec read back is the one stored, but for the settings of other kinds than its own:
/// the typed spec keeps its kind's settings only, so those read at their defaults (they never
/// had an effect). The number of such settings.
fn same_but_other_kinds(shown: &serde_json::Value, stored: &serde_json::Value, id: &str) -> usize {
    let kind: fsynclab::spec::WorkloadKind =
        serde_json::from_value(stored["kind"].clone()).unwrap();
    // An imported fio run keeps fileio's settings.
    let table = fsynclab::spec::kind_def(kind).unwrap_or(fsynclab::spec::KINDS[0]);
    let defaults = fsynclab::spec::FlatSpec::default().full_json();
    let mut other = 0;
    for def in fsynclab::spec::all_settings() {
        let pointer = format!("/{}", def.key.replace('.', "/"));
        // Equal, or added since that release (checked below).
        if shown.pointer(&pointer) == stored.pointer(&pointer) || stored.pointer(&pointer).is_none()
        {
            continue;
        }
        assert!(
            table.setting(def.key).is_none(),
            "run {id}: its own setting {} changed",
            def.key
        );
        assert_eq!(
            shown.pointer(&pointer),
            defaults.pointer(&pointer),
            "run {id}"
        );
        other += 1;
    }
    // Nothing else differs: with those keys set back, the JSON is the stored JSON. A
    // setting added since that release (smallfiles' dir_sync and rename_over) reads at its
    // default and is left out.
    let mut back = shown.clone();
    for def in fsynclab::spec::all_settings() {
        let pointer = format!("/{}", def.key.replace('.', "/"));
        match (back.pointer_mut(&pointer), stored.pointer(&pointer)) {
            (Some(slot), Some(was)) => *slot = was.clone(),
            (Some(slot), None) => {
                assert_eq!(
                    Some(&*slot),
                    defaults.pointer(&pointer),
                    "run {id}: {pointer}"
                );
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                let parent = if parent.is_empty() {
                    Some(&mut back)
                } else {
                    back.pointer_mut(parent)
                };
                parent.and_then(|p| p.as_object_mut()).unwrap().remove(key);
            }
            _ => {}
        }
    }
    assert_eq!(&back, stored, "run {id}'s spec");
    other
}

#[test]
fn runs_stored_by_the_release_before_show_as_they_did() {
    let lab = Lab::new();
    let db = lab.dir.path().join("v10.sqlite");
    std::fs::copy(fixture("runs-v10.sqlite"), &db).unwrap();
    assert_as_recorded(&db);
}

#[test]
fn a_bundle_of_the_release_before_imports_to_the_same_runs() {
    let lab = Lab::new();
    fsynclab(&lab.db, &["import"], Some(&fixture("runs-v10.fsynclab")));
    assert_as_recorded(&lab.db);
}
