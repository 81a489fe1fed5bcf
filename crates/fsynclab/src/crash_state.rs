//! `fsynclab crash-state`: one crash state of a failing crash test built again as an image
//! file, to mount and check by hand (issue 33; root).

use anyhow::anyhow;
use clap::Args;

use super::CliError;
use fsynclab::lab::crash_state::{CrashStateError, StateChoice, crash_state};
use fsynclab::scratch::ScratchManager;
use fsynclab::spec;
use fsynclab::store::Store;

/// `fsynclab crash-state`.
#[derive(Debug, Args)]
pub struct CrashStateArgs {
    /// The crash-tested run (see `fsynclab list`); its crash test must have failed (only a
    /// failing one keeps its log).
    pub id: i64,
    /// The image file to write (new: an existing file is never replaced); mount it with
    /// `mount -o loop`.
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// Instead of the first failing state, the state of a power cut just before this log
    /// entry, every write since the flush before it lost.
    #[arg(long, value_parser = crate::whole_number::<usize>)]
    pub cut: Option<usize>,
}

/// Writes the state and says how to look at it.
pub fn crash_state_cmd(
    db: &Option<std::path::PathBuf>,
    args: CrashStateArgs,
) -> Result<u8, CliError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::usage(CrashStateError::NotRoot));
    }
    let store = Store::open(&Store::path_for(db.as_deref())?)?;
    let state_dir = ScratchManager::default_state_dir().map_err(CliError::failed)?;
    let choice = match args.cut {
        Some(cut) => StateChoice::AllLostAt(cut),
        None => StateChoice::FirstFailure,
    };
    // A signal lets the build end and removes the image (never a half-built one left).
    let cancel = fsynclab::engine::CancelToken::new();
    super::signals::install(cancel.clone());
    let built = crash_state(&store, &state_dir, args.id, choice, &args.out, &cancel);
    if cancel.is_cancelled() {
        return Ok(super::signals::cancelled_exit_code());
    }
    let built = built.map_err(|e| match e {
        CrashStateError::Image { path, source } => CliError::usage(anyhow!(
            "--out {}: {source} (give a new file's path)",
            fsynclab::spec::shown_path(&path)
        )),
        CrashStateError::Store(e) => CliError::from(e),
        CrashStateError::NoSuchCut(why) => {
            CliError::usage(anyhow!("--cut {}: {why}", args.cut.unwrap_or_default()))
        }
        CrashStateError::Build(e) => CliError::failed(e),
        e => CliError::usage(e),
    })?;
    let s = &built.state;
    let out = fsynclab::spec::shown_path(&args.out);
    outln!(
        "wrote run {}'s crash state to {out} ({}, sparse): the power cut before log entry {} of \
         {}, {} write(s) since the flush before it dropped",
        args.id,
        spec::format_size(built.size),
        s.cut,
        built.entries,
        s.dropped.len()
    );
    outln!(
        "look at it:  sudo mount -o loop {out} /mnt   (the mount replays the journal, as after a crash)"
    );
    outln!(
        "check it:    after unmounting, the filesystem's checker on {out} (e2fsck -fn, xfs_repair -n, btrfs check --readonly)"
    );
    Ok(0)
}

/// A crash test's findings in the CLI's words: the library's lines, then — when its log was
/// kept — the command that builds its first failing state again (naming `--db` when one was
/// given).
pub(crate) fn crash_lines(
    run_id: i64,
    r: &fsynclab::crashlog::CrashReport,
    db: Option<&std::path::Path>,
) -> String {
    let mut text = fsynclab::report::crash_text(r);
    if r.first_failure.is_some() && r.kept_log.is_some() {
        let db = db
            .map(|d| {
                format!(
                    " --db {}",
                    fsynclab::report::shell_word(&d.to_string_lossy())
                )
            })
            .unwrap_or_default();
        text.push_str(&format!(
            "build it again: sudo fsynclab{db} crash-state {run_id} --out crash-state-{run_id}.img\n"
        ));
    }
    text
}
