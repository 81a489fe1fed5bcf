//! Every workload kind is wired to the command line and to presets (issue 32, steps 1–2):
//! [`case`] is an exhaustive `match` over [`WorkloadKind`], so a kind added to the enum does
//! not compile until it says here how it runs; the tests then run each kind with `--kind`
//! and one of its own settings by its key (`--set`), and from a preset file, and check the
//! stored spec and its one-line description. (The window's rows for each kind are checked
//! by the window tests; step 1 moves them into the kind's table.)

use fsynclab::spec::WorkloadKind;

use crate::common::{Lab, json_of};

/// How a kind runs briefly, and one setting of its own with what the description says of it.
struct Case {
    /// Flags that keep the run short.
    flags: &'static [&'static str],
    /// The preset key that keeps a preset's run short (checked when the preset is read).
    preset_stop: &'static str,
    /// A setting of this kind, by its preset / `--set` key.
    key: &'static str,
    /// The value given (as `--set` takes it; a size as in a preset).
    value: &'static str,
    /// The value as the stored spec's JSON holds it.
    stored: serde_json::Value,
    /// What the one-line description then says.
    described: &'static str,
}

/// Every kind, by name: the registry's and the imported one, the list the tests walk.
fn kinds() -> Vec<&'static str> {
    let mut names: Vec<&str> = fsynclab::spec::KINDS
        .iter()
        .map(|k| k.kind.as_str())
        .collect();
    names.push("fio");
    names
}

/// The case of `kind`; `None` for a kind fsynclab does not run (imported results).
fn case(kind: WorkloadKind) -> Option<Case> {
    use serde_json::json;
    match kind {
        WorkloadKind::Fileio => Some(Case {
            flags: &["--requests", "16", "--file-size", "64k"],
            preset_stop: "requests = 16",
            key: "block_size",
            value: "8192",
            stored: json!(8192),
            described: "8k random writes",
        }),
        WorkloadKind::Smallfiles => Some(Case {
            flags: &["--threads", "1"],
            preset_stop: "threads = 1",
            key: "smallfiles.files_per_thread",
            value: "6",
            stored: json!(6),
            described: "6 files/thread",
        }),
        WorkloadKind::Fileserver => Some(Case {
            flags: &["--clients", "1", "--duration", "0.1"],
            preset_stop: "duration_s = 0.1",
            key: "fileserver.files_per_client",
            value: "5",
            stored: json!(5),
            described: "5 files each",
        }),
        WorkloadKind::Grouplog => Some(Case {
            flags: &["--threads", "2", "--requests", "16"],
            preset_stop: "requests = 16",
            key: "grouplog.record_size",
            value: "8192",
            stored: json!(8192),
            described: "8k records",
        }),
        WorkloadKind::Append => Some(Case {
            // 4k records in 8k segments: a segment switch every second record.
            flags: &["--threads", "2", "--requests", "40", "--sync-every", "4"],
            preset_stop: "requests = 40",
            key: "append.segment_size",
            value: "8192",
            stored: json!(8192),
            described: "8k segments",
        }),
        WorkloadKind::Fio => None,
    }
}

fn kind(name: &str) -> WorkloadKind {
    serde_json::from_value(serde_json::json!(name)).unwrap()
}

/// The stored `workload` of the run `run --json` printed.
fn run_workload(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)["runs"][0]["workload"].clone()
}

/// The value at a dotted key of a spec's JSON.
fn at<'a>(spec: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    spec.pointer(&format!("/{}", key.replace('.', "/")))
        .unwrap_or_else(|| panic!("no {key} in {spec}"))
}

#[test]
fn every_kind_is_listed() {
    for name in kinds() {
        assert_eq!(kind(name).as_str(), name);
    }
    // Every kind the registry has: `fsynclab run --kind` names them all in its refusal.
    let lab = Lab::new();
    let out = lab.cmd().args(["run", "--kind", "nope"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    for name in kinds().into_iter().filter(|n| case(kind(n)).is_some()) {
        assert!(said.contains(name), "{name} not offered: {said}");
    }
}

#[test]
fn every_runnable_kind_runs_from_flags_and_its_own_setting() {
    let lab = Lab::new();
    for name in kinds() {
        let Some(c) = case(kind(name)) else { continue };
        let set = format!("{}={}", c.key, c.value);
        let out = lab
            .cmd()
            .args(["run", "--json", "--quiet", "--kind", name, "--set", &set])
            .args(c.flags)
            .arg("--target")
            .arg(&lab.target)
            .output()
            .unwrap();
        let spec = run_workload(&out);
        assert_eq!(spec["kind"], name);
        assert_eq!(at(&spec, c.key), &c.stored, "{name}");
        let id = json_of(&out.stdout)["runs"][0]["id"].to_string();
        let shown = lab.cmd().args(["show", &id]).output().unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains(c.described), "{name}: {shown}");
    }
}

#[test]
fn every_runnable_kind_round_trips_through_a_preset_file() {
    let lab = Lab::new();
    for name in kinds() {
        let Some(c) = case(kind(name)) else { continue };
        let (table, field) = match c.key.split_once('.') {
            Some((table, field)) => (format!("[workload.{table}]\n"), field),
            None => (String::new(), c.key),
        };
        let text = format!(
            "name = \"wired-{name}\"\ntitle = \"a {name} run\"\ndescription = \"d\"\n\n[workload]\nkind = \"{name}\"\n\
             settle = false\n{}\n{table}{field} = {}\n\n[scale]\nfields = [\"requests\"]\nquick = 0.5\n",
            c.preset_stop, c.value
        );
        let path = lab.dir.path().join(format!("wired-{name}.toml"));
        std::fs::write(&path, text).unwrap();
        let out = lab
            .cmd()
            .args(["run", "--json", "--quiet", "--preset"])
            .arg(&path)
            .args(c.flags)
            .arg("--target")
            .arg(&lab.target)
            .output()
            .unwrap();
        let spec = run_workload(&out);
        assert_eq!(spec["kind"], name);
        assert_eq!(at(&spec, c.key), &c.stored, "{name}");
        // An unknown key in the kind's table is still refused, naming it.
        let bad = format!(
            "name = \"bad\"\ntitle = \"t\"\ndescription = \"d\"\n\n[workload]\nkind = \"{name}\"\n[workload.{name}]\nnope = 1\n\n[scale]\nfields = [\"requests\"]\nquick = 0.5\n"
        );
        let path = lab.dir.path().join(format!("bad-{name}.toml"));
        std::fs::write(&path, bad).unwrap();
        let out = lab
            .cmd()
            .args(["run", "--preset"])
            .arg(&path)
            .arg("--target")
            .arg(&lab.target)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("unknown field") || said.contains("nope"),
            "{name}: {said}"
        );
    }
}

/// A valid value of a row's type, to give its flag.
fn sample(def: &fsynclab::spec::SettingDef) -> Option<&'static str> {
    use fsynclab::spec::Ty;
    match def.ty.inner() {
        Ty::Flag => None,
        Ty::Count { .. } => Some("2"),
        Ty::Size { .. } => Some("8k"),
        Ty::Seconds { .. } => Some("1"),
        Ty::Choice(names) => names.last().copied(),
        Ty::FlagSet(names) => names.first().copied(),
        Ty::Text(_) => Some("solo"),
        Ty::Optional(_) => unreachable!("inner"),
    }
}

/// A flag of a setting the chosen kind does not have is never silently ignored: it is
/// refused (exit 2) naming the flag, by the kind check or by the spec's own advice.
#[test]
fn a_flag_of_another_kinds_setting_is_refused_by_name() {
    let lab = Lab::new();
    for table in fsynclab::spec::KINDS {
        let name = table.kind.as_str();
        for def in fsynclab::spec::all_settings() {
            let Some(flag) = def.flag else { continue };
            let own = table.by_flag(flag).is_some()
                || fsynclab::spec::all_settings()
                    .iter()
                    .filter(|d| d.flag == Some(flag))
                    .any(|d| table.setting(d.key).is_some());
            if own || flag == "settle" {
                continue;
            }
            let mut args = vec!["run".to_string(), "--kind".into(), name.into()];
            args.push(format!("--{flag}"));
            args.extend(sample(def).map(str::to_string));
            args.extend(["--duration".into(), "1".into()]);
            let out = lab
                .cmd()
                .args(&args)
                .arg("--target")
                .arg(&lab.target)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
            assert!(said.contains(&format!("--{flag}")), "{args:?}: {said}");
        }
    }
    assert!(lab.target_entries().is_empty(), "nothing ran");
}

/// `--set` of another kind's setting is refused as its flag is; choosing the kind first
/// (`--set kind=...` before it) makes it the run's own.
#[test]
fn a_set_of_another_kinds_setting_is_refused() {
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args(["run", "--set", "grouplog.strategy=solo", "--requests", "8"])
        .arg("--target")
        .arg(&lab.target)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--set grouplog.strategy: a setting of grouplog runs, not of fileio runs"),
        "{said}"
    );
    let out = lab
        .cmd()
        .args([
            "run",
            "--json",
            "--quiet",
            "--set",
            "kind=grouplog",
            "--set",
            "grouplog.strategy=solo",
        ])
        .args(["--requests", "8", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(at(&run_workload(&out), "grouplog.strategy"), "solo");
    assert!(lab.target_entries().is_empty());
}
