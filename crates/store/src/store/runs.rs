//! Writing runs: begin, finish, fail, relabel, tag, delete; and experiments.

use std::path::PathBuf;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::{HISTOGRAM_ENCODING, Store, StoreError, current_owner, now_ms, to_int, to_opt_int};
use crate::metrics::{DeviceAccounting, Failure, IntervalSample, RunResult};
use crate::probe::SystemInfo;
use crate::spec::{WorkloadKind, WorkloadSpec};

/// What is known about a run before it starts: inserted by [`Store::begin_run`].
#[derive(Clone, Debug, PartialEq)]
pub struct NewRun {
    /// The workload about to run.
    pub spec: WorkloadSpec,
    /// Where it will run.
    pub system: SystemInfo,
    /// The target directory as given.
    pub target: PathBuf,
    /// A name to group runs by (`--label`): comparisons pick runs by label.
    pub label: Option<String>,
    /// Free-form tags (`--tag`).
    pub tags: Vec<String>,
    /// The experiment (sweep, comparison) this run belongs to.
    pub experiment_id: Option<i64>,
    /// The preset the spec came from.
    pub preset: Option<String>,
    /// The scale factor applied to the preset.
    pub preset_scale: Option<f64>,
    /// Where the workload came from when not the form, a preset or flags (a fio job file).
    pub origin: Option<super::RunOrigin>,
}

impl NewRun {
    /// A run of `spec` on `system` in `target` and nothing else: no label, tags, experiment,
    /// preset or origin (give those with `NewRun { label: …, ..NewRun::new(…) }`).
    pub fn new(spec: WorkloadSpec, system: SystemInfo, target: impl Into<PathBuf>) -> Self {
        Self {
            spec,
            system,
            target: target.into(),
            label: None,
            tags: Vec::new(),
            experiment_id: None,
            preset: None,
            preset_scale: None,
            origin: None,
        }
    }
}

/// A named group of runs (a sweep or a comparison).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Experiment {
    /// Store id.
    pub id: i64,
    /// Name given at creation.
    pub name: String,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// Stable identity kept through export and import (lowercase hyphenated UUID).
    pub uuid: String,
}

/// The figures of a run beyond fileio's, stored together as `detail_json`.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub(super) struct KindDetail {
    #[serde(default)]
    pub ops: Vec<crate::metrics::OpStats>,
    #[serde(default)]
    pub phases: Vec<crate::metrics::PhaseStats>,
    #[serde(default)]
    pub group: Option<crate::metrics::GroupCommitStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<crate::metrics::ReportedFigures>,
}

impl KindDetail {
    /// The detail of `result`, or `None` when it has none (every fileio run).
    fn of(result: &RunResult) -> Option<Self> {
        if result.ops.is_empty()
            && result.phases.is_empty()
            && result.group.is_none()
            && result.reported.is_none()
        {
            return None;
        }
        Some(Self {
            ops: result.ops.clone(),
            phases: result.phases.clone(),
            group: result.group.clone(),
            reported: result.reported.clone(),
        })
    }
}

/// The stored name of a workload kind (`fileio`), as serde spells it.
fn kind_name(kind: WorkloadKind) -> Result<String, StoreError> {
    Ok(match serde_json::to_value(kind)? {
        serde_json::Value::String(name) => name,
        other => other.to_string(),
    })
}

/// A fresh random (version 4) UUID, lowercase hyphenated, for a new run or experiment.
pub(super) fn new_uuid() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// Empty labels are no label.
fn clean_label(label: Option<&str>) -> Option<&str> {
    label.map(str::trim).filter(|l| !l.is_empty())
}

fn clean_tag(tag: &str) -> Result<&str, StoreError> {
    let trimmed = tag.trim();
    if trimmed.is_empty() {
        return Err(StoreError::EmptyTag { tag: tag.into() });
    }
    Ok(trimmed)
}

/// Mount and device columns described by a [`SystemInfo`].
struct Placement<'a> {
    fs_type: Option<&'a str>,
    mount_options: Option<&'a str>,
    device: Option<&'a str>,
    kernel_release: Option<&'a str>,
}

impl<'a> Placement<'a> {
    fn of(system: &'a SystemInfo) -> Self {
        Placement {
            fs_type: system.mount.as_ref().map(|m| m.fs_type.as_str()),
            mount_options: system.mount.as_ref().map(|m| m.mount_options.as_str()),
            device: system.device.as_ref().map(|d| d.name.as_str()),
            kernel_release: system.kernel_release.as_deref(),
        }
    }
}

impl Store {
    /// Creates an experiment and returns its id.
    pub fn create_experiment(&self, name: &str) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO experiments (name, created_at_ms, uuid) VALUES (?1, ?2, ?3)",
            (name, now_ms(), new_uuid()),
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every experiment, newest first.
    pub fn list_experiments(&self) -> Result<Vec<Experiment>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, name, created_at_ms, uuid FROM experiments \
             ORDER BY created_at_ms DESC, id DESC",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok(Experiment {
                id: row.get(0)?,
                name: row.get(1)?,
                created_at_ms: row.get(2)?,
                uuid: row.get::<_, Option<String>>(3)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(super) fn check_experiment(&self, id: i64) -> Result<(), StoreError> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT id FROM experiments WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()?;
        found
            .map(|_| ())
            .ok_or(StoreError::ExperimentNotFound { id })
    }

    pub(super) fn check_run(&self, id: i64) -> Result<(), StoreError> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [id], |row| row.get(0))
            .optional()?;
        found.map(|_| ()).ok_or(StoreError::NotFound { id })
    }

    /// The experiment `new` names exists, and its tags cleaned (none empty).
    fn checked_tags<'a>(&self, new: &'a NewRun) -> Result<Vec<&'a str>, StoreError> {
        if let Some(experiment) = new.experiment_id {
            self.check_experiment(experiment)?;
        }
        new.tags.iter().map(|t| clean_tag(t)).collect()
    }

    /// Records a run about to start, with status `running`; returns its id (the engine puts
    /// it in [`RunResult::id`]).
    pub fn begin_run(&self, new: &NewRun) -> Result<i64, StoreError> {
        let tags = self.checked_tags(new)?;
        self.retry_locked(|| self.insert_run(new, &tags))
    }

    fn insert_run(&self, new: &NewRun, tags: &[&str]) -> Result<i64, StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let id = insert_row(&tx, new, tags)?;
        // Locked before the row is visible to anyone: no sweep can see it unlocked.
        self.take_run_lock(id)?;
        if let Err(e) = tx.commit() {
            self.release_run_lock(id);
            return Err(e.into());
        }
        Ok(id)
    }

    /// Stores a run that is already over (a result another tool measured, imported) in one
    /// transaction: the row as [`Store::begin_run`] inserts it and the outcome as
    /// [`Store::finish_run`] stores it, so no reader ever sees it `running` and a kill
    /// leaves either the whole run or nothing. Returns its id (`result.id` is ignored).
    pub fn insert_finished(&self, new: &NewRun, result: &RunResult) -> Result<i64, StoreError> {
        let tags = self.checked_tags(new)?;
        self.retry_locked(|| {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            let id = insert_row(&tx, new, &tags)?;
            let mut stored = result.clone();
            stored.id = id;
            update_row(&tx, &stored)?;
            tx.commit()?;
            Ok(id)
        })
    }

    /// Stores the outcome of run `result.id` in one transaction: status and error, the
    /// summary columns, spec/system/device/warnings JSON, interval and thread rows and both
    /// histograms. Calling it again for the same run replaces what was stored.
    ///
    /// Waits (up to [`super::WRITE_PATIENCE`]) while another process holds the write lock,
    /// then releases the run's lock file.
    pub fn finish_run(&self, result: &RunResult) -> Result<(), StoreError> {
        self.retry_locked(|| self.store_result(result))?;
        self.release_run_lock(result.id);
        Ok(())
    }

    fn store_result(&self, result: &RunResult) -> Result<(), StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        update_row(&tx, result)?;
        tx.commit()?;
        Ok(())
    }

    /// Marks a run that failed before measuring anything (bad target, no space...) as
    /// `failed` with `error`. A run that measured something goes through
    /// [`Store::finish_run`] with status `Failed` instead, so its data is kept.
    pub fn fail_run(&self, id: i64, error: &Failure) -> Result<(), StoreError> {
        let (error, code) = super::failure_column::encode(error)?;
        let changed = self.retry_locked(|| {
            Ok(self.conn.execute(
                "UPDATE runs SET status = 'failed', error = ?2, error_code = ?3 WHERE id = ?1",
                (id, &error, code),
            )?)
        })?;
        self.release_run_lock(id);
        if changed == 0 {
            return Err(StoreError::NotFound { id });
        }
        Ok(())
    }

    /// Keeps a crash test's findings with the run it tested.
    pub fn set_crash_test(
        &self,
        id: i64,
        report: &crate::crashlog::CrashReport,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(report)?;
        let changed = self.conn.execute(
            "UPDATE runs SET crash_test_json = ?2 WHERE id = ?1",
            (id, json),
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound { id });
        }
        Ok(())
    }

    /// A crash-tested run's findings (`None` for any other run).
    pub fn crash_test(&self, id: i64) -> Result<Option<crate::crashlog::CrashReport>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT crash_test_json FROM runs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => StoreError::NotFound { id },
                e => e.into(),
            })?;
        json.as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| StoreError::Corrupt {
                id,
                problem: format!("its crash test's findings do not read: {e}"),
            })
    }

    /// Sets (or with `None` or an empty string, removes) a run's label.
    pub fn set_label(&self, id: i64, label: Option<&str>) -> Result<(), StoreError> {
        let changed = self.conn.execute(
            "UPDATE runs SET label = ?2 WHERE id = ?1",
            (id, clean_label(label)),
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound { id });
        }
        Ok(())
    }

    /// Adds a tag to a run (white space trimmed; adding a tag twice is harmless).
    pub fn add_tag(&self, id: i64, tag: &str) -> Result<(), StoreError> {
        let tag = clean_tag(tag)?;
        self.check_run(id)?;
        self.conn.execute(
            "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)",
            (id, tag),
        )?;
        Ok(())
    }

    /// Removes a tag from a run (removing a tag it does not have is harmless).
    pub fn remove_tag(&self, id: i64, tag: &str) -> Result<(), StoreError> {
        self.check_run(id)?;
        self.conn.execute(
            "DELETE FROM run_tags WHERE run_id = ?1 AND tag = ?2",
            (id, tag.trim()),
        )?;
        Ok(())
    }

    /// Deletes a run with its tags, intervals, thread rows and histograms.
    pub fn delete_run(&self, id: i64) -> Result<(), StoreError> {
        let changed = self.conn.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        if changed == 0 {
            return Err(StoreError::NotFound { id });
        }
        Ok(())
    }
}

/// Inserts a run's row (status `running`) and its tags inside `tx`; returns its id.
fn insert_row(tx: &Transaction<'_>, new: &NewRun, tags: &[&str]) -> Result<i64, StoreError> {
    let place = Placement::of(&new.system);
    let (owner_pid, owner_start_ticks) = current_owner();
    tx.execute(
        "INSERT INTO runs (experiment_id, label, status, kind, preset, preset_scale, target, \
             fs_type, mount_options, device, kernel_release, owner_pid, owner_start_ticks, \
             created_at_ms, spec_json, system_json, origin_json, uuid) \
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, \
             ?16, ?17)",
        params![
            new.experiment_id,
            clean_label(new.label.as_deref()),
            kind_name(new.spec.kind())?,
            new.preset,
            new.preset_scale,
            new.target.to_string_lossy(),
            place.fs_type,
            place.mount_options,
            place.device,
            place.kernel_release,
            owner_pid,
            owner_start_ticks,
            now_ms(),
            serde_json::to_string(&new.spec)?,
            serde_json::to_string(&new.system)?,
            new.origin.as_ref().map(serde_json::to_string).transpose()?,
            new_uuid(),
        ],
    )?;
    let id = tx.last_insert_rowid();
    for tag in tags {
        tx.execute(
            "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)",
            (id, tag),
        )?;
    }
    Ok(id)
}

/// Stores the outcome of run `result.id` inside `tx` (see [`Store::finish_run`]).
fn update_row(tx: &Transaction<'_>, result: &RunResult) -> Result<(), StoreError> {
    let id = result.id;
    let summary = result.summary();
    let place = Placement::of(&result.system);
    let device = match &result.device {
        DeviceAccounting::Measured { counters, .. } => Some(counters.device.as_str()),
        DeviceAccounting::Unavailable { .. } => place.device,
    };
    let error = result
        .error
        .as_ref()
        .map(super::failure_column::encode)
        .transpose()?;
    let changed = tx.execute(
        "UPDATE runs SET status = ?2, error = ?3, kind = ?4, fs_type = ?5, mount_options = ?6, \
             device = ?7, kernel_release = ?8, started_at_ms = ?9, wall_ns = ?10, writes = ?11, \
             syncs = ?12, bytes = ?13, iops = ?14, mib_per_sec = ?15, write_p50_ns = ?16, \
             write_p99_ns = ?17, sync_p50_ns = ?18, sync_p99_ns = ?19, device_flushes = ?20, \
             flushes_per_sync = ?21, spec_json = ?22, system_json = ?23, device_json = ?24, \
             warnings_json = ?25, noise_json = ?26, detail_json = ?27, \
             kernel_trace_json = ?28, durable_p99_ns = ?29, durable_ops_per_sec = ?30, \
             warning_codes = ?31, error_code = ?32 \
             WHERE id = ?1",
        params![
            id,
            result.status.as_str(),
            error.as_ref().map(|(text, _)| text),
            kind_name(result.spec.kind())?,
            place.fs_type,
            place.mount_options,
            device,
            place.kernel_release,
            result.started_at_ms,
            to_int("wall_ns", result.wall_ns)?,
            to_int("writes", result.writes)?,
            to_int("syncs", result.syncs)?,
            to_int("bytes", result.bytes)?,
            summary.iops,
            summary.mib_per_sec,
            to_int("write p50", summary.write_lat.p50_ns)?,
            to_int("write p99", summary.write_lat.p99_ns)?,
            to_int("sync p50", summary.sync_lat.p50_ns)?,
            to_int("sync p99", summary.sync_lat.p99_ns)?,
            to_opt_int("device flushes", summary.device_flushes)?,
            summary.flushes_per_sync,
            serde_json::to_string(&result.spec)?,
            serde_json::to_string(&result.system)?,
            serde_json::to_string(&result.device)?,
            serde_json::to_string(&result.warnings)?,
            result
                .noise
                .as_ref()
                .map(serde_json::to_string)
                .transpose()?,
            KindDetail::of(result)
                .map(|d| serde_json::to_string(&d))
                .transpose()?,
            result
                .kernel_trace
                .as_ref()
                .map(serde_json::to_string)
                .transpose()?,
            to_opt_int(
                "durable p99",
                summary.durable_lat.as_ref().map(|l| l.p99_ns)
            )?,
            summary.durable_ops_per_sec,
            result
                .warnings
                .iter()
                .map(|w| w.code())
                .collect::<Vec<_>>()
                .join(" "),
            error.as_ref().map(|(_, code)| *code),
        ],
    )?;
    if changed == 0 {
        return Err(StoreError::NotFound { id });
    }
    write_children(tx, result)?;
    Ok(())
}

/// The 14 parameters of an `intervals` row, in column order.
pub(super) fn interval_params(
    run_id: i64,
    idx: u64,
    sample: &IntervalSample,
) -> Result<[rusqlite::types::Value; 15], StoreError> {
    use rusqlite::types::Value;
    let opt =
        |what, v| Ok::<_, StoreError>(to_opt_int(what, v)?.map_or(Value::Null, Value::Integer));
    Ok([
        Value::Integer(run_id),
        Value::Integer(to_int("interval index", idx)?),
        Value::Integer(to_int("interval t_ms", sample.t_ms)?),
        Value::Integer(to_int("interval dur_ms", sample.dur_ms)?),
        Value::Integer(to_int("interval writes", sample.writes)?),
        Value::Integer(to_int("interval syncs", sample.syncs)?),
        Value::Integer(to_int("interval bytes", sample.bytes)?),
        opt("interval write p50", sample.write_p50_ns)?,
        opt("interval write p99", sample.write_p99_ns)?,
        opt("interval sync p50", sample.sync_p50_ns)?,
        opt("interval sync p99", sample.sync_p99_ns)?,
        opt("interval device flushes", sample.device_flushes)?,
        opt("interval kernel commits", sample.kernel_commits)?,
        opt("interval kernel flushes", sample.kernel_flushes)?,
        // A non-finite mean (never produced by the sampler) is stored as unknown.
        sample
            .inflight
            .filter(|v| v.is_finite())
            .map_or(Value::Null, Value::Real),
    ])
}

/// Replaces a run's interval, thread and histogram rows (intervals streamed while the run
/// went are replaced by the final list, never duplicated).
fn write_children(tx: &Transaction<'_>, result: &RunResult) -> Result<(), StoreError> {
    let id = result.id;
    for table in ["intervals", "thread_stats", "histograms"] {
        tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [id])?;
    }
    let mut insert = tx.prepare(
        "INSERT INTO intervals (run_id, idx, t_ms, dur_ms, writes, syncs, bytes, write_p50_ns, \
         write_p99_ns, sync_p50_ns, sync_p99_ns, device_flushes, kernel_commits, kernel_flushes, inflight) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    for (idx, sample) in result.intervals.iter().enumerate() {
        insert.execute(interval_params(
            id,
            u64::try_from(idx).unwrap_or(u64::MAX),
            sample,
        )?)?;
    }
    let mut insert = tx.prepare(
        "INSERT INTO thread_stats (run_id, thread, writes, syncs, bytes, busy_ns, wall_ns) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for thread in &result.threads {
        insert.execute(params![
            id,
            thread.thread,
            to_int("thread writes", thread.writes)?,
            to_int("thread syncs", thread.syncs)?,
            to_int("thread bytes", thread.bytes)?,
            to_int("thread busy_ns", thread.busy_ns)?,
            to_int("thread wall_ns", thread.wall_ns)?,
        ])?;
    }
    let mut insert = tx
        .prepare("INSERT INTO histograms (run_id, name, encoding, data) VALUES (?1, ?2, ?3, ?4)")?;
    let durable = result.durable_lat.as_ref().map(|h| ("durable", h));
    for (name, hist) in [("write", &result.write_lat), ("sync", &result.sync_lat)]
        .into_iter()
        .chain(durable)
    {
        insert.execute(params![id, name, HISTOGRAM_ENCODING, hist.to_bytes()?])?;
    }
    Ok(())
}
