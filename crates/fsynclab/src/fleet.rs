//! `fsynclab fleet`: one fio job on many machines through fio's client/server mode (see
//! docs/FLEET.md). The library checks, runs and stores ([`fsynclab::lab::run_fleet`]); this
//! file words the errors with the flags and prints a line per event.
//!
//! Exit codes: 0 every repetition stored on every host; 1 some host failed (the others'
//! results are stored; each failure is printed with its host); 2 bad input, or a host that
//! does not answer (nothing was run); 130/143/129 cancelled by a signal (what was stored
//! before stays; the clients in flight store nothing).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;

use super::{CliError, EXIT_FAILED, open_store};
use fsynclab::engine::CancelToken;
use fsynclab::lab::{
    self, FleetError, FleetEvent, FleetJob, FleetOutcome, FleetRequest, ValidFleet,
};
use fsynclab::store::OpenMode;

/// Arguments of `fsynclab fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// A fio server (`fio --server` running there): HOST or HOST:PORT, a DNS name, an IPv4
    /// address or [IPv6]; port 8765 when left out (repeatable, at most 64).
    #[arg(long = "host", value_name = "HOST[:PORT]", required = true)]
    pub hosts: Vec<String>,
    /// Run this preset (exported as a fio job; see `fsynclab presets`).
    #[arg(long, conflicts_with = "fio_job")]
    pub preset: Option<String>,
    /// Scale the preset's sizes/counts by this factor (with --preset).
    #[arg(long, requires = "preset")]
    pub scale: Option<f64>,
    /// Run this fio job file (its options translated and exported again: only options
    /// fsynclab understands reach the servers; unknown ones are refused).
    #[arg(long, value_name = "FILE")]
    pub fio_job: Option<PathBuf>,
    /// The job to run when the job file has several.
    #[arg(long, value_name = "NAME", requires = "fio_job")]
    pub job: Option<String>,
    /// The directory on every server the job writes in (fio's directory=); an absolute
    /// path, checked as text only: it is on the servers, not here.
    #[arg(long, value_name = "DIR")]
    pub target: Option<String>,
    /// Run the job N times on every host (each run stored in the host's experiment).
    #[arg(long, default_value_t = 1, value_parser = crate::whole_number::<u32>)]
    pub repeat: u32,
    /// Label; each host's runs are labelled LABEL@HOST:PORT [default: fleet].
    #[arg(long)]
    pub label: Option<String>,
    /// Stop a host's fio client after S seconds [default: the job's runtime + 120 s, or
    /// 1800 s for a job stopped by a byte count].
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
    /// Only check that every host's fio server answers (a TCP connect), run nothing.
    #[arg(long)]
    pub check: bool,
}

/// `fsynclab fleet`.
pub fn fleet(db: &Option<PathBuf>, args: FleetArgs) -> Result<u8, CliError> {
    if args.check {
        return check(&args);
    }
    let fleet = valid_fleet(&args)?;
    for warning in &fleet.warnings {
        errln!(
            "warning: {}",
            fsynclab::report::warning_text(&warning.clone().into(), None)
        );
    }
    let store = open_store(db, OpenMode::ReadWrite)?;
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    outln!(
        "fleet: job '{}' on {} host{}, {} repetition{} each, in {} on the servers",
        fleet.job_name,
        fleet.hosts.len(),
        plural(fleet.hosts.len()),
        fleet.repeat,
        plural(fleet.repeat as usize),
        fleet.target
    );
    let mut on_event = |event: FleetEvent| print_event(&fleet, event);
    let outcome = lab::run_fleet(&store, &fleet, &mut on_event, &cancel).map_err(fleet_error)?;
    print_summary(&fleet, &outcome);
    Ok(if outcome.cancelled {
        super::signals::cancelled_exit_code()
    } else if outcome.all_stored() {
        0
    } else {
        EXIT_FAILED
    })
}

/// `--check`: every host's reachability, one line each; exit 2 when one is down.
fn check(args: &FleetArgs) -> Result<u8, CliError> {
    let hosts =
        fsynclab::fio::client::parse_hosts(&args.hosts).map_err(|e| flag_error("--host", e))?;
    let statuses = lab::check_hosts(&hosts, lab::CHECK_TIMEOUT);
    let mut down = 0;
    for status in &statuses {
        match &status.reachable {
            Ok(took) => outln!(
                "{}: a server answers (connect {:.1} ms)",
                status.host,
                took.as_secs_f64() * 1e3
            ),
            Err(why) => {
                down += 1;
                outln!("{}: DOWN — {why}", status.host);
            }
        }
    }
    if down > 0 {
        return Err(CliError::usage(anyhow!(
            "--host: {down} of {} fio servers did not answer; start fio in server mode there \
             or fix the --host (see docs/FLEET.md)",
            statuses.len()
        )));
    }
    outln!("all {} fio servers answer", statuses.len());
    Ok(0)
}

/// The request the flags describe, validated; each refusal names its flag.
fn valid_fleet(args: &FleetArgs) -> Result<ValidFleet, CliError> {
    let job = match (&args.preset, &args.fio_job) {
        (Some(name), None) => FleetJob::Preset {
            name: name.clone(),
            scale: args.scale,
        },
        (None, Some(path)) => FleetJob::JobFile {
            path: path.clone(),
            job: args.job.clone(),
        },
        _ => {
            return Err(CliError::usage(anyhow!(
                "fleet needs the job: --preset NAME [--scale S] or --fio-job FILE [--job NAME]"
            )));
        }
    };
    let Some(target) = args.target.clone() else {
        return Err(CliError::usage(anyhow!(
            "--target DIR is required: the directory on every server the job writes in"
        )));
    };
    if let Some(label) = &args.label {
        fsynclab::spec::check_text("--label", label).map_err(CliError::usage)?;
    }
    lab::check_repeat("--repeat", args.repeat).map_err(|e| CliError::usage(anyhow!(e)))?;
    let timeout = match args.timeout {
        None => None,
        Some(s) if s.is_finite() && (1.0..=lab::MAX_FLEET_TIMEOUT.as_secs_f64()).contains(&s) => {
            Some(Duration::from_secs_f64(s))
        }
        Some(s) => {
            return Err(CliError::usage(anyhow!(
                "--timeout {s}: use 1 to {} seconds",
                lab::MAX_FLEET_TIMEOUT.as_secs()
            )));
        }
    };
    let request = FleetRequest {
        hosts: args.hosts.clone(),
        job,
        target,
        repeat: args.repeat,
        label: args.label.clone(),
        timeout,
        fio: None,
    };
    request.validate().map_err(fleet_error)
}

/// A library refusal worded with the flag it is about.
fn fleet_error(e: FleetError) -> CliError {
    let flag = match &e {
        FleetError::Host(_) | FleetError::Unreachable { .. } | FleetError::SameServer { .. } => {
            "--host"
        }
        FleetError::Target { .. } => "--target",
        FleetError::Text(_) => "--label",
        FleetError::Repeat(_) => "--repeat",
        FleetError::Timeout { .. } => "--timeout",
        FleetError::Preset(_) => "--preset",
        FleetError::ReadJob { .. } => "--fio-job",
        FleetError::WhichJob { .. } => "--job",
        FleetError::Job { what, .. } if what.starts_with("preset") => "--preset",
        FleetError::Job { .. } => "--fio-job",
        FleetError::NoFio | FleetError::JobDir { .. } | FleetError::Store(_) => "",
    };
    if e.is_usage() {
        flag_error(flag, e)
    } else {
        CliError::failed(e)
    }
}

/// `--flag: message` as a usage error (exit 2).
fn flag_error(flag: &str, e: impl std::error::Error + Send + Sync + 'static) -> CliError {
    if flag.is_empty() {
        return CliError::usage(e);
    }
    CliError::usage(anyhow::Error::new(e).context(flag.to_string()))
}

/// One line per event: stdout for progress, stderr for failures.
fn print_event(fleet: &ValidFleet, event: FleetEvent) {
    match event {
        FleetEvent::Checked(statuses) => {
            for s in statuses {
                if let Ok(took) = s.reachable {
                    outln!(
                        "{}: a server answers ({:.1} ms)",
                        s.host,
                        took.as_secs_f64() * 1e3
                    );
                }
            }
        }
        FleetEvent::Started { host, repetition } => outln!(
            "{}: repetition {repetition}/{} started",
            fleet.hosts[host],
            fleet.repeat
        ),
        FleetEvent::Stored {
            host,
            repetition,
            run_ids,
        } => outln!(
            "{}: repetition {repetition} stored as run{} {}",
            fleet.hosts[host],
            plural(run_ids.len()),
            run_ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        FleetEvent::Failed {
            host,
            repetition,
            error,
        } => errln!(
            "{}: repetition {repetition} failed, nothing stored for it: {error}",
            fleet.hosts[host]
        ),
    }
}

/// Per host: label, experiment and runs; how to compare them; what is not measured.
fn print_summary(fleet: &ValidFleet, outcome: &FleetOutcome) {
    if outcome.cancelled {
        errln!("cancelled: the fio clients in flight were stopped and stored nothing");
    }
    let mut experiments = Vec::new();
    for host in &outcome.hosts {
        let runs = host
            .run_ids
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        match host.experiment_id {
            Some(exp) => {
                experiments.push(format!("exp:{exp}"));
                outln!(
                    "{}: label {}, experiment {exp} ({}), runs {runs}",
                    host.host,
                    host.label,
                    fleet.experiment_name(&host.host)
                );
            }
            None => outln!("{}: nothing stored", host.host),
        }
        if !host.errors.is_empty() {
            outln!(
                "{}: {} of {} repetition{} failed",
                host.host,
                host.errors.len(),
                fleet.repeat,
                plural(fleet.repeat as usize)
            );
        }
    }
    outln!(
        "device flushes: not measured (fio's disk_util reports no flush count; see docs/FLEET.md)"
    );
    if experiments.len() >= 2 {
        outln!(
            "compare two machines: fsynclab compare {} {}",
            experiments[0],
            experiments[1]
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
