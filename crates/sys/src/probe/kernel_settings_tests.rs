//! Parser and reader tests on texts and a `/proc` + `/sys` tree recorded on the lab VM
//! (tests/fixtures/probe/kernel/README.md).

use std::path::{Path, PathBuf};

use super::*;
use crate::probe::{
    DeviceInfo, KernelRoots, inflate, inflate_config_prefix, preempt_model, read_kernel_settings_in,
};

const TIMER_LIST_1: &str = include_str!("../../../../tests/fixtures/probe/kernel/timer_list.1.txt");
const TIMER_LIST_2: &str = include_str!("../../../../tests/fixtures/probe/kernel/timer_list.2.txt");

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/probe/kernel/tree")
}

fn fixture_roots(boot: &Path) -> KernelRoots {
    KernelRoots {
        proc: tree().join("proc"),
        sysfs: tree().join("sys"),
        boot: boot.to_path_buf(),
        debugfs: boot.join("no-debugfs"),
        live: false,
    }
}

fn recorded_config() -> String {
    let gz = std::fs::File::open(tree().join("proc/config.gz")).expect("fixture");
    inflate(gz).expect("gzip")
}

fn device(name: &str) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        stat_path: tree().join("sys/block").join(name).join("stat"),
        ..DeviceInfo::default()
    }
}

#[test]
fn recorded_config_is_hz_250_preempt_none_dynamic() {
    let config = parse_kernel_config(&recorded_config());
    assert_eq!(
        config,
        KernelConfig {
            hz: Some(250),
            preempt: Some("none".into()),
            preempt_dynamic: true,
        }
    );
}

#[test]
fn config_parser_picks_exact_keys() {
    // CONFIG_PREEMPT_BUILD, CONFIG_PREEMPTION and CONFIG_HZ_250 must not be taken for the
    // model or the rate.
    let text = "CONFIG_HZ_250=y\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPTION=y\n\
                # CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT=y\nCONFIG_HZ=1000\n";
    let config = parse_kernel_config(text);
    assert_eq!(config.hz, Some(1000));
    assert_eq!(config.preempt.as_deref(), Some("full"));
    assert!(!config.preempt_dynamic);
    let rt = parse_kernel_config("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_LAZY=y\nCONFIG_HZ=0\n");
    assert_eq!((rt.hz, rt.preempt.as_deref()), (None, Some("rt")));
    assert_eq!(
        parse_kernel_config("CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_HZ=x\n"),
        KernelConfig {
            hz: None,
            preempt: Some("voluntary".into()),
            preempt_dynamic: false,
        }
    );
    assert_eq!(parse_kernel_config(""), KernelConfig::default());
}

#[test]
fn preempt_from_debugfs_and_cmdline() {
    assert_eq!(
        parse_preempt_debugfs("none voluntary (full) lazy\n").as_deref(),
        Some("full")
    );
    assert_eq!(
        parse_preempt_debugfs("(none) voluntary full").as_deref(),
        Some("none")
    );
    assert_eq!(parse_preempt_debugfs("none voluntary full"), None);
    assert_eq!(parse_preempt_debugfs("(bogus) full"), None);
    let cmdline = std::fs::read_to_string(tree().join("proc/cmdline")).expect("fixture");
    assert_eq!(cmdline_preempt(&cmdline), None);
    assert_eq!(
        cmdline_preempt("quiet preempt=voluntary ro").as_deref(),
        Some("voluntary")
    );
    assert_eq!(
        cmdline_preempt("preempt=none preempt=lazy").as_deref(),
        Some("lazy")
    );
    // After `--` the arguments are init's; unknown models are not models.
    assert_eq!(cmdline_preempt("ro -- preempt=full"), None);
    assert_eq!(cmdline_preempt("preempt=fast"), None);
}

#[test]
fn preempt_model_precedence() {
    let dynamic_none = KernelConfig {
        hz: Some(250),
        preempt: Some("none".into()),
        preempt_dynamic: true,
    };
    let model = |config: &KernelConfig, cmdline: &str, debugfs: Option<&str>| {
        preempt_model(config, Some(cmdline), debugfs)
    };
    assert_eq!(
        model(&dynamic_none, "quiet", None),
        (
            Some("none".into()),
            Some("default of a dynamic kernel's config".into())
        )
    );
    assert_eq!(
        model(&dynamic_none, "preempt=full", None),
        (
            Some("full".into()),
            Some("preempt= on the command line".into())
        )
    );
    assert_eq!(
        model(&dynamic_none, "preempt=full", Some("none (voluntary) full")),
        (
            Some("voluntary".into()),
            Some("debugfs sched/preempt".into())
        )
    );
    // A static kernel ignores preempt=.
    let fixed = KernelConfig {
        preempt_dynamic: false,
        ..dynamic_none.clone()
    };
    assert_eq!(
        model(&fixed, "preempt=full", None),
        (Some("none".into()), Some("kernel config".into()))
    );
    let rt = KernelConfig {
        preempt: Some("rt".into()),
        ..fixed
    };
    assert_eq!(model(&rt, "", Some("(full)")).0.as_deref(), Some("rt"));
    assert_eq!(
        preempt_model(&KernelConfig::default(), None, None),
        (None, None)
    );
}

#[test]
fn hz_measured_from_two_timer_list_readings() {
    let first = parse_timer_list(TIMER_LIST_1).expect("reading 1");
    let second = parse_timer_list(TIMER_LIST_2).expect("reading 2");
    assert_eq!(first, (692_085_608_223, 4_295_065_280));
    assert_eq!(second, (692_307_369_866, 4_295_065_335));
    // 55 ticks in 221.8 ms = 248 Hz: the HZ=250 build the config names.
    assert_eq!(hz_from_ticks(first, second), Some(250));
    let ms = 1_000_000;
    // One tick more or fewer in 50 ms (20 Hz) still snaps to the build's rate: HZ=250 is
    // 12.5 ticks, read as 12 or 13 (240, 260 Hz; 256 is not a rate to snap to).
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 5)), Some(100));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 4)), Some(100));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 12)), Some(250));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 13)), Some(250));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 14)), Some(300));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 16)), Some(300));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 49)), Some(1000));
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 51)), Some(1000));
    // Far from any known rate: the rate itself.
    assert_eq!(hz_from_ticks((0, 0), (1000 * ms, 700)), Some(700));
    // Too few ticks, no time, time going backwards.
    assert_eq!(hz_from_ticks((0, 0), (50 * ms, 3)), None);
    assert_eq!(hz_from_ticks((5, 0), (5, 100)), None);
    assert_eq!(hz_from_ticks((10, 100), (5, 200)), None);
    assert_eq!(parse_timer_list("now at x nsecs\njiffies: 5\n"), None);
    assert_eq!(parse_timer_list(""), None);
}

#[test]
fn numbers_and_governors() {
    assert_eq!(parse_number_text("75000\n"), Some(75_000));
    assert_eq!(parse_number_text("-1"), None);
    assert_eq!(parse_number_text(""), None);
    assert_eq!(
        summarize_governors(["performance\n", "performance"]).as_deref(),
        Some("performance")
    );
    assert_eq!(
        summarize_governors(["schedutil", "performance", "schedutil"]).as_deref(),
        Some("performance, schedutil")
    );
    assert_eq!(summarize_governors([" ", ""]), None);
}

#[test]
fn recorded_tree_reads_like_the_vm() {
    let boot = tempfile::tempdir().expect("tempdir");
    let settings = read_kernel_settings_in(
        &fixture_roots(boot.path()),
        Some("6.18.44-fc-v1045"),
        Some(&device("loop0")),
        Some(&device("vda")),
    );
    assert_eq!(settings.hz, Some(250));
    assert_eq!(settings.hz_source.as_deref(), Some("/proc/config.gz"));
    assert_eq!(settings.preempt.as_deref(), Some("none"));
    assert_eq!(settings.preempt_dynamic, Some(true));
    assert!(
        settings
            .cmdline
            .as_deref()
            .is_some_and(|c| c.starts_with("mitigations=auto") && !c.ends_with('\n'))
    );
    assert_eq!(
        settings.vm,
        DirtySettings {
            dirty_ratio: Some(20),
            dirty_background_ratio: Some(10),
            dirty_bytes: Some(0),
            dirty_background_bytes: Some(0),
            dirty_expire_centisecs: Some(3000),
            dirty_writeback_centisecs: Some(500),
        }
    );
    let queue = |name: &str, wbt, nr, max_kb| QueueSettings {
        device: name.into(),
        wbt_lat_usec: Some(wbt),
        nr_requests: Some(nr),
        max_sectors_kb: Some(max_kb),
        rq_affinity: Some(1),
    };
    assert_eq!(settings.queue, Some(queue("loop0", 2000, 128, 1280)));
    assert_eq!(
        settings.backing_queue,
        Some(queue("vda", 75_000, 256, 4096))
    );
    assert_eq!(settings.cpufreq_governor, None, "the VM has no cpufreq");
    assert_eq!(settings.virtualization.is_virtual, Some(true));
    assert!(settings.probe_us.is_some());
}

#[test]
fn boot_config_when_proc_has_none_and_nothing_when_neither() {
    let boot = tempfile::tempdir().expect("tempdir");
    let text = recorded_config().replace("CONFIG_HZ=250", "CONFIG_HZ=1000");
    std::fs::write(boot.path().join("config-6.1.0-test"), text).expect("write");
    let roots = KernelRoots {
        proc: boot.path().join("no-proc"),
        ..fixture_roots(boot.path())
    };
    let settings = read_kernel_settings_in(&roots, Some("6.1.0-test"), None, None);
    assert_eq!(settings.hz, Some(1000));
    assert_eq!(
        settings.hz_source.as_deref(),
        Some("/boot/config-6.1.0-test")
    );
    assert_eq!(settings.preempt.as_deref(), Some("none"));
    // A release that would leave /boot is not looked up.
    let escaped = read_kernel_settings_in(&roots, Some("../boot/config-6.1.0-test"), None, None);
    assert_eq!((escaped.hz, escaped.preempt_dynamic), (None, None));
    // Nothing readable: every field None, no panic, and not measured (not live).
    let nothing = read_kernel_settings_in(&roots, None, None, None);
    assert_eq!(
        KernelSettings {
            probe_us: None,
            ..nothing
        },
        KernelSettings::default()
    );
}

#[test]
fn governors_of_every_policy() {
    let sys = tempfile::tempdir().expect("tempdir");
    for (policy, governor) in [("policy0", "schedutil\n"), ("policy2", "performance\n")] {
        let dir = sys.path().join("devices/system/cpu/cpufreq").join(policy);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("scaling_governor"), governor).expect("write");
    }
    let roots = KernelRoots {
        sysfs: sys.path().to_path_buf(),
        ..fixture_roots(sys.path())
    };
    let settings = read_kernel_settings_in(&roots, None, None, None);
    assert_eq!(
        settings.cpufreq_governor.as_deref(),
        Some("performance, schedutil")
    );
}

#[test]
fn this_machine_agrees_with_its_config() {
    let settings = crate::probe::read_kernel_settings(None, None, None);
    let Some(config) = std::fs::File::open("/proc/config.gz")
        .ok()
        .and_then(|f| inflate(f).ok())
    else {
        eprintln!("skipped: no /proc/config.gz on this machine");
        return;
    };
    assert_eq!(settings.hz, parse_kernel_config(&config).hz);
    let vm_ratio = std::fs::read_to_string("/proc/sys/vm/dirty_ratio").expect("sysctl");
    assert_eq!(settings.vm.dirty_ratio, parse_number_text(&vm_ratio));
    // Cheap enough to run before every run (the lab VM: well under 5 ms).
    let us = settings.probe_us.expect("timed");
    assert!(us < 100_000, "kernel settings took {us} µs");
}

#[test]
fn measured_hz_matches_the_config_as_root() {
    let readable = std::fs::read_to_string("/proc/timer_list").is_ok();
    let config = std::fs::File::open("/proc/config.gz")
        .ok()
        .and_then(|f| inflate(f).ok());
    let (true, Some(config)) = (readable, config) else {
        eprintln!("skipped: /proc/timer_list needs root and the check needs /proc/config.gz");
        return;
    };
    // A live reader whose /proc has the tick but no config falls back to measuring.
    let proc = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/proc/timer_list", proc.path().join("timer_list"))
        .expect("symlink");
    let roots = KernelRoots {
        proc: proc.path().to_path_buf(),
        boot: proc.path().to_path_buf(),
        ..KernelRoots::system()
    };
    let settings = read_kernel_settings_in(&roots, Some("none-such"), None, None);
    assert_eq!(settings.hz, parse_kernel_config(&config).hz);
    assert_eq!(
        settings.hz_source.as_deref(),
        Some("measured (jiffies over 50 ms)")
    );
}

#[test]
fn the_config_prefix_up_to_hz_says_the_same_as_the_whole() {
    let gz = std::fs::read(tree().join("proc/config.gz")).expect("fixture");
    let prefix = inflate_config_prefix(&gz[..]).expect("gzip");
    let whole = recorded_config();
    assert!(
        prefix.len() < whole.len() / 4,
        "{} of {}",
        prefix.len(),
        whole.len()
    );
    assert!(
        prefix.ends_with("CONFIG_HZ=250\n"),
        "{}",
        &prefix[prefix.len() - 40..]
    );
    assert_eq!(parse_kernel_config(&prefix), parse_kernel_config(&whole));
    // HZ before the preemption block: read on to the end, miss nothing.
    let odd = "CONFIG_HZ=100\nCONFIG_X=y\nCONFIG_PREEMPT=y\nCONFIG_PREEMPT_DYNAMIC=y\n";
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, odd.as_bytes()).expect("encode");
    let odd_gz = encoder.finish().expect("encode");
    assert_eq!(inflate_config_prefix(&odd_gz[..]).expect("gzip"), odd);
    assert!(is_preempt_model_line("CONFIG_PREEMPT_VOLUNTARY=y\n"));
    assert!(!is_preempt_model_line(
        "# CONFIG_PREEMPT_VOLUNTARY is not set"
    ));
    assert!(!is_preempt_model_line("CONFIG_PREEMPT_BUILD=y"));
    assert!(inflate_config_prefix(&b"not gzip"[..]).is_err());
}

mod never_panic {
    use proptest::prelude::*;

    use crate::probe::{
        VirtSigns, cmdline_preempt, detect_virtualization, hz_from_ticks, parse_kernel_config,
        parse_preempt_debugfs, parse_timer_list,
    };

    proptest! {
        /// The parsers read kernel texts, but a damaged or foreign one must give `None`s,
        /// never a panic.
        #[test]
        fn kernel_text_parsers(text in ".{0,200}", a in any::<(u64, u64)>(), b in any::<(u64, u64)>()) {
            let _ = parse_kernel_config(&text);
            let _ = parse_preempt_debugfs(&text);
            let _ = cmdline_preempt(&text);
            let _ = parse_timer_list(&text);
            let _ = hz_from_ticks(a, b);
            let _ = detect_virtualization(&VirtSigns {
                hypervisor_type: Some(text.clone()),
                cpuinfo: Some(format!("flags\t: {text}")),
                cpuid_signature: Some(text.clone()),
                dmi_sys_vendor: Some(text.clone()),
                dmi_product_name: Some(text),
            });
        }
    }
}
