//! A host's fio output stored as runs (`fio::import`, `lab::import`): the other half of a
//! fleet run's meeting with issue 12, after the job text (`fleet_job`).

use super::fleet::ValidFleet;
use crate::fio::client::FleetHost;
use crate::fio::import::ImportedRun;
use crate::store::Store;

/// The runs in one host's fio output, each with the job file sent as its origin's text;
/// when there is none, why (fio's client prints its server's complaints before the JSON).
pub(super) fn host_runs(
    fleet: &ValidFleet,
    host: &FleetHost,
    stdout: &str,
) -> Result<Vec<ImportedRun>, String> {
    let output = crate::fio::import::parse_fio_output(stdout)
        .map_err(|e| format!("fio's output for {host} cannot be read: {e}"))?;
    let mut runs: Vec<ImportedRun> = output
        .runs
        .into_iter()
        // One client per host: an entry of another server would be a bug; never store it
        // under this host's label.
        .filter(|r| {
            r.host
                .as_ref()
                .is_none_or(|h| h.port.is_none_or(|p| p == host.port))
        })
        .collect();
    if runs.is_empty() {
        let said = fio_messages(stdout);
        return Err(format!(
            "fio ran no job on {host}{}",
            match (said.is_empty(), output.skipped.is_empty()) {
                (false, _) => format!(": {said}"),
                (true, false) => format!(" ({})", output.skipped.join("; ")),
                (true, true) => String::new(),
            }
        ));
    }
    for run in &mut runs {
        run.origin.file = fleet.job_file.clone();
        run.origin.job_text = Some(fleet.job_text.clone());
        if run.origin.job.is_none() {
            run.origin.job = Some(run.job.clone());
        }
    }
    Ok(runs)
}

/// What fio's client printed before its JSON (`<host> fio: ... is not a directory`), its
/// last lines joined.
fn fio_messages(stdout: &str) -> String {
    let before: String = stdout
        .lines()
        .take_while(|l| !l.starts_with('{'))
        .collect::<Vec<_>>()
        .join("\n");
    super::fleet_fio::tail(&before, 4)
}

/// Stores `runs` in `experiment_id`, labelled for `host`.
pub(super) fn store_runs(
    store: &Store,
    fleet: &ValidFleet,
    host: &FleetHost,
    runs: &[ImportedRun],
    experiment_id: i64,
) -> Result<Vec<i64>, String> {
    crate::lab::import::store_imported(
        store,
        runs,
        Some(&fleet.run_label(host)),
        Some(experiment_id),
    )
    .map_err(|e| format!("cannot store the result of {host}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_client_printed_before_its_json_is_the_reason() {
        let stdout = "<vm> fio: /x is not a directory\n<vm> fio: job w dropped\n\n{\n\"a\": 1\n}\n";
        assert_eq!(
            fio_messages(stdout),
            "<vm> fio: /x is not a directory / <vm> fio: job w dropped"
        );
        assert_eq!(fio_messages("{}"), "");
    }
}
