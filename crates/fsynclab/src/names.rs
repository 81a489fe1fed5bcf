//! How the CLI names a setting in a library message: as the flag that sets it. The one
//! table of setting → flag; a test checks every flag in it is one `fsynclab` accepts.

use fsynclab::spec::{Setting, SettingNames};

/// How the command line sets a [`Setting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliFlag {
    /// A flag of its own (`bs` for `--bs`), followed by the value when one is proposed.
    Long(&'static str),
    /// Only through `--set key=value` (`N` stands for the value when none is proposed).
    Set,
    /// A preset-file field with no flag: named by its key.
    PresetOnly,
}

/// The flag that sets `setting`: a workload field's from its row of the settings table,
/// an option's from the list below.
pub fn flag(setting: Setting) -> CliFlag {
    use CliFlag::{Long, PresetOnly};
    match setting {
        Setting::Field(def) => def.flag.map_or(CliFlag::Set, Long),
        Setting::Set => Long("set"),
        Setting::Scale => Long("scale"),
        Setting::Series => Long("series"),
        Setting::SeriesSweep | Setting::Matrix => PresetOnly,
        Setting::Sweep => Long("sweep"),
        Setting::Repeat => Long("repeat"),
        Setting::AdviseBudget => Long("p99"),
        Setting::Target => Long("target"),
        Setting::Keep => Long("keep"),
        Setting::AllowSharedTarget => Long("allow-shared-target"),
        Setting::KernelTrace => Long("kernel-trace"),
        Setting::Database => Long("db"),
        Setting::Force => Long("force"),
        Setting::ScratchFs => Long("fs"),
        Setting::MkfsOpts => Long("mkfs-opts"),
        Setting::MountOpts => Long("mount-opts"),
        Setting::Backing => Long("backing"),
        Setting::ScratchSize => Long("size"),
        Setting::ScratchName => Long("name"),
        Setting::Device => Long("device"),
        Setting::DestroyDataOn => Long("destroy-data-on"),
        Setting::DeviceOffset => Long("offset"),
        Setting::DeviceSize => Long("size"),
        Setting::OverwriteSignature => Long("overwrite-signature"),
        Setting::Kind => Long("kind"),
    }
}

/// The CLI's [`SettingNames`]: flags (`--bs 4k`, `--set interval_ms=100`); an error's
/// subject stays the preset key (`block_size: ...`), as `--set` and presets name it.
#[derive(Clone, Copy, Debug, Default)]
pub struct CliNames;

impl SettingNames for CliNames {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        match (flag(setting), value) {
            (CliFlag::Long(f), None) => format!("--{f}"),
            (CliFlag::Long(f), Some(v)) => format!("--{f} {v}"),
            (CliFlag::Set, v) => format!("--set {}={}", setting.key(), v.unwrap_or("N")),
            (CliFlag::PresetOnly, None) => setting.key().to_string(),
            (CliFlag::PresetOnly, Some(v)) => format!("{} = {v}", setting.key()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn long_flags(cmd: &clap::Command, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                out.push(format!("--{long}"));
            }
        }
        for sub in cmd.get_subcommands() {
            long_flags(sub, out);
        }
    }

    #[test]
    fn every_setting_has_a_flag_fsynclab_accepts() {
        let mut accepted = Vec::new();
        long_flags(&crate::Cli::command(), &mut accepted);
        for setting in Setting::all() {
            match flag(setting) {
                CliFlag::Long(f) => assert!(
                    accepted.iter().any(|a| *a == format!("--{f}")),
                    "{setting:?}: {f} is no flag of fsynclab"
                ),
                CliFlag::Set => assert!(setting.is_workload_field(), "{setting:?}"),
                CliFlag::PresetOnly => {
                    assert!(matches!(setting, Setting::SeriesSweep | Setting::Matrix))
                }
            }
        }
    }

    #[test]
    fn flags_carry_the_value_proposed() {
        let n = CliNames;
        assert_eq!(n.name(Setting::BLOCK_SIZE, None), "--bs");
        assert_eq!(n.name(Setting::RECORD_SIZE, Some("4k")), "--record-size 4k");
        assert_eq!(
            n.name(Setting::FILES_PER_CLIENT, None),
            "--set fileserver.files_per_client=N"
        );
        assert_eq!(
            n.name(Setting::INTERVAL_MS, Some("100")),
            "--set interval_ms=100"
        );
        assert_eq!(n.subject(Setting::BLOCK_SIZE), "block_size");
    }

    /// The CLI says exactly what it said when the library wrote flags into its messages.
    #[test]
    fn spec_errors_read_as_before() {
        use fsynclab::spec::{FlatSpec, Worded, WorkloadKind};
        let cases = [
            (
                FlatSpec {
                    sync_every: 0,
                    ..FlatSpec::default()
                }
                .typed(),
                "sync_every: 0 writes between syncs; use 1 or more, or --sync none to never sync (--sync-every)",
            ),
            (
                FlatSpec {
                    kind: WorkloadKind::Fileserver,
                    threads: 0,
                    duration_s: Some(1.0),
                    ..FlatSpec::default()
                }
                .typed(),
                "threads: 0 clients; use 1 to 1024 (--clients)",
            ),
            (
                FlatSpec {
                    interval_ms: 1,
                    ..FlatSpec::default()
                }
                .typed(),
                "interval_ms: 1 ms; use 10 to 60000 ms (--set interval_ms=100)",
            ),
        ];
        for (spec, said) in cases {
            assert_eq!(spec.validate().unwrap_err().worded(&CliNames), said);
        }
    }

    #[test]
    fn scratch_store_and_report_errors_read_as_before() {
        use fsynclab::scratch::ScratchError;
        use fsynclab::spec::Worded;
        let no_space = ScratchError::NoSpace {
            needed: 2 << 30,
            available: 512 << 20,
            dir: "/dev/shm/fsynclab-scratch".into(),
            alternative: "disk".into(),
        };
        assert_eq!(
            no_space.worded(&CliNames),
            "a 2G image does not fit in /dev/shm/fsynclab-scratch (512M free); lower --size or use --backing disk"
        );
        let mismatch = ScratchError::ConfirmMismatch {
            device: "/dev/sdX".into(),
            given: "/dev/sdY".into(),
        };
        assert_eq!(
            mismatch.worded(&CliNames),
            "--destroy-data-on /dev/sdY does not match the device /dev/sdX; --destroy-data-on must \
             repeat the exact device name /dev/sdX to confirm that all data on it will be destroyed"
        );
        let damaged = fsynclab::store::StoreError::Damaged {
            path: "/x.db".into(),
            problem: "file is not a database".into(),
            source: None,
        };
        assert!(
            damaged
                .worded(&CliNames)
                .ends_with("or choose another file with --db"),
            "{damaged}"
        );
        let exists = fsynclab::report::OutputError::Exists {
            path: "/r.png".into(),
            part: "",
            link: "",
        };
        assert_eq!(
            exists.worded(&CliNames),
            "/r.png already exists; choose another file, or replace it with --force (a link is \
             replaced, never written through)"
        );
    }

    #[test]
    fn engine_errors_read_as_before() {
        use fsynclab::engine::{EngineError, IoFailure, TargetError};
        use fsynclab::lab::engine_words;
        use fsynclab::report::io_failure_text;
        use fsynclab::spec::{Setting, WorkloadKind};
        let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let full = IoFailure::new(
            WorkloadKind::Fileserver,
            "write",
            "/mnt/x/f".into(),
            Some(4096),
            &enospc,
            false,
        );
        assert_eq!(
            io_failure_text(&full, &CliNames),
            "no space left on device during write of /mnt/x/f at offset 4096; free space on the \
             target or lower --clients (or --set fileserver.files_per_client=N)"
        );
        let inodes = IoFailure {
            kind: WorkloadKind::Smallfiles,
            inodes_exhausted: true,
            ..full.clone()
        };
        assert!(
            io_failure_text(&inodes, &CliNames).contains("; lower --files (or --threads) or use")
        );
        let unaligned = EngineError::from(TargetError::Unaligned {
            setting: Setting::BLOCK_SIZE,
            size_bytes: 512,
            logical_block_size: 4096,
        });
        assert!(
            engine_words(&unaligned, &CliNames)
                .ends_with("O_DIRECT needs aligned I/O: use --bs 4k")
        );
        let missing = EngineError::from(TargetError::Missing {
            path: "/nope".into(),
            at: None,
            cause: fsynclab::metrics::IoCause::Os(libc::ENOENT),
        });
        assert_eq!(
            engine_words(&missing, &CliNames),
            "target /nope does not exist; create it or choose an existing directory with --target"
        );
        let spawn = EngineError::Spawn {
            threads: 9000,
            source: std::io::Error::from_raw_os_error(libc::EAGAIN),
        };
        assert!(engine_words(&spawn, &CliNames).ends_with("; lower --threads"));
        // The chain stops at an error that explained its cause: no trailing "(os error 2)".
        let chain = anyhow::Error::new(fsynclab::lab::LabError::Engine(missing));
        assert!(!crate::chain_text(&chain).contains("os error"));
    }
}
