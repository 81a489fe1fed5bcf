//! Fuzzing on the stable toolchain: property tests (proptest) that throw arbitrary strings
//! and structured mutations at every parser of hostile input — the preset TOML parser, the
//! size parser and the `--set key=value` parser (which carries `duration_s`), fio job files
//! (parser and translation to a spec), fleet hosts and targets (`fio::client`), the mountinfo
//! and block-stat parsers, the mkfs/mount option allow-list and the fio JSON importer.
//! Properties: no panic; the option checker never accepts a word with `/` or a
//! device-naming option; round trips hold where they exist.
//!
//! Each target replays its corpus (`tests/fuzz_corpus/<target>/`, one input per file,
//! attack strings included) and then runs `PROPTEST_CASES` generated cases (a small default
//! under `cargo test`; `scripts/fuzz.sh` runs a large fixed number). Each target prints how
//! many inputs it executed.

use std::path::Path;

use crate::fuzz_common::{fuzz, replay_corpus};

use fsynclab::fio::client::FleetHost;
use fsynclab::fio::job::{options_to_spec, parse_job_file};
use fsynclab::probe::{
    BlockStat, MountInfo, parse_mountinfo, parse_named_stat_line, unescape_octal,
};
use fsynclab::scratch::{FsKind, check_mkfs_options, check_mount_options};
use fsynclab::spec::{
    Preset, WorkloadSpec, apply_setting, builtin_presets, format_size, format_size_approx,
    parse_size,
};
use proptest::prelude::*;

// ---- option checker -------------------------------------------------------------------

/// Keys and words that name something outside the filesystem being made.
const DANGEROUS_KEYS: &[&str] = &[
    "logdev",
    "rtdev",
    "device",
    "file",
    "name",
    "journal_path",
    "journal_dev",
    "offset",
    "loop",
    "sizelimit",
    "subvol",
    "helper",
    "usrjquota",
    "grpjquota",
];

/// The option checker's safety property for one input.
fn options_property(text: &str) {
    for fs in FsKind::ALL {
        if let Ok(words) = check_mkfs_options(fs, text) {
            for word in &words {
                assert!(
                    !word.contains('/'),
                    "{fs} mkfs accepted {word:?} from {text:?}"
                );
                // Sub-options (`-l size=64m,internal`): no key that names a device or file.
                for item in word.split(',').filter(|item| item.contains('=')) {
                    let key = item.split('=').next().unwrap_or(item);
                    assert!(
                        !DANGEROUS_KEYS.contains(&key),
                        "{fs} mkfs accepted {item:?} from {text:?}"
                    );
                }
            }
            // Every word that is not a value follows a flag: the first must be a flag.
            if let Some(first) = words.first() {
                assert!(first.starts_with('-'), "{fs} mkfs accepted bare {first:?}");
            }
        }
        if let Ok(options) = check_mount_options(fs, text) {
            assert!(!options.contains('/'), "{fs} mount accepted {options:?}");
            for item in options.split(',').filter(|i| !i.is_empty()) {
                let key = item.split('=').next().unwrap_or(item);
                assert!(
                    !DANGEROUS_KEYS.contains(&key.to_ascii_lowercase().as_str()),
                    "{fs} mount accepted {item:?} from {text:?}"
                );
            }
        }
    }
}

/// Words an attacker would combine: allowed flags and values, and the dangerous ones.
fn option_word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "-b",
            "-L",
            "-l",
            "-d",
            "-J",
            "-E",
            "-O",
            "-m",
            "-r",
            "-n",
            "-s",
            "-K",
            "-q",
            "-f",
            "-F",
            "--csum",
            "--data",
            "--rootdir",
            "-U",
            "-T",
            "-M",
            "-z",
            "-c",
        ])
        .prop_map(String::from),
        prop::sample::select(vec![
            "4096",
            "64m",
            "size=64",
            "size=64m,internal=1",
            "logdev=/dev/loop7",
            "logdev=loop7",
            "device=/dev/sdb",
            "file=img",
            "name=x",
            "rtdev=sdb",
            "internal=0",
            "single",
            "dup",
            "raid1",
            "/dev/loop7",
            "loop7",
            "^has_journal",
            "lab",
            "'a b'",
            "\"x\"",
            "\\/dev/x",
            "journal_path=x",
            "offset=1",
            "stride=8,offset=4",
            "crc=1,logdev=x",
            "..",
            "$(id)",
        ])
        .prop_map(String::from),
        "[ -~]{0,12}",
    ]
}

#[test]
fn fuzz_option_checker() {
    let replayed = replay_corpus("options", options_property);
    eprintln!("fuzz options: {replayed} corpus inputs replayed");
    // Arbitrary text, and word sequences built from the attack vocabulary.
    fuzz("options-text", 400, any::<String>(), |text| {
        options_property(&text)
    });
    fuzz(
        "options-words",
        400,
        prop::collection::vec(option_word(), 0..8),
        |words| {
            options_property(&words.join(" "));
            options_property(&words.join(","));
        },
    );
}

// ---- size and settings (duration) -----------------------------------------------------

fn size_property(text: &str) {
    if let Ok(bytes) = parse_size(text) {
        assert_eq!(parse_size(&format_size(bytes)), Ok(bytes), "{text:?}");
        let _ = format_size_approx(bytes);
    }
}

fn setting_property(text: &str) {
    let base = WorkloadSpec::default();
    if let Ok(spec) = apply_setting(&base, text) {
        // Whatever was set, validation answers (Ok or a message) without panicking, and so
        // does a description of the unvalidated spec (the window describes forms as typed).
        let _ = spec.validate();
        let _ = spec.describe();
    }
    for key in [
        "duration_s",
        "file_size",
        "block_size",
        "threads",
        "requests",
        "sync_every",
    ] {
        if let Ok(spec) = apply_setting(&base, &format!("{key}={text}")) {
            let _ = spec.validate();
            let _ = spec.describe();
        }
    }
}

#[test]
fn fuzz_size_and_settings() {
    let n = replay_corpus("size", size_property) + replay_corpus("settings", setting_property);
    eprintln!("fuzz size/settings: {n} corpus inputs replayed");
    fuzz("size-text", 1000, any::<String>(), |text| {
        size_property(&text)
    });
    fuzz(
        "size-shaped",
        1000,
        "[0-9.]{0,22}[ kKmMgGtTbBiIpP]{0,4}",
        |text| size_property(&text),
    );
    fuzz("size-roundtrip", 1000, any::<u64>(), |bytes| {
        assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        let _ = format_size_approx(bytes);
    });
    fuzz("settings-text", 300, any::<String>(), |text| {
        setting_property(&text)
    });
    fuzz(
        "duration-shaped",
        300,
        "-?[0-9]{0,12}(\\.[0-9]{0,6})?(e-?[0-9]{1,4})?|inf|nan|-inf|1e309",
        |text| setting_property(&text),
    );
}

// ---- fio job files ---------------------------------------------------------------------

/// Every job of a parsed file goes through the translation; nothing panics, and a spec it
/// returns is valid.
fn fio_job_property(text: &str) {
    let env = |name: &str| name.len().is_multiple_of(2).then(|| name.repeat(3));
    if let Ok(file) = parse_job_file(text, &env) {
        for job in &file.jobs {
            for strict in [false, true] {
                if let Ok(job_spec) = options_to_spec(&job.options, strict) {
                    assert!(job_spec.spec.validate().is_ok(), "{text:?}");
                    let _ = job_spec.spec.describe();
                }
            }
        }
    }
}

#[test]
fn fuzz_fio_job_files() {
    let n = replay_corpus("fio_job", fio_job_property);
    eprintln!("fuzz fio job: {n} corpus inputs replayed");
    fuzz("fio-job-text", 500, any::<String>(), |text| {
        fio_job_property(&text)
    });
    // Structured: sections and key=value lines of known keys with size/time-shaped values.
    let line = prop_oneof![
        "\\[[a-z]{0,6}\\]",
        "(rw|bs|size|filesize|io_size|numjobs|fsync|fdatasync|sync_file_range|sync|direct|fallocate|ioengine|runtime|time_based|ramp_time|directory|filename|end_fsync|kb_base|randseed|nrfiles)=[-0-9a-zA-Z_,:$%{}.]{0,12}",
        "[#;].{0,10}",
    ];
    fuzz(
        "fio-job-lines",
        500,
        proptest::collection::vec(line, 0..14),
        |lines| fio_job_property(&lines.join("\n")),
    );
}

// ---- fleet hosts and targets -----------------------------------------------------------

/// A host fio's connect string could misread never gets through: an accepted host's
/// connect string is `ip:` or `ip6:`, an address of letters, digits, `.`, `-` (and `:` for
/// IPv6), one `,` and a port; it prints and parses back to itself. An accepted target is
/// an absolute path of the allowed characters only.
fn fleet_property(text: &str) {
    if let Ok(host) = FleetHost::parse(text) {
        let connect = host.connect_string();
        let (kind, rest) = connect.split_once(':').unwrap();
        assert!(kind == "ip" || kind == "ip6", "{text:?}: {connect}");
        let (addr, port) = rest.rsplit_once(',').unwrap();
        assert!(
            !addr.is_empty() && !addr.contains(','),
            "{text:?}: {connect}"
        );
        assert!(
            addr.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':')),
            "{text:?}: {connect}"
        );
        assert!(
            port.parse::<u16>().is_ok_and(|p| p > 0),
            "{text:?}: {connect}"
        );
        assert_eq!(
            FleetHost::parse(&host.to_string()).as_ref(),
            Ok(&host),
            "{text:?}"
        );
    }
    if let Ok(target) = fsynclab::lab::check_target(text) {
        assert!(target.starts_with('/'), "{text:?}");
        assert!(
            target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-+@=".contains(c)),
            "{text:?}"
        );
    }
}

#[test]
fn fuzz_fleet_hosts_and_targets() {
    let n = replay_corpus("fleet_host", fleet_property);
    eprintln!("fuzz fleet host: {n} corpus inputs replayed");
    fuzz("fleet-host-text", 1000, any::<String>(), |text| {
        fleet_property(&text)
    });
    // Structured: host-shaped text with the characters fio's parser cares about.
    fuzz(
        "fleet-host-shaped",
        1000,
        "[\\[\\]a-z0-9.:,/ %$-]{0,24}",
        |text| fleet_property(&text),
    );
}

// ---- mountinfo and block stat ---------------------------------------------------------

fn mountinfo_property(text: &str) {
    let _ = parse_mountinfo(text);
    for line in text.lines() {
        if let Ok(mount) = MountInfo::from_line(line) {
            let _ = mount.has_option("rw");
        }
    }
    let _ = unescape_octal(text);
}

/// The kernel's escaping of a mount point (space, tab, newline, backslash).
fn escape(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

fn blockstat_property(text: &str) {
    if let Ok(stat) = BlockStat::parse(text) {
        let _ = stat.delta_since(&BlockStat::default());
        let _ = BlockStat::default().delta_since(&stat);
    }
    for line in text.lines() {
        let _ = parse_named_stat_line(line);
    }
}

#[test]
fn fuzz_mountinfo_and_blockstat() {
    let n = replay_corpus("mountinfo", mountinfo_property)
        + replay_corpus("blockstat", blockstat_property);
    eprintln!("fuzz mountinfo/blockstat: {n} corpus inputs replayed");
    fuzz("mountinfo-text", 500, any::<String>(), |text| {
        mountinfo_property(&text)
    });
    // Structured: a valid line with random fields.
    let field = "[ -~]{0,10}";
    fuzz(
        "mountinfo-fields",
        500,
        (
            field,
            field,
            field,
            field,
            field,
            field,
            field,
            "[0-9: -]{0,12}",
        ),
        |(a, b, c, d, e, f, g, h)| {
            mountinfo_property(&format!("{h} {a} {b} {c} {d} - {e} {f} {g}"));
            mountinfo_property(&format!("{a} - {b}\n{c} {d} - - {e}"));
        },
    );
    fuzz(
        "mountinfo-roundtrip",
        500,
        ("[^\\x00]{1,24}", any::<(u32, u32, u32, u32)>()),
        |(point, (id, parent, major, minor))| {
            let line = format!(
                "{id} {parent} {major}:{minor} / {} rw,relatime shared:1 - ext4 /dev/loop0 rw",
                escape(&point)
            );
            let mount = MountInfo::from_line(&line).expect("a well-formed line parses");
            assert_eq!(mount.mount_point, point);
            assert_eq!((mount.major, mount.minor), (major, minor));
        },
    );
    fuzz("blockstat-text", 500, any::<String>(), |text| {
        blockstat_property(&text)
    });
    fuzz(
        "blockstat-roundtrip",
        500,
        (
            prop::collection::vec(any::<u64>(), 11..=20),
            "[a-z0-9]{1,8}",
        ),
        |(values, name)| {
            let line: Vec<String> = values.iter().map(u64::to_string).collect();
            let stat = BlockStat::parse(&line.join(" ")).expect("counters parse");
            assert_eq!(stat.read_ios, values[0]);
            assert_eq!(stat.time_in_queue_ms, values[10]);
            let (parsed_name, named) =
                parse_named_stat_line(&format!("{name} {}", line.join("  "))).expect("named");
            assert_eq!((parsed_name, named), (name, stat));
        },
    );
}

// ---- presets ----------------------------------------------------------------------------

fn preset_property(text: &str) {
    if let Ok(preset) = Preset::from_toml(text, "fuzz.toml") {
        let _ = preset.scaled(preset.scale.quick);
        let _ = preset.scaled(0.5);
        let _ = fsynclab_cli::preset_text(&preset);
        // What loaded passed the option allow-list for every matrix filesystem.
        for m in &preset.matrix {
            for text in m.mkfs_opts.iter().chain(&m.mount_opts) {
                assert!(!text.contains('/'), "a preset matrix kept {text:?}");
            }
        }
    }
}

#[test]
fn fuzz_preset_parser() {
    let n = replay_corpus("preset", preset_property);
    eprintln!("fuzz preset: {n} corpus inputs replayed");
    fuzz("preset-text", 200, any::<String>(), |text| {
        preset_property(&text)
    });
    // Structured mutations of the built-in presets: splice, delete, replace a value.
    let texts: Vec<String> = builtin_presets()
        .iter()
        .map(|p| toml::to_string(p).expect("a preset serializes"))
        .collect();
    for (preset, text) in builtin_presets().iter().zip(&texts) {
        let back = Preset::from_toml(text, "roundtrip").expect("a serialized preset loads");
        assert_eq!(&back, preset, "round trip of {}", preset.name);
    }
    let texts = std::sync::Arc::new(texts);
    let splice = prop_oneof![
        Just(String::new()),
        Just("\n[[matrix]]\ntitle=\"t\"\nwhy=\"w\"\nfs=[\"xfs\"]\nmkfs_opts=[\"-l logdev=/dev/loop7\"]\n".to_string()),
        Just("threads = 99999999999999999999".to_string()),
        Just("duration_s = -1e309".to_string()),
        Just("file_size = \"1e99G\"".to_string()),
        Just("\"\"\"".to_string()),
        "[ -~\n]{0,16}",
    ];
    let count = texts.len();
    fuzz(
        "preset-mutations",
        120,
        (0..count, any::<prop::sample::Index>(), 0usize..64, splice),
        move |(which, at, cut, insert)| {
            let text = &texts[which];
            let mut start = at.index(text.len() + 1);
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let mutated = format!("{}{insert}{}", &text[..start], &text[end..]);
            preset_property(&mutated);
        },
    );
}

// ---- fio JSON output ----------------------------------------------------------------------

/// The importer on one input: never a panic; what it accepts has consistent figures.
fn fio_output_property(text: &str) {
    if let Ok(out) = fsynclab::fio::import::parse_fio_output(text) {
        for run in &out.runs {
            let r = &run.result;
            assert_eq!(r.spec.kind(), fsynclab::spec::WorkloadKind::Fio);
            let s = r.summary();
            assert!(s.iops.is_finite() && s.iops >= 0.0);
            if r.has_histograms() {
                assert_eq!(r.write_lat.count(), s.write_lat.count);
            }
            let _ = fsynclab::report::summary_text(r, &fsynclab::spec::Neutral);
            let _ = fsynclab::report::run_json(r);
        }
    }
}

#[test]
fn fuzz_fio_output_parser() {
    let n = replay_corpus("fio_output", fio_output_property);
    eprintln!("fuzz fio_output: {n} corpus inputs replayed");
    fuzz("fio-output-text", 200, any::<String>(), |text| {
        fio_output_property(&text)
    });
    // Structured mutations of the real fio 3.33 outputs: splice, delete, replace a value.
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures/fio");
    let texts: Vec<String> = [
        "A-ext4.out",
        "qd1-jsonplus.json",
        "client-json.txt",
        "client1-nogroup-json.txt",
    ]
    .iter()
    .map(|name| std::fs::read_to_string(dir.join(name)).expect("fixture"))
    .collect();
    for text in &texts {
        assert!(fsynclab::fio::import::parse_fio_output(text).is_ok());
    }
    let texts = std::sync::Arc::new(texts);
    let splice = prop_oneof![
        Just(String::new()),
        Just("-1".to_string()),
        Just("1e400".to_string()),
        Just("18446744073709551616".to_string()),
        Just("\"x\"".to_string()),
        Just("null".to_string()),
        Just("{}".to_string()),
        Just("[]".to_string()),
        Just("\"\\u001b[2J\"".to_string()),
        "[ -~\n]{0,16}",
    ];
    let count = texts.len();
    fuzz(
        "fio-output-mutations",
        150,
        (0..count, any::<prop::sample::Index>(), 0usize..32, splice),
        move |(which, at, cut, insert)| {
            let text = &texts[which];
            let mut start = at.index(text.len() + 1);
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let mutated = format!("{}{insert}{}", &text[..start], &text[end..]);
            fio_output_property(&mutated);
        },
    );
}
