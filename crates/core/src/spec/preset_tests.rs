//! Tests of presets: every built-in loads and scales, errors name their place, another
//! kind's setting is refused, scaling follows the rows' types.

use super::*;
use crate::spec::FlatSpec;

#[test]
fn every_preset_file_is_compiled_in_and_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".toml")
                .map(String::from)
        })
        .collect();
    on_disk.sort();
    let mut compiled: Vec<String> = BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
    compiled.sort();
    assert_eq!(
        on_disk, compiled,
        "register every presets/*.toml in BUILTIN"
    );
    for (name, text) in BUILTIN {
        let preset = Preset::from_toml(text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&preset.name, name, "file name and preset name must agree");
        assert!(
            !preset.published.is_empty()
                || preset.seed.is_none()
                || preset.published_note.is_some(),
            "{name}: a seed preset needs its published figures, or a published_note saying why there are none"
        );
        assert!(
            !preset.watch.is_empty(),
            "{name}: every preset names the kernel figures to watch ([[watch]])"
        );
        preset.scaled(preset.scale.quick).unwrap();
    }
}

#[test]
fn sysbench_and_methods_presets_scale_and_load() {
    let unplug = load_preset("btrfs-fsync-unplug").unwrap();
    assert_eq!(
        unplug.workload.flat().mode,
        crate::spec::FileioMode::Sysbench
    );
    // sysbench 0.4's 10000 write events + 2000 fsyncs, counted as sysbench 1.0 does.
    assert_eq!(unplug.workload.common.requests, Some(12_000));
    let quick = unplug.scaled(unplug.scale.quick).unwrap();
    assert_eq!(quick.common.requests, Some(600));
    assert_eq!(quick.flat().file_size, (128 << 20) / 20 / 4096 * 4096);
    let methods = load_preset("fsync-methods").unwrap();
    assert!(methods.published.is_empty() && methods.seed.is_none());
    assert_eq!(methods.scaled(0.4).unwrap().common.duration_s, Some(2.0));
}

#[test]
fn unknown_preset_lists_the_available_ones() {
    let err = load_preset("nope").unwrap_err().to_string();
    assert!(err.contains("btrfs-log-commit"), "{err}");
}

#[test]
fn malformed_toml_reports_line_and_column() {
    let text =
        "name = \"x\"\ntitle = \"t\"\ndescription = \"d\"\n[workload]\nthreads = \"eight\"\n";
    let err = Preset::from_toml(text, "my.toml").unwrap_err();
    match err {
        PresetError::Parse {
            origin,
            line,
            column,
            ..
        } => {
            assert_eq!(origin, "my.toml");
            assert_eq!(line, 5);
            assert_eq!(column, 11);
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn scaling_rounds_to_blocks_and_refuses_bad_factors() {
    let preset = load_preset("btrfs-log-commit").unwrap();
    let quick = preset.scaled(0.05).unwrap();
    let (q, full) = (quick.flat(), preset.workload.flat());
    assert_eq!(q.file_size % q.block_size, 0);
    assert!(q.file_size < full.file_size);
    assert_eq!(quick.common.threads, preset.workload.common.threads);
    assert_eq!(preset.scaled(1.0).unwrap(), preset.workload);
    assert!(preset.scaled(0.0).is_err());
    assert!(preset.scaled(-1.0).is_err());
    // Tiny factors still leave one block.
    assert_eq!(
        preset.scaled(1e-9).unwrap().flat().file_size,
        preset.workload.flat().block_size
    );
}

/// A preset setting of another kind away from its default is refused by name (it would
/// be ignored); another kind's table at its defaults (a stored spec pasted in) is not.
#[test]
fn a_setting_of_another_kind_is_refused() {
    let (_, base) = BUILTIN.iter().find(|(n, _)| *n == "fsync-methods").unwrap();
    let foreign = format!("{base}\n[workload.grouplog]\nstrategy = \"solo\"\n");
    let e = Preset::from_toml(&foreign, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("grouplog.strategy: a setting of grouplog runs, not of this fileio preset"),
        "{e}"
    );
    let at_default = format!("{base}\n[workload.grouplog]\nstrategy = \"leader\"\n");
    assert!(Preset::from_toml(&at_default, "x.toml").is_ok());
    // No built-in preset sets another kind's setting.
    for p in builtin_presets() {
        assert!(
            crate::spec::foreign_settings(&p.workload.flat()).is_empty(),
            "{}",
            p.name
        );
    }
}

/// Every row marked `scale` is scaled by its type; the list of them is the tables'.
#[test]
fn every_row_marked_scale_is_scaled_by_its_type() {
    let spec = FlatSpec {
        io_size: Some(8 << 20),
        requests: Some(1000),
        duration_s: Some(10.0),
        ..FlatSpec::default()
    }
    .typed();
    let mut small = FlatSpec {
        kind: crate::spec::WorkloadKind::Smallfiles,
        ..FlatSpec::default()
    };
    small.smallfiles.files_per_thread = 1000;
    let fields: Vec<String> = scalable().map(|d| d.key.to_string()).collect();
    assert_eq!(fields.len(), 5, "{fields:?}");
    let half = scale_fields(&spec, &fields, 0.5);
    assert_eq!(half.flat().file_size, 32 << 20);
    assert_eq!(half.flat().io_size, Some(4 << 20));
    assert_eq!(half.common.requests, Some(500));
    assert_eq!(half.common.duration_s, Some(5.0));
    let half_small = scale_fields(&small.typed(), &fields, 0.5);
    assert_eq!(half_small.flat().smallfiles.files_per_thread, 500);
    let tiny = scale_fields(&spec, &fields, 1e-9);
    assert_eq!(
        (tiny.flat().file_size, tiny.common.requests),
        (4096, Some(1))
    );
    let (_, base) = BUILTIN.iter().find(|(n, _)| *n == "fsync-methods").unwrap();
    let text = base.replacen(
        r#"fields = ["duration_s"]"#,
        r#"fields = ["block_size"]"#,
        1,
    );
    let e = Preset::from_toml(&text, "x.toml").unwrap_err().to_string();
    assert!(
        e.contains("'block_size' cannot be scaled") && e.contains("smallfiles.files_per_thread"),
        "{e}"
    );
}

#[test]
fn a_quick_scale_out_of_range_stops_the_load() {
    let (_, base) = BUILTIN
        .iter()
        .find(|(name, _)| *name == "fsync-methods")
        .unwrap();
    for bad in ["nan", "inf", "0.0", "-1.0", "1e300"] {
        let text = base.replace("quick = 0.4", &format!("quick = {bad}"));
        assert_ne!(&text, base);
        let err = Preset::from_toml(&text, "q.toml").unwrap_err().to_string();
        assert!(err.contains("scale.quick"), "{bad}: {err}");
    }
}

#[test]
fn a_matrix_option_outside_the_allow_list_stops_the_load() {
    let (_, base) = BUILTIN
        .iter()
        .find(|(name, _)| *name == "fsync-methods")
        .unwrap();
    let evil = format!(
        "{base}\n[[matrix]]\ntitle = \"t\"\nwhy = \"w\"\nfs = [\"ext4\", \"btrfs\"]\n\
         mkfs_opts = [\"-q\", \"-L b /dev/loop7\"]\n"
    );
    let err = Preset::from_toml(&evil, "evil.toml").unwrap_err();
    assert!(matches!(err, PresetError::MatrixOption { .. }), "{err:?}");
    let text = err.to_string();
    let index = Preset::from_toml(base, "x").unwrap().matrix.len() + 1;
    assert!(
        text.starts_with(&format!(
            "evil.toml: [[matrix]] {index} mkfs_opts[1] (for ext4): mkfs option `/dev/loop7`"
        )),
        "{text}"
    );
    let evil = format!(
        "{base}\n[[matrix]]\ntitle = \"t\"\nwhy = \"w\"\nfs = [\"btrfs\"]\n\
         mount_opts = [\"ssd,device=/dev/loop7\"]\n"
    );
    let text = Preset::from_toml(&evil, "evil.toml")
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("mount_opts[0] (for btrfs): mount option `device=/dev/loop7`"),
        "{text}"
    );
}
