//! The settings tables are true: every workload setting has its row, every row's key is a
//! key of the spec, its default is the spec's default and its range is the range the checks
//! accept.

use super::def::{SettingDef, Ty};
use super::{KINDS, all_settings};
use crate::spec::{FlatSpec, Setting, WorkloadKind, WorkloadSpec, set_value};

#[test]
fn every_workload_setting_has_its_row_and_a_unique_stored_name() {
    for s in Setting::all().iter().filter(|s| s.is_workload_field()) {
        let def = s.def().unwrap_or_else(|| panic!("{s:?} has no row"));
        assert_eq!(def.key, s.key(), "{s:?}");
        let wire = serde_json::to_value(s).unwrap();
        assert_eq!(wire.as_str(), Some(def.wire), "{s:?}: stored name");
    }
    let mut wires: Vec<_> = all_settings().iter().map(|d| d.wire).collect();
    let n = wires.len();
    wires.sort();
    wires.dedup();
    assert_eq!(wires.len(), n, "stored names are unique");
}

#[test]
fn every_kind_but_fio_has_a_table_and_each_key_once() {
    for kind in [
        WorkloadKind::Fileio,
        WorkloadKind::Smallfiles,
        WorkloadKind::Fileserver,
        WorkloadKind::Grouplog,
    ] {
        let def = super::kind_def(kind).unwrap_or_else(|| panic!("{kind:?}"));
        let mut keys: Vec<_> = def.settings.iter().map(|d| d.key).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "{kind:?} lists a key twice");
        let mut flags: Vec<_> = def.settings.iter().filter_map(|d| d.flag).collect();
        let n = flags.len();
        flags.sort();
        flags.dedup();
        assert_eq!(flags.len(), n, "{kind:?}: one flag for two of its settings");
    }
    assert!(super::kind_def(WorkloadKind::Fio).is_none());
}

/// The spec's value at a dotted key, every kind's table included (absent: `None`).
fn value_at(spec: &WorkloadSpec, key: &str) -> Option<serde_json::Value> {
    let json = spec.full_json();
    json.pointer(&format!("/{}", key.replace('.', "/")))
        .filter(|v| !v.is_null())
        .cloned()
}

#[test]
fn every_key_is_a_key_of_the_spec_and_its_default_the_specs() {
    for kind in KINDS {
        let spec = FlatSpec {
            kind: kind.kind,
            ..FlatSpec::default()
        }
        .typed();
        for def in kind.settings {
            if def.default.is_empty() {
                assert!(
                    matches!(def.ty, Ty::Optional(_)),
                    "{}: only an optional setting has no default",
                    def.key
                );
                assert!(value_at(&spec, def.key).is_none(), "{} is set", def.key);
                continue;
            }
            // The io_uring settings and `sync_only` are left out of the stored JSON at their
            // defaults, so a spec stored before they existed reads (and hashes) the same.
            let omitted = def.section == super::def::Section::Engine || def.key == "sync_only";
            assert!(
                omitted || value_at(&spec, def.key).is_some(),
                "{} is no key",
                def.key
            );
            let set = set_value(&spec, def, def.default)
                .unwrap_or_else(|e| panic!("{} = {}: {e}", def.key, def.default));
            assert_eq!(
                set, spec,
                "{}: the default {} is not the spec's",
                def.key, def.default
            );
        }
    }
}

/// A spec of `kind` that every bound of the table can be tried on: the smallest sizes, a
/// stop rule, io_uring on (so its settings are checked as such).
fn base(kind: WorkloadKind, def: &SettingDef) -> WorkloadSpec {
    let mut spec = FlatSpec {
        kind,
        ..FlatSpec::default()
    }
    .typed();
    // The smallest write, so every size above it fits (a file, a log, a segment).
    if let Some(unit) = super::kind_def(kind).and_then(|t| t.write_unit)
        && let Ty::Size { min, .. } = unit.ty
    {
        spec = set_value(&spec, unit, &min.to_string()).unwrap();
    }
    if def.section == super::def::Section::Engine {
        spec.edit(|f| f.ioengine = crate::spec::IoEngine::IoUring);
    }
    let own_stop = super::kind_def(kind).is_some_and(|t| t.own_stop.is_some());
    if def.key != "requests" && !own_stop {
        spec.common.duration_s = Some(1.0);
    }
    if def.key == "requests" {
        spec.common.duration_s = None;
    }
    spec
}

/// `spec`'s problems that are about the setting of `def` or tell the user to change it.
fn names_it(spec: &WorkloadSpec, def: &SettingDef) -> Vec<String> {
    let is_it = |s: Setting| s.def().map(|d| d.key) == Some(def.key);
    spec.problems()
        .into_iter()
        .filter(|e| is_it(e.field) || e.fix.settings().any(is_it))
        .map(|e| e.to_string())
        .collect()
}

/// A bound's text, the bound's and the values just outside it.
fn bounds(ty: &Ty) -> Option<([String; 2], Vec<String>)> {
    Some(match ty.inner() {
        Ty::Count { min, max } | Ty::Size { min, max } => (
            [min.to_string(), max.to_string()],
            min.checked_sub(1)
                .into_iter()
                .chain(max.checked_add(1))
                .map(|v| v.to_string())
                .collect(),
        ),
        Ty::Seconds { min, max } => {
            // A range of positive seconds (the warm-up) takes 0 as none: below it is -1.
            let below = if *min <= f64::MIN_POSITIVE {
                -1.0
            } else {
                min / 2.0
            };
            (
                [min.to_string(), max.to_string()],
                vec![below.to_string(), (max * 2.0).to_string()],
            )
        }
        _ => return None,
    })
}

#[test]
fn every_range_is_the_range_the_checks_accept() {
    for kind in KINDS {
        for def in kind.settings {
            let Some((ok, bad)) = bounds(&def.ty) else {
                continue;
            };
            let spec = base(kind.kind, def);
            for text in ok {
                let set = set_value(&spec, def, &text).unwrap();
                let found = names_it(&set, def);
                assert!(
                    found.is_empty(),
                    "{:?} {} = {text}: {found:?}",
                    kind.kind,
                    def.key
                );
            }
            for text in bad {
                // A value the field's type cannot hold is refused by `--set` already.
                let Ok(set) = set_value(&spec, def, &text) else {
                    continue;
                };
                assert!(
                    !names_it(&set, def).is_empty(),
                    "{:?} {} = {text} is accepted",
                    kind.kind,
                    def.key
                );
            }
        }
    }
}

#[test]
fn a_flag_set_is_set_by_its_names() {
    let def = &super::common::OPEN_FLAGS;
    let spec = set_value(&WorkloadSpec::default(), def, "O_DSYNC, direct").unwrap();
    assert!(
        spec.flat().open_flags.dsync
            && spec.flat().open_flags.direct
            && !spec.flat().open_flags.sync
    );
    let spec = set_value(&spec, def, "none").unwrap();
    assert_eq!(spec.flat().open_flags, Default::default());
    let e = set_value(&spec, def, "dsync,fua").unwrap_err();
    assert!(e.to_string().contains("fua"), "{e}");
}

#[test]
fn an_optional_setting_is_unset_by_its_row() {
    let def = &super::common::DURATION;
    let spec = set_value(&WorkloadSpec::default(), def, "2.5").unwrap();
    assert_eq!(spec.common.duration_s, Some(2.5));
    let spec = crate::spec::unset_value(&spec, def).unwrap();
    assert_eq!(spec.common.duration_s, None);
    assert_eq!(spec, WorkloadSpec::default());
}

#[test]
fn only_what_acknowledges_is_crash_tested_and_each_kind_names_its_files() {
    use crate::spec::{FileioMode, GrouplogSpec, IoEngine};
    let files = |flat: FlatSpec| {
        let spec = flat.typed();
        spec.kind.params().acknowledged_files(&spec)
    };
    let two = FlatSpec {
        threads: 2,
        ..FlatSpec::default()
    };
    let listed = |names: &[&str]| {
        Ok(crate::crashlog::AckedFiles::Listed(
            names.iter().map(|n| n.to_string()).collect(),
        ))
    };
    assert_eq!(
        files(two.clone()),
        listed(&["thread-0.dat", "thread-1.dat"])
    );
    let grouplog = FlatSpec {
        kind: WorkloadKind::Grouplog,
        ..two.clone()
    };
    assert_eq!(files(grouplog.clone()), listed(&["shared.log"]));
    let small = FlatSpec {
        kind: WorkloadKind::Smallfiles,
        ..two.clone()
    };
    let ack = |file, seq| crate::crashlog::Ack {
        id: crate::crashlog::RecordId {
            run: 1,
            thread: file,
            seq,
            version: 0,
        },
        file,
        offset: 0,
        len: 4096,
    };
    let per_record = files(small.clone()).unwrap();
    assert_eq!(
        per_record.path(&ack(1, 42)).as_deref(),
        Some("thread-1/f0000000042")
    );
    assert_eq!(per_record.names().len(), 2);
    let mut renamed = small.clone();
    renamed.smallfiles.rename_over = true;
    assert_eq!(
        files(renamed),
        listed(&["thread-0/current", "thread-1/current"])
    );
    let uring = FlatSpec {
        ioengine: IoEngine::IoUring,
        ..two.clone()
    };
    assert_eq!(
        files(uring).map(|f| f.names().len()),
        Ok(2),
        "io_uring acknowledges too"
    );
    for (flat, why) in [
        (
            FlatSpec {
                kind: WorkloadKind::Smallfiles,
                smallfiles: crate::spec::SmallfilesSpec {
                    file_size: 32,
                    ..Default::default()
                },
                ..FlatSpec::default()
            },
            "record header",
        ),
        (
            FlatSpec {
                grouplog: GrouplogSpec {
                    record_size: 32,
                    ..Default::default()
                },
                ..grouplog
            },
            "record header",
        ),
        (
            FlatSpec {
                mode: FileioMode::Sysbench,
                ..two.clone()
            },
            "sysbench",
        ),
        (
            FlatSpec {
                shared_files: Some(2),
                ..two
            },
            "shared files",
        ),
    ] {
        let said = files(flat).unwrap_err();
        assert!(said.why.contains(why), "{said}");
    }
    // The refusals a setting lifts name it.
    let mut small = small;
    small.smallfiles.unlink = true;
    assert_eq!(
        files(small).unwrap_err().setting,
        Some(crate::spec::Setting::SMALLFILES_UNLINK)
    );
}

#[test]
fn an_append_log_is_crash_tested_only_while_no_segment_can_fill() {
    let mut flat = FlatSpec {
        kind: WorkloadKind::Append,
        threads: 2,
        requests: Some(100),
        ..FlatSpec::default()
    };
    flat.append.segment_size = 100 * 4096;
    let spec = flat.clone().typed();
    assert_eq!(
        spec.kind.params().acknowledged_files(&spec),
        Ok(crate::crashlog::AckedFiles::Listed(vec![
            "wal-0-a.log".to_string(),
            "wal-1-a.log".to_string()
        ]))
    );
    // One record more than a segment holds, or no request count: a segment may rotate.
    for flat in [
        FlatSpec {
            requests: Some(101),
            ..flat.clone()
        },
        FlatSpec {
            requests: None,
            duration_s: Some(1.0),
            ..flat.clone()
        },
    ] {
        let spec = flat.typed();
        let no = spec.kind.params().acknowledged_files(&spec).unwrap_err();
        assert_eq!(
            no.setting.map(|s| s.key()),
            Some("append.segment_size"),
            "{no}"
        );
    }
}
