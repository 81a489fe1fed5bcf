//! `fsynclab crashtest --control NAME` and `--controls`: crash tests whose outcome is known
//! (`lab::crash_controls`), each stored as a run labelled with its name and judged against
//! its expectation — a negative control must lose records, a positive one must not.

use anyhow::anyhow;

use super::CliError;
use super::crashtest::{CrashtestArgs, checked_request, crash_error};
use fsynclab::engine::CancelToken;
use fsynclab::lab::crash_controls::{CrashControl, crash_control, crash_controls};
use fsynclab::lab::crashtest::crash_test;
use fsynclab::report;
use fsynclab::scratch::FsKind;
use fsynclab::spec::FlatSpec;
use fsynclab::store::Store;

/// The controls `args` asks for: the one `--control` names, or every one of `--fs`.
fn chosen(args: &CrashtestArgs) -> Result<Vec<&'static CrashControl>, CliError> {
    let Some(name) = &args.control else {
        let fs = args.fs.unwrap_or(FsKind::Ext4);
        return Ok(crash_controls().iter().filter(|c| c.fs == fs).collect());
    };
    let control = crash_control(name).ok_or_else(|| {
        let names: Vec<&str> = crash_controls().iter().map(|c| c.name).collect();
        CliError::usage(anyhow!("--control {name}: use one of {}", names.join(", ")))
    })?;
    if let Some(fs) = args.fs.filter(|fs| *fs != control.fs) {
        return Err(CliError::usage(anyhow!(
            "--fs {}: control {} runs on {}; drop --fs or pick a {} control",
            fs.as_str(),
            control.name,
            control.fs.as_str(),
            fs.as_str()
        )));
    }
    Ok(vec![control])
}

/// Runs the chosen controls; exit 0 when every one is as expected, 3 when one is not.
pub fn controls(db: &Option<std::path::PathBuf>, args: &CrashtestArgs) -> Result<u8, CliError> {
    let chosen = chosen(args)?;
    // A control is its own workload: workload flags would make it another test.
    let (flags, _, _) = super::run::preset_and_flags(None, args.scale, &args.workload)?;
    if flags != FlatSpec::default().typed() {
        return Err(CliError::usage(anyhow!(
            "--control and --controls set the workload: drop the workload flags (or run the \
             workload without a control)"
        )));
    }
    let mut requests = Vec::with_capacity(chosen.len());
    for control in &chosen {
        let spec = control.spec().map_err(CliError::failed)?;
        let size = args.size.unwrap_or(control.size_bytes());
        let mut request = checked_request(args, control.fs, size, spec)?;
        request.mount_options = control.mount_options.to_string();
        request.label = Some(args.label.clone().unwrap_or_else(|| control.name.into()));
        requests.push(request);
    }
    let store = Store::open(&Store::path_for(db.as_deref())?)?;
    let cancel = CancelToken::new();
    super::signals::install(cancel.clone());
    let mut all_as_expected = true;
    let mut rows = Vec::new();
    for (control, request) in chosen.iter().zip(&requests) {
        let outcome = crash_test(&store, request, &cancel).map_err(crash_error)?;
        if cancel.is_cancelled() {
            return Ok(super::signals::cancelled_exit_code());
        }
        let failed = super::crashtest::workload_failed(&outcome.run);
        let as_expected = control.as_expected(&outcome.report) && failed.is_none();
        if let Some(why) = &failed {
            errln!(
                "error: control {}: its workload failed: {why}",
                control.name
            );
        }
        all_as_expected &= as_expected;
        if args.json {
            rows.push(serde_json::json!({
                "name": control.name,
                "fs": control.fs.as_str(),
                "mount_options": control.mount_options,
                "what": control.what,
                "expects_loss": control.loses,
                "as_expected": as_expected,
                "run_id": outcome.run.id,
                "crash_test": report::crash_json(&outcome.report),
            }));
        } else {
            outln!(
                "{} ({}; {} control: {}), run {}: {}",
                control.name,
                control.what,
                if control.loses {
                    "negative"
                } else {
                    "positive"
                },
                if control.loses {
                    "must lose records"
                } else {
                    "must lose nothing"
                },
                outcome.run.id,
                if as_expected {
                    "as expected"
                } else {
                    "NOT AS EXPECTED"
                }
            );
            for line in
                super::crash_state::crash_lines(outcome.run.id, &outcome.report, db.as_deref())
                    .lines()
            {
                outln!("  {line}");
            }
        }
    }
    if args.json {
        let doc = report::versioned([("controls", serde_json::json!(rows))]);
        super::launch::print_json(&doc)?;
    }
    Ok(if all_as_expected {
        0
    } else {
        super::EXIT_REGRESSION
    })
}
