//! Storing runs imported from fio's JSON ([`crate::fio::import`]): each one finished, in
//! one transaction, with its origin (fio version, host, job options, the file).

use super::LabError;
use crate::fio::import::ImportedRun;
use crate::store::{NewRun, Store};

/// The label an imported run gets when none is given: the job's name, or `host/job` for a
/// run of fio's client mode (`127.0.0.1:8765/writers`).
pub fn default_label(run: &ImportedRun) -> String {
    match &run.host {
        Some(host) => format!("{}/{}", host.label(), run.job),
        None => run.job.clone(),
    }
}

/// Ids of runs already stored from the same fio output as `run` (same fio timestamp, host
/// and job): a second import of one file finds the first.
pub fn already_imported(store: &Store, run: &ImportedRun) -> Result<Vec<i64>, LabError> {
    Ok(store.find_imported(
        run.result.started_at_ms,
        &run.job,
        run.origin.hostname.as_deref(),
    )?)
}

/// Stores each run finished in one go, labelled `label` (default: [`default_label`]), in
/// experiment `experiment_id`; returns their ids in order.
pub fn store_imported(
    store: &Store,
    runs: &[ImportedRun],
    label: Option<&str>,
    experiment_id: Option<i64>,
) -> Result<Vec<i64>, LabError> {
    store_imported_tagged(store, runs, label, &[], experiment_id)
}

/// [`store_imported`] with tags on every run.
pub fn store_imported_tagged(
    store: &Store,
    runs: &[ImportedRun],
    label: Option<&str>,
    tags: &[String],
    experiment_id: Option<i64>,
) -> Result<Vec<i64>, LabError> {
    if let Some(label) = label {
        crate::spec::check_text("label", label)?;
    }
    for tag in tags {
        crate::spec::check_tag("tag", tag)?;
    }
    let mut ids = Vec::with_capacity(runs.len());
    for run in runs {
        let new = NewRun {
            label: Some(label.map_or_else(|| default_label(run), str::to_string)),
            tags: tags.to_vec(),
            experiment_id,
            origin: Some(run.origin.clone()),
            ..NewRun::new(
                run.result.spec.clone(),
                run.result.system.clone(),
                run.result.system.target.clone(),
            )
        };
        ids.push(store.insert_finished(&new, &run.result)?);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::import::parse_fio_output;
    use crate::store::OriginKind;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/fio/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn imported_runs_are_stored_finished_with_their_origin_and_figures() {
        let store = Store::open_in_memory().unwrap();
        let out = parse_fio_output(&fixture("client-jsonplus.txt")).unwrap();
        let exp = store.create_experiment("fio import").unwrap();
        let ids = store_imported(&store, &out.runs, None, Some(exp)).unwrap();
        assert_eq!(ids.len(), 2);
        for (id, run) in ids.iter().zip(&out.runs) {
            let stored = store.load_run(*id).unwrap();
            assert_eq!(stored.row.status, crate::metrics::RunStatus::Finished);
            assert_eq!(stored.row.kind, "fio");
            assert_eq!(stored.row.experiment_id, Some(exp));
            assert_eq!(
                stored.row.label.as_deref(),
                Some(default_label(run).as_str())
            );
            let origin = stored.origin.unwrap();
            assert_eq!(origin.kind, OriginKind::FioImport);
            assert_eq!(origin.tool_version.as_deref(), Some("fio-3.33"));
            assert_eq!(origin.hostname, run.origin.hostname);
            let result = stored.result.unwrap();
            assert_eq!(result.id, *id);
            assert_eq!(result.writes, run.result.writes);
            assert_eq!(result.syncs, run.result.syncs);
            assert_eq!(result.started_at_ms, run.result.started_at_ms);
            assert_eq!(result.reported, run.result.reported);
            assert_eq!(result.sync_lat.summary(), run.result.sync_lat.summary());
            assert_eq!(result.summary(), run.result.summary());
            assert_eq!(stored.row.iops, Some(run.result.summary().iops));
            assert_eq!(already_imported(&store, run).unwrap(), [*id]);
        }
        assert_eq!(
            default_label(&out.runs[0]),
            "127.0.0.1:8766/writers",
            "client mode labels are host/job"
        );
    }

    #[test]
    fn plain_json_keeps_fios_percentiles_in_the_store() {
        let store = Store::open_in_memory().unwrap();
        let out = parse_fio_output(&fixture("A-ext4.out")).unwrap();
        let ids = store_imported(&store, &out.runs, Some("A ext4"), None).unwrap();
        let stored = store.load_run(ids[0]).unwrap();
        assert_eq!(stored.row.label.as_deref(), Some("A ext4"));
        // fio's printed sync p50/p99 (no histogram to compute them from).
        assert_eq!(stored.row.sync_p50_ns, Some(1_744_896));
        assert_eq!(stored.row.sync_p99_ns, Some(4_489_216));
        assert_eq!(stored.row.write_p99_ns, Some(238_592));
        let result = stored.result.unwrap();
        assert!(!result.has_histograms());
        assert_eq!(result.sync_lat.count(), 0);
        assert!(already_imported(&store, &out.runs[0]).unwrap() == ids);
    }

    #[test]
    fn a_bad_label_is_refused_before_anything_is_stored() {
        let store = Store::open_in_memory().unwrap();
        let out = parse_fio_output(&fixture("A-ext4.out")).unwrap();
        let err = store_imported(&store, &out.runs, Some("bad\u{1b}"), None).unwrap_err();
        assert!(err.is_usage());
        assert!(store.list_runs(&Default::default()).unwrap().is_empty());
    }
}
