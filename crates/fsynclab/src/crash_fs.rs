//! `fsynclab crash-fs create|list|destroy` (a lasting crash-test filesystem, root) and
//! `run --crash-check` on one (issue 33).

use anyhow::anyhow;
use clap::{Args, Subcommand};

use super::CliError;
use super::crashtest::{crash_error, device_error};
use fsynclab::crashdev::{DaemonField, DaemonProgram, DeviceError, LastingDevice};
use fsynclab::crashlog::PlanOptions;
use fsynclab::engine::CancelToken;
use fsynclab::lab::{Launch, ValidLaunch};
use fsynclab::report;
use fsynclab::scratch::{FsKind, ScratchManager};
use fsynclab::spec;
use fsynclab::store::Store;

/// `fsynclab crash-fs ...`.
#[derive(Debug, Args)]
pub struct CrashFsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: CrashFsAction,
}

/// The crash-fs actions.
#[derive(Debug, Subcommand)]
pub enum CrashFsAction {
    /// Make a filesystem on fsynclab's recording device and mount it; it lasts until
    /// destroyed. Runs in it with --crash-check are checked for power cuts.
    Create {
        /// Its name (a-z, 0-9, _ and -, starting with a letter or digit; at most 32) [default:
        /// the filesystem's].
        #[arg(long)]
        name: Option<String>,
        /// ext4, xfs or btrfs.
        #[arg(long, value_parser = str::parse::<FsKind>)]
        fs: FsKind,
        /// Size of the recording device (64M to 4G; xfs needs 300M) [default: 256M, 320M
        /// for xfs]. Its image is sparse.
        #[arg(long, value_parser = spec::parse_size)]
        size: Option<u64>,
        /// mkfs options, as `scratch create` takes them (allow-listed).
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        mkfs_opts: String,
        /// Mount options, as `scratch create` takes them (allow-listed).
        #[arg(long, default_value = "")]
        mount_opts: String,
    },
    /// List the crash-test filesystems.
    List {
        /// Print JSON: `{"schema_version", "crash_fs": [...]}` (docs/EXPORT.md).
        #[arg(long)]
        json: bool,
    },
    /// Unmount and delete one: its filesystem, loop device, recording device and log.
    Destroy {
        /// Its name (see `crash-fs list`).
        name: String,
    },
}

/// The power cuts `run --crash-check` checks.
#[derive(Debug, Args)]
pub struct CrashCheckArgs {
    /// After the run, check its power cuts: the target must be on a crash-test filesystem
    /// (`crash-fs create`); exit 3 when an acknowledged record was lost (root).
    #[arg(long, help_heading = "Crash check", conflicts_with_all = ["fio_job", "series", "sweep"])]
    pub crash_check: bool,
    /// With --crash-check: at most this many cut points [default: 64].
    #[arg(long, requires = "crash_check", value_parser = crate::whole_number::<usize>, help_heading = "Crash check")]
    pub cuts: Option<usize>,
    /// With --crash-check: random subsets per cut beyond "all lost" [default: 4].
    #[arg(long, requires = "crash_check", value_parser = crate::whole_number::<usize>, help_heading = "Crash check")]
    pub subsets: Option<usize>,
    /// With --crash-check: the subsets' seed [default: 1].
    #[arg(long, requires = "crash_check", value_parser = crate::whole_number::<u64>, help_heading = "Crash check")]
    pub seed: Option<u64>,
    /// With --crash-check: also the reordered state per cut (see crashtest --reorder).
    #[arg(long, requires = "crash_check", help_heading = "Crash check")]
    pub reorder: bool,
}

impl CrashCheckArgs {
    /// The plan, checked: each refusal names its flag.
    fn plan(&self) -> Result<PlanOptions, CliError> {
        let (cuts, subsets) = (self.cuts.unwrap_or(64), self.subsets.unwrap_or(4));
        super::crashtest::check_plan(cuts, subsets)?;
        Ok(PlanOptions {
            cuts: Some(cuts),
            subsets,
            seed: self.seed.unwrap_or(1),
            reorder: self.reorder,
        })
    }
}

/// Root's state directory, checked as the scratch filesystems' is (exit 2 when it cannot be
/// trusted: a link, another user's, writable by others).
fn state_dir() -> Result<std::path::PathBuf, CliError> {
    let dir = ScratchManager::default_state_dir().map_err(CliError::failed)?;
    ScratchManager::new(dir)
        .checked_state_dir()
        .map_err(CliError::usage)
}

/// `fsynclab crash-fs ...` (root).
pub fn crash_fs(args: CrashFsArgs) -> Result<u8, CliError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::usage(anyhow!(
            "only root makes and lists crash-test filesystems: they mount /dev/fuse and loop devices"
        )));
    }
    match args.action {
        CrashFsAction::Create {
            name,
            fs,
            size,
            mkfs_opts,
            mount_opts,
        } => {
            let size = size.unwrap_or(if fs == FsKind::Xfs {
                320 << 20
            } else {
                256 << 20
            });
            super::crashtest::check_size(fs, size)?;
            let name = name.unwrap_or_else(|| fs.as_str().to_string());
            let program = std::env::current_exe().map_err(|e| {
                CliError::failed(anyhow!(
                    "this program's own path (it serves the recording device): {e}"
                ))
            })?;
            let device = LastingDevice::create(
                &DaemonProgram::fsynclab(program),
                &state_dir()?,
                &name,
                fs,
                size,
                (&mkfs_opts, &mount_opts),
            )
            .map_err(device_error)?;
            outln!(
                "crash-test filesystem {name}: {} ({}) on a recording device, mounted at {}",
                fs.as_str(),
                spec::format_size(size),
                fsynclab::spec::shown_path(&device.mount_point())
            );
            outln!(
                "run in it with: sudo fsynclab run --crash-check --target {} ...",
                report::shell_word(&device.mount_point().to_string_lossy())
            );
            Ok(0)
        }
        CrashFsAction::List { json } => {
            let (all, damaged) = LastingDevice::list(&state_dir()?).map_err(device_error)?;
            if json {
                let list: Vec<serde_json::Value> = all.iter().map(status_json).collect();
                let bad: Vec<serde_json::Value> = damaged
                    .iter()
                    .map(|(name, why)| serde_json::json!({"name": name, "why": why}))
                    .collect();
                let doc = report::versioned([
                    ("crash_fs", serde_json::Value::from(list)),
                    ("damaged", serde_json::Value::from(bad)),
                ]);
                super::launch::print_json(&doc)?;
                return Ok(0);
            }
            if all.is_empty() && damaged.is_empty() {
                outln!("no crash-test filesystems (make one with crash-fs create)");
            }
            for d in all {
                let state = match (d.serving, d.mounted, &d.other_mount) {
                    (false, ..) => "its daemon is gone: crash-fs destroy it".to_string(),
                    (true, true, _) => "mounted".to_string(),
                    (true, false, Some(other)) => format!(
                        "not mounted: {other} is mounted at its mount point (unmount it)"
                    ),
                    (true, false, None) => "not mounted: a check is in progress, or one was stopped (the next run --crash-check mounts it again)".to_string(),
                };
                outln!(
                    "{}\t{} {}\t{}\tlog {}\t{}",
                    d.info.name,
                    d.info.fs.as_str(),
                    spec::format_size(d.info.size),
                    fsynclab::spec::shown_path(&d.mount_point),
                    fsynclab::scratch::human_size(d.log_bytes),
                    state
                );
            }
            for (name, why) in damaged {
                outln!("{name}\tdamaged ({why}): crash-fs destroy it");
            }
            Ok(0)
        }
        CrashFsAction::Destroy { name } => {
            let done = LastingDevice::destroy(&state_dir()?, &name).map_err(|e| match e {
                DeviceError::Refused {
                    field: DaemonField::Name,
                    value,
                    why,
                } => CliError::usage(anyhow!("crash-fs destroy {value}: {why}")),
                e => device_error(e),
            })?;
            for line in done {
                outln!("{line}");
            }
            Ok(0)
        }
    }
}

/// One crash-test filesystem in `crash-fs list --json`.
fn status_json(d: &fsynclab::crashdev::LastingStatus) -> serde_json::Value {
    serde_json::json!({
        "name": d.info.name,
        "fs": d.info.fs.as_str(),
        "size_bytes": d.info.size,
        "mkfs_options": d.info.mkfs_options,
        "mount_options": d.info.mount_options,
        "mount_point": d.mount_point,
        "mounted": d.mounted,
        "other_mount": d.other_mount,
        "serving": d.serving,
        "log_bytes": d.log_bytes,
    })
}

/// `run --crash-check`: the single run `launch` on a crash-test filesystem, then its power
/// cuts checked. Exit 0 when nothing acknowledged was lost, 3 when something was, 1 when the
/// workload failed.
pub fn crash_checked(
    db: &Option<std::path::PathBuf>,
    check: &CrashCheckArgs,
    launch: ValidLaunch,
    json: bool,
) -> Result<u8, CliError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::usage(anyhow!(
            "--crash-check: only root checks power cuts (they mount loop devices)"
        )));
    }
    let plan = check.plan()?;
    let Launch::Single(request) = launch.launch() else {
        return Err(CliError::usage(anyhow!(
            "--crash-check checks one run: drop --repeat"
        )));
    };
    let store = Store::open(&Store::path_for(db.as_deref())?)?;
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    let outcome = fsynclab::lab::crash_check::crash_checked_run(
        &store,
        request,
        plan,
        &state_dir()?,
        &cancel,
    )
    .map_err(crash_error)?;
    if cancel.is_cancelled() {
        errln!("cancelled: the run is stored as cancelled and no power cut was checked");
        return Ok(super::signals::cancelled_exit_code());
    }
    let headline = format!(
        "crash check: {}, stored as run {}",
        outcome.run.spec.describe(),
        outcome.run.id
    );
    super::crashtest::print_outcome(&outcome, json, &headline, "check", db)
}
