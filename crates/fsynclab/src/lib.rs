//! The headless front end: parse arguments, call the library, render. No statistic is
//! computed here.

/// `println!` that ignores a closed stdout (`fsynclab list | head`): the command still
/// completes, stores its run and cleans up; only the rest of the output is lost. Control
/// and bidi characters (from a stored label, say) are escaped: nothing raw reaches the
/// terminal.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stdout().lock(), "{}", fsynclab::spec::escape_control(&text));
    }};
}

/// `print!` that ignores a closed stdout and escapes control characters (see `outln!`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = write!(std::io::stdout().lock(), "{}", fsynclab::spec::escape_control(&text));
    }};
}

/// `eprintln!` that escapes control characters (see `outln!`): error chains quote
/// labels, paths and stored errors. A closed stderr is ignored (`2>&1 | head -0`): the exit
/// code still says what happened.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", fsynclab::spec::escape_control(&text));
    }};
}

mod advise;
mod browse;
mod compare;
mod crash_controls;
mod crash_fs;
mod crash_state;
mod crashtest;
mod device_args;
mod export;
mod fio_export;
mod fio_job;
mod fleet;
mod import;
mod launch;
mod listing;
mod names;
mod progress;
mod run;
mod scratch;
mod shell;
mod signals;
mod sudo;
mod trend;
mod workload_args;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use listing::preset_text;
pub use names::{CliFlag, CliNames, flag};

use fsynclab::store::{OpenMode, Store, StoreError};

/// Command-line interface of fsynclab.
#[derive(Debug, Parser)]
#[command(
    name = "fsynclab",
    version,
    about = "A lab for running and comparing fsync experiments",
    long_about = "A lab for running and comparing fsync experiments.\n\nWithout a subcommand it opens \
                  the lab window; the subcommands run the same library headless."
)]
#[cfg_attr(
    not(feature = "gui"),
    command(
        long_about = "A lab for running and comparing fsync experiments.\n\nThis is a \
                          headless build (no `gui` feature): it has no lab window; the \
                          subcommands run everything."
    )
)]
pub struct Cli {
    /// SQLite database of runs [default: $XDG_DATA_HOME/fsynclab/fsynclab.sqlite]
    #[arg(long, global = true, env = "FSYNCLAB_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// What to do (none: open the lab window).
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The process's command line, read as [`Parser::parse`] reads it (a mistake prints
    /// clap's message and exits 2), except that a value that looks like a negative number
    /// is the option's value: `--offset -512` reaches the offset's own check, which names
    /// the option and what it takes, where clap alone would call `-5` an unknown flag.
    pub fn parse_args() -> Self {
        Self::try_parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// [`Cli::parse_args`] on the given arguments (the first is the program name).
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let mut command = negatives_are_values(Self::command());
        // An empty FSYNCLAB_DB (`export FSYNCLAB_DB=` to clear it) is no database named:
        // clap read it as `--db` without a value and refused every command.
        if std::env::var_os("FSYNCLAB_DB").is_some_and(|v| v.is_empty()) {
            command = command.mut_arg("db", |a| a.env(None::<&str>));
        }
        let matches = command.try_get_matches_from(args)?;
        Self::from_arg_matches(&matches).map_err(|e| e.format(&mut Self::command()))
    }
}

/// A whole number for a flag, its refusal in words (clap's own parsers say "invalid digit
/// found in string" or "-3 is not in 0..=4294967295").
fn whole_number<T: TryFrom<i128>>(text: &str) -> Result<T, String> {
    let n: i128 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if n < 0 {
        return Err(format!(
            "'{text}' is negative: give a whole number in the option's range (see --help)"
        ));
    }
    T::try_from(n).map_err(|_| format!("'{text}' is too large"))
}

/// `cmd` and its subcommands with every option that takes a value taking a negative
/// number as one.
fn negatives_are_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negatives_are_values)
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workload (a preset or ad-hoc options) and store the result.
    #[command(after_help = run::RUN_EXAMPLES)]
    Run(Box<run::RunArgs>),
    /// List stored runs, newest first.
    List(browse::ListArgs),
    /// Show one stored run in full.
    Show(browse::ShowArgs),
    /// List the built-in presets, or show one.
    Presets(browse::PresetsArgs),
    /// Compare two sides (run ids, exp:N or labels): statistics table with significance;
    /// with --fail-on, a regression gate (exit 3 when the candidate is significantly worse).
    Compare(compare::CompareArgs),
    /// Write a comparison report: .png, .svg, .md (with image), .csv or .json.
    Report(compare::ReportArgs),
    /// A metric over the history of one workload (--label, --preset) and the runs where it
    /// changed, with the ratio and what differs either side.
    Trend(trend::TrendArgs),
    /// Which way of making commits durable is fastest on a target, proven safe: every
    /// group-commit strategy at several writer counts, the sync parallelism, the sync
    /// methods (docs/ADVISOR.md).
    #[command(after_help = advise::ADVISE_EXAMPLES)]
    Advise(advise::AdviseArgs),
    /// Scratch filesystems on loop images (root): create, list, destroy.
    Scratch(scratch::ScratchArgs),
    /// Run a preset on a fresh scratch filesystem per configuration and compare (root).
    Matrix(scratch::MatrixArgs),
    /// Crash-test a workload (root): run it on fsynclab's recording device, then check every
    /// planned power cut for the records it acknowledged (exit 3 when one is lost).
    Crashtest(crashtest::CrashtestArgs),
    /// Crash-test filesystems that last (root): create, list, destroy. Runs in one with
    /// `run --crash-check` are checked for power cuts.
    #[command(name = "crash-fs")]
    CrashFs(crash_fs::CrashFsArgs),
    /// Build one crash state of a failing crash test again, as an image file to mount and
    /// check (root).
    CrashState(crash_state::CrashStateArgs),
    /// Serve a crash test's recording device (started by fsynclab itself; root).
    #[command(hide = true, name = "crash-device")]
    CrashDevice(crashtest::CrashDeviceArgs),
    /// Print a fio job file for a preset's or a stored run's workload (fileio only), to
    /// cross-check fsynclab against fio.
    ExportFioJob(fio_export::ExportFioArgs),
    /// Import fio's JSON or JSON+ output (client mode too) as finished runs of kind fio.
    Import(import::ImportArgs),
    /// Run one fio job on many machines through fio's client/server mode (`fio --server`
    /// on each): one experiment per host, runs labelled LABEL@HOST:PORT.
    Fleet(fleet::FleetArgs),
    /// Export runs (--runs, --label, --experiment or --all): --format bundle writes a
    /// self-contained SQLite file for `fsynclab import` elsewhere.
    Export(export::ExportArgs),
    /// Remove the fsynclab-<id> directories of runs whose process is gone (killed runs);
    /// only directories the database records, never anything else.
    Clean,
    /// Print a shell completion script: `fsynclab completions bash > ~/.local/share/bash-completion/completions/fsynclab`.
    Completions(shell::CompletionsArgs),
    /// Print the manual page (roff) of fsynclab or of one subcommand: `fsynclab man | man -l -`.
    Man(shell::ManArgs),
}

/// Exit code for a usage or validation error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a run that failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code of `compare --fail-on` when the candidate is significantly worse.
pub const EXIT_REGRESSION: u8 = 3;
/// Exit code for a run cancelled with Ctrl-C (SIGINT); SIGTERM gives 143 and SIGHUP 129
/// (128 + the signal).
pub const EXIT_CANCELLED: u8 = 130;

/// An error with the exit code it should produce.
#[derive(Debug)]
pub struct CliError {
    /// Process exit code.
    pub code: u8,
    /// The error chain to print.
    pub error: anyhow::Error,
}

impl CliError {
    fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: EXIT_USAGE,
            error: error.into(),
        }
    }
    fn failed(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: EXIT_FAILED,
            error: error.into(),
        }
    }
    /// `error` as a usage error (exit 2) when `usage` (the input was at fault), else as a
    /// failure (exit 1).
    fn usage_if(usage: bool, error: impl Into<anyhow::Error>) -> Self {
        if usage {
            Self::usage(error)
        } else {
            Self::failed(error)
        }
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        let code = if matches!(
            e,
            StoreError::NotFound { .. }
                | StoreError::NotAFile { .. }
                | StoreError::ReadOnly { .. }
                | StoreError::Damaged { .. }
                | StoreError::UnsafeDirectory { .. }
                | StoreError::UnsafeDefault { .. }
        ) {
            EXIT_USAGE
        } else {
            EXIT_FAILED
        };
        Self {
            code,
            error: e.into(),
        }
    }
}

/// Opens the database named by `--db`, or the default one: read-only for the commands
/// that only read (no write lock, a read-only file works), read-write for runs. Notes
/// runs found interrupted, and says so when a write waits for another process's lock.
fn open_store(db: &Option<PathBuf>, mode: OpenMode) -> Result<Store, CliError> {
    let mut store = Store::open_for(db.as_deref(), mode)?;
    for id in store.interrupted_on_open() {
        errln!("note: run {id} was left running by a process that died; marked interrupted");
    }
    store.set_lock_wait_notice(|| {
        errln!("waiting for the database lock held by another process...");
    });
    // Directories left by killed runs go when a command that writes starts (a run, an
    // import), with one line saying so; a read command (list, show, compare) changes
    // nothing, on disk or in the database: `clean` is there for that.
    if mode != OpenMode::ReadOnly
        && let Ok(cleaned) = fsynclab::lab::clean_run_dirs(&store)
        && !cleaned.removed.is_empty()
    {
        let n = cleaned.removed.len();
        errln!(
            "note: removed {n} {} left by runs that ended without cleaning up (see `fsynclab clean`)",
            if n == 1 { "directory" } else { "directories" }
        );
    }
    Ok(store)
}

/// `fsynclab clean`: removes the directories of runs whose process is gone, and says which.
fn clean(db: &Option<PathBuf>) -> Result<u8, CliError> {
    let path = Store::path_for(db.as_deref())?;
    let store = Store::open(&path)?;
    for id in store.interrupted_on_open() {
        errln!("note: run {id} was left running by a process that died; marked interrupted");
    }
    // What killed crash tests (and lasting crash-test filesystems whose daemon died) left,
    // first: a run directory inside one goes with it. Root's: only root runs them. A state
    // directory root cannot trust is refused (exit 2), nothing in it touched.
    let mut crash_refused = false;
    let crashed = if nix::unistd::geteuid().is_root() {
        fsynclab::scratch::ScratchManager::default_state_dir()
            .ok()
            .map(|dir| {
                fsynclab::crashdev::clean_stale(&dir).unwrap_or_else(|e| {
                    crash_refused = matches!(e, fsynclab::crashdev::DeviceError::StateDir(_));
                    errln!("crash test leftovers not cleaned: {e}");
                    Vec::new()
                })
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let outcome = fsynclab::lab::clean_run_dirs(&store)?;
    for path in &outcome.removed {
        outln!("removed {}", fsynclab::spec::shown_path(path));
    }
    for (path, why) in &outcome.skipped {
        errln!(
            "left {}: {}",
            fsynclab::spec::shown_path(path),
            fsynclab::words::cleanup::clean_refusal_text(why, &crate::names::CliNames)
        );
    }
    // Trace instances of killed runs (their owner is gone; live runs' are kept).
    let swept = fsynclab::ktrace::sweep().unwrap_or_else(|e| {
        errln!("trace instances not swept: {e}");
        Vec::new()
    });
    for name in &swept {
        outln!("removed trace instance {name}");
    }
    for line in &crashed {
        outln!("crash test leftovers: {line}");
    }
    if outcome.removed.is_empty()
        && outcome.skipped.is_empty()
        && swept.is_empty()
        && crashed.is_empty()
        && !crash_refused
    {
        outln!("nothing to clean: no run directory was left behind");
    }
    Ok(if crash_refused {
        EXIT_USAGE
    } else if outcome.skipped.is_empty() {
        0
    } else {
        EXIT_FAILED
    })
}

/// Opens the lab window on a database and blocks until it closes. The binary passes one
/// (`gui::launch`) when it is built with the `gui` feature; the library never opens a window.
pub type Window = fn(PathBuf) -> anyhow::Result<()>;

/// No subcommand: the lab window on the chosen or default database, or, in a build
/// without one, a usage error naming the subcommands.
fn open_window(db: &Option<PathBuf>, window: Option<Window>) -> Result<u8, CliError> {
    let Some(window) = window else {
        return Err(CliError::usage(anyhow::anyhow!(no_window_message())));
    };
    let path = Store::path_for(db.as_deref())?;
    window(path).map_err(CliError::usage)?;
    Ok(0)
}

/// What a headless build (no `gui` feature) says when started without a subcommand.
pub fn no_window_message() -> String {
    use clap::CommandFactory as _;
    let names: Vec<String> = Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    format!(
        "this fsynclab is a headless build (without the `gui` feature): it has no lab window. \
         Use a subcommand: fsynclab {} (see fsynclab --help); for the window, build with the \
         default features (cargo build --release)",
        names.join(" | ")
    )
}

/// Runs a parsed command line; the process exit code. Without a subcommand it opens
/// `window` (see [`Window`]), or says there is none.
pub fn execute(cli: Cli, window: Option<Window>) -> ExitCode {
    log::debug!(
        "fsynclab {}: {:?}",
        env!("CARGO_PKG_VERSION"),
        cli.command.as_ref().map(command_name)
    );
    let uses_database = sudo::uses_database(cli.command.as_ref());
    let result = match cli.command {
        None => open_window(&cli.db, window),
        Some(Command::Run(args)) if args.fio_job.is_some() => fio_job::execute(&cli.db, &args),
        Some(Command::Run(args)) => run::execute(&cli.db, *args),
        Some(Command::List(args)) => browse::list(&cli.db, args),
        Some(Command::Show(args)) => browse::show(&cli.db, args),
        Some(Command::Presets(args)) => browse::presets(args),
        Some(Command::Compare(args)) => compare::compare(&cli.db, args),
        Some(Command::Report(args)) => compare::report(&cli.db, args),
        Some(Command::Trend(args)) => trend::trend(&cli.db, args),
        Some(Command::Advise(args)) => advise::advise_cmd(&cli.db, args),
        Some(Command::Scratch(args)) => scratch::scratch(&cli.db, args),
        Some(Command::Matrix(args)) => scratch::matrix(&cli.db, args),
        Some(Command::Crashtest(args)) => crashtest::crashtest(&cli.db, args),
        Some(Command::CrashDevice(args)) => crashtest::crash_device(args),
        Some(Command::CrashFs(args)) => crash_fs::crash_fs(args),
        Some(Command::CrashState(args)) => crash_state::crash_state_cmd(&cli.db, args),
        Some(Command::ExportFioJob(args)) => fio_export::export_fio_job(&cli.db, args),
        Some(Command::Import(args)) => import::import(&cli.db, args),
        Some(Command::Fleet(args)) => fleet::fleet(&cli.db, args),
        Some(Command::Export(args)) => export::export(&cli.db, args),
        Some(Command::Clean) => clean(&cli.db),
        Some(Command::Completions(args)) => shell::completions(args),
        Some(Command::Man(args)) => shell::man(args),
    };
    if uses_database {
        sudo::after_command(&cli.db);
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            errln!("error: {}", chain_text(&e.error));
            ExitCode::from(e.code)
        }
    }
}

/// The subcommand's name, for the log.
fn command_name(command: &Command) -> String {
    format!("{command:?}")
        .split(['(', ' ', '{'])
        .next()
        .unwrap_or_default()
        .to_lowercase()
}

/// The error and its causes, each said once: a cause whose text (or final clause, after an
/// error code prefix such as "Error code 26: ") the message already contains adds nothing.
/// Library errors are worded with the CLI's flags ([`CliNames`]); the chain stops after an
/// error that already explained its cause (an errno turned into advice).
pub fn chain_text(error: &anyhow::Error) -> String {
    let mut chain = error.chain();
    let mut text = chain
        .next()
        .map(|e| fsynclab::lab::worded_error(e, &CliNames))
        .unwrap_or_default();
    let mut said_all = error
        .chain()
        .next()
        .is_some_and(fsynclab::lab::explains_cause);
    for cause in chain {
        if said_all {
            break;
        }
        said_all = fsynclab::lab::explains_cause(cause);
        let cause = fsynclab::lab::worded_error(cause, &CliNames);
        let last_clause = cause.rsplit(": ").next().unwrap_or(&cause);
        if !text.contains(&cause) && !text.contains(last_clause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e =
            anyhow::Error::new(io).context("cannot read x: No such file or directory; check it");
        assert_eq!(
            chain_text(&e),
            "cannot read x: No such file or directory; check it"
        );
        let e = anyhow::anyhow!("low level").context("high level");
        assert_eq!(chain_text(&e), "high level: low level");
        let e = anyhow::anyhow!("Error code 26: file is not a database")
            .context("cannot open d: file is not a database; choose another");
        assert_eq!(
            chain_text(&e),
            "cannot open d: file is not a database; choose another"
        );
    }

    #[test]
    fn usage_errors_exit_2_and_failures_exit_1() {
        let usage = CliError::usage_if(true, anyhow::anyhow!("bad --threads"));
        assert_eq!(usage.code, EXIT_USAGE);
        assert_eq!(usage.error.to_string(), "bad --threads");
        let failed = CliError::usage_if(false, anyhow::anyhow!("disk full"));
        assert_eq!(failed.code, EXIT_FAILED);
    }
}
