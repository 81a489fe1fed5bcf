//! `fsynclab scratch` (create, list, destroy loop-image filesystems) and `fsynclab matrix`
//! (a preset on a fresh scratch filesystem per configuration, then the comparison).

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};

use super::{CliError, launch::lab_error, open_store};
use fsynclab::lab::{self, Launch, MatrixSpec, RunRequest};
use fsynclab::report;
use fsynclab::scratch::{
    Backing, CreateRequest, FsKind, ScratchManager, check_mkfs_options, check_mount_options,
};
use fsynclab::spec;

/// `fsynclab scratch ...`.
#[derive(Debug, Args)]
pub struct ScratchArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ScratchAction,
}

/// The scratch actions.
#[derive(Debug, Subcommand)]
pub enum ScratchAction {
    /// Make a fresh filesystem on a loop image (or a real device) and mount it.
    Create(CreateArgs),
    /// List the scratch filesystems.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Unmount and delete one scratch filesystem, or all (and stale leftovers).
    Destroy {
        /// Name (see `fsynclab scratch list`).
        name: Option<String>,
        /// Every scratch filesystem, plus stale fsynclab mounts and loop devices.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
}

/// Arguments of `fsynclab scratch create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Filesystem: ext4, xfs or btrfs.
    #[arg(long, value_parser = str::parse::<FsKind>)]
    pub fs: FsKind,
    /// Image size (e.g. 2G).
    #[arg(long, default_value = "2G", value_parser = spec::parse_size)]
    pub size: u64,
    /// Extra mkfs options, e.g. "-O ^has_journal".
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub mkfs_opts: String,
    /// Mount options, e.g. "nossd" or "data=journal,commit=5".
    #[arg(long, default_value = "")]
    pub mount_opts: String,
    /// Where the image lives: disk (the data directory) or ram (/dev/shm).
    #[arg(long, default_value = "disk", value_parser = str::parse::<Backing>)]
    pub backing: Backing,
    /// Name (default: <fs>-<n>).
    #[arg(long)]
    pub name: Option<String>,
    /// Attach the loop device with direct I/O to its image (no double caching).
    #[arg(long)]
    pub loop_dio: bool,
    /// Use this real block device instead of an image (ALL ITS DATA IS DESTROYED).
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Repeat the exact device name to confirm its data will be destroyed.
    #[arg(long)]
    pub destroy_data_on: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fsynclab matrix`.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Preset name or .toml path.
    #[arg(long)]
    pub preset: String,
    /// Scale the preset (e.g. 0.05).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Use the preset's N-th suggested matrix (see `fsynclab presets NAME`).
    #[arg(long, conflicts_with_all = ["fs", "mkfs_opts", "mount_opts", "backing"])]
    pub suggested: Option<usize>,
    /// Filesystem (repeatable).
    #[arg(long, value_parser = str::parse::<FsKind>)]
    pub fs: Vec<FsKind>,
    /// mkfs option set (repeatable; each is one configuration).
    #[arg(long, allow_hyphen_values = true)]
    pub mkfs_opts: Vec<String>,
    /// Mount option set (repeatable; each is one configuration).
    #[arg(long)]
    pub mount_opts: Vec<String>,
    /// Backing (repeatable): disk or ram.
    #[arg(long, value_parser = str::parse::<Backing>)]
    pub backing: Vec<Backing>,
    /// Image size of each scratch filesystem.
    #[arg(long, default_value = "2G", value_parser = spec::parse_size)]
    pub size: u64,
    /// Runs per configuration.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Set any workload field (repeatable), as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Trace the kernel's side of each run (see `fsynclab run --kernel-trace`).
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "FSYNCLAB_KERNEL_TRACE",
        value_name = "MODE"
    )]
    pub kernel_trace: super::run::KernelTraceArg,
}

fn manager() -> Result<ScratchManager, CliError> {
    ScratchManager::default_state_dir()
        .map(ScratchManager::new)
        .map_err(CliError::failed)
}

fn scratch_error(e: fsynclab::scratch::ScratchError) -> CliError {
    CliError::usage_if(e.is_usage(), e)
}

/// `fsynclab scratch`.
pub fn scratch(db: &Option<PathBuf>, args: ScratchArgs) -> Result<u8, CliError> {
    let mut manager = manager()?;
    // Protect the database's device from --device (and "/", always).
    if let Some(db_path) = db
        .clone()
        .or_else(|| fsynclab::store::Store::default_path().ok())
    {
        manager = manager.protect_paths(vec![db_path]);
    }
    match args.action {
        ScratchAction::Create(a) => {
            // A refused option exits 2 before anything (even stale cleanup) is touched.
            check_mkfs_options(a.fs, &a.mkfs_opts).map_err(|e| scratch_error(e.into()))?;
            check_mount_options(a.fs, &a.mount_opts).map_err(|e| scratch_error(e.into()))?;
            // Not root: say so once, before a stale-state cleanup that would fail the same
            // way (it printed a warning first, issue 31).
            fsynclab::scratch::require_root(nix::unistd::geteuid().as_raw())
                .map_err(scratch_error)?;
            match manager.cleanup_stale() {
                Ok(done) => done.iter().for_each(|s| errln!("cleaned up: {s}")),
                Err(e) => errln!("warning: stale scratch state could not be cleaned up: {e}"),
            }
            let backing = match &a.device {
                Some(path) => Backing::Device { path: path.clone() },
                None => a.backing,
            };
            let recipe = manager
                .create(&CreateRequest {
                    name: a.name,
                    fs: a.fs,
                    size_bytes: a.size,
                    mkfs_opts: a.mkfs_opts,
                    mount_opts: a.mount_opts,
                    backing,
                    loop_direct_io: a.loop_dio,
                    destroy_data_on: a.destroy_data_on,
                })
                .map_err(scratch_error)?;
            if a.json {
                let one = serde_json::json!(recipe);
                super::launch::print_json(&report::versioned([("scratch", one)]))?;
            } else {
                outln!(
                    "{} ready: {} on {} mounted at {}\nrun on it: fsynclab run --target {} ...",
                    recipe.name,
                    recipe.fs.as_str(),
                    recipe.device,
                    fsynclab::spec::shown_path(&recipe.mount_point),
                    fsynclab::spec::shown_path(&recipe.mount_point)
                );
            }
        }
        ScratchAction::List { json } => {
            let list = manager.list().map_err(scratch_error)?;
            if json {
                let all = serde_json::json!(list);
                super::launch::print_json(&report::versioned([("scratch", all)]))?;
            } else if list.is_empty() {
                outln!(
                    "no scratch filesystems; make one with `fsynclab scratch create --fs ext4 --size 2G`"
                );
            } else {
                for s in list {
                    let r = &s.recipe;
                    outln!(
                        "{:<14} {:<6} {:>6} {:<5} {:<12} mount -o {:<24} mkfs {:<16} {}{}",
                        r.name,
                        r.fs.as_str(),
                        spec::format_size(r.size_bytes),
                        r.backing.describe(),
                        r.device,
                        if r.mount_opts.is_empty() {
                            "(defaults)"
                        } else {
                            &r.mount_opts
                        },
                        if r.mkfs_opts.is_empty() {
                            "(defaults)"
                        } else {
                            &r.mkfs_opts
                        },
                        fsynclab::spec::shown_path(&r.mount_point),
                        if s.mounted { "" } else { "  (NOT MOUNTED)" }
                    );
                }
            }
        }
        ScratchAction::Destroy { name, all } => match (name, all) {
            (Some(n), false) => {
                manager.destroy(&n).map_err(scratch_error)?;
                outln!("destroyed {n}");
            }
            (None, true) => {
                for line in manager.destroy_all().map_err(scratch_error)? {
                    outln!("{line}");
                }
            }
            _ => {
                return Err(CliError::usage(anyhow!(
                    "name a scratch filesystem to destroy, or pass --all (see fsynclab scratch list)"
                )));
            }
        },
    }
    Ok(0)
}

/// `fsynclab matrix`.
pub fn matrix(db: &Option<PathBuf>, args: MatrixArgs) -> Result<u8, CliError> {
    let preset = spec::load_preset(&args.preset).map_err(CliError::usage)?;
    let mut workload = preset.scaled(args.scale).map_err(CliError::usage)?;
    for s in &args.settings {
        workload = spec::apply_setting(&workload, s).map_err(CliError::usage)?;
    }
    let matrix = match args.suggested {
        Some(n) => {
            let suggestion = preset.matrix.get(n.wrapping_sub(1)).ok_or_else(|| {
                CliError::usage(anyhow!(
                    "preset '{}' has {} suggested matrices; use --suggested 1..{} (see fsynclab presets {})",
                    preset.name,
                    preset.matrix.len(),
                    preset.matrix.len(),
                    preset.name
                ))
            })?;
            MatrixSpec::from_suggestion(suggestion, args.size)
                .map_err(|e| CliError::usage(anyhow!(e)))?
        }
        None => MatrixSpec {
            fs: args.fs,
            mkfs_opts: args.mkfs_opts,
            mount_opts: args.mount_opts,
            backing: args.backing,
            size_bytes: args.size,
            loop_direct_io: false,
        },
    };
    if matrix.fs.is_empty() {
        return Err(CliError::usage(anyhow!(
            "name at least one filesystem: --fs ext4|xfs|btrfs (repeatable)"
        )));
    }
    lab::check_repeat("--repeat", args.repeat).map_err(|e| CliError::usage(anyhow!(e)))?;
    let configs = matrix.config_count();
    if !(2..=lab::MAX_SWEEP_VALUES).contains(&configs) {
        return Err(CliError::usage(anyhow!(
            "the matrix has {configs} configuration(s); give 2 to {} across --fs, --mkfs-opts, \
             --mount-opts and --backing",
            lab::MAX_SWEEP_VALUES
        )));
    }
    matrix.check_options().map_err(scratch_error)?;
    let store = open_store(db, fsynclab::store::OpenMode::ReadWrite)?;
    let mut manager = manager()?;
    if let Some(p) = store.path() {
        manager = manager.protect_paths(vec![p.to_path_buf()]);
    }
    for s in manager.cleanup_stale().map_err(scratch_error)? {
        errln!("cleaned up: {s}");
    }
    let request = RunRequest {
        spec: workload,
        target: PathBuf::from("/"),
        label: None,
        tags: vec!["matrix".into()],
        preset: Some(preset.name.clone()),
        preset_scale: Some(args.scale),
        experiment_id: None,
        keep_files: false,
        allow_shared_target: false,
        background_window: None,
        quiet: None,
        origin: None,
        warnings: Vec::new(),
        kernel_trace: args.kernel_trace.into(),
        device: None,
    };
    let launch = Launch::Matrix {
        request,
        matrix,
        scratch: manager,
        repeat: args.repeat,
    };
    let progress = super::progress::Progress::for_stderr(args.quiet, None)?;
    super::launch::run(
        &store,
        &launch.validate().map_err(lab_error)?,
        progress,
        false,
    )
}
