//! Reading runs: list with filters, load one run whole, pick run ids for comparisons.

use rusqlite::types::{Type, Value};
use rusqlite::{OptionalExtension, Row};
use serde::Serialize;

use super::{HISTOGRAM_ENCODING, Store, StoreError};
use crate::metrics::{
    DeviceAccounting, IntervalSample, LatencyHistogram, RunResult, RunStatus, ThreadStats,
};
use crate::probe::SystemInfo;
use crate::spec::WorkloadSpec;

/// One line of `fsynclab list`: a run's identity, placement and headline figures.
/// The figures are `None` until the run has a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    /// Store id.
    pub id: i64,
    /// Stable identity kept through export and import (lowercase hyphenated UUID; empty
    /// only for a row some other program wrote without one).
    pub uuid: String,
    /// Experiment the run belongs to.
    pub experiment_id: Option<i64>,
    /// Label (runs are compared by label).
    pub label: Option<String>,
    /// Tags, sorted.
    pub tags: Vec<String>,
    /// How the run ended (or `running`).
    pub status: RunStatus,
    /// Why it failed or was interrupted: typed, or the sentence of a run stored before
    /// issue 32.
    pub error: Option<crate::metrics::Failure>,
    /// Workload kind (`fileio`).
    pub kind: String,
    /// Preset the spec came from.
    pub preset: Option<String>,
    /// Preset scale factor.
    pub preset_scale: Option<f64>,
    /// Target directory as given.
    pub target: String,
    /// Filesystem type of the target's mount.
    pub fs_type: Option<String>,
    /// Mount options of the target's mount.
    pub mount_options: Option<String>,
    /// Block device name (`nvme0n1`, `loop0`).
    pub device: Option<String>,
    /// `uname -r` of the machine that ran it.
    pub kernel_release: Option<String>,
    /// When the run was begun, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// Duration of the timed part, ns.
    pub wall_ns: Option<u64>,
    /// Writes completed.
    pub writes: Option<u64>,
    /// Sync calls completed.
    pub syncs: Option<u64>,
    /// Writes per second.
    pub iops: Option<f64>,
    /// Application MiB written per second.
    pub mib_per_sec: Option<f64>,
    /// 99th percentile write latency.
    pub write_p99_ns: Option<u64>,
    /// Median sync latency.
    pub sync_p50_ns: Option<u64>,
    /// 99th percentile sync latency.
    pub sync_p99_ns: Option<u64>,
    /// Device flushes per sync call.
    pub flushes_per_sync: Option<f64>,
    /// 99th percentile durable-operation latency (`None`: the workload has none).
    pub durable_p99_ns: Option<u64>,
    /// Durable operations per second.
    pub durable_ops_per_sec: Option<f64>,
    /// For a run without a result: the end of its last streamed interval, ms.
    pub progress_t_ms: Option<u64>,
    /// For a run without a result: the writes it streamed.
    pub progress_writes: Option<u64>,
    /// Worker threads (clients of a fileserver run), from the stored workload; what tells
    /// the points of a threads sweep apart. Not in `list --json` (its fields are the
    /// columns of `runs`; the workload is in `show`).
    #[serde(skip)]
    pub threads: Option<u32>,
    /// How writes are made durable (`fsync`, `fdatasync`, `O_SYNC`, `O_DSYNC` for writes
    /// opened so, `none`...; a smallfiles run's file sync), from the stored workload. Not in
    /// `list --json`, as `threads`.
    #[serde(skip)]
    pub sync: Option<String>,
    /// The superblock options of the target's mount (btrfs `ssd`/`nossd`, ext4
    /// `data=`...), from the stored system: `mount_options` alone are the per-mount ones.
    /// Not in `list --json`, as `threads`.
    #[serde(skip)]
    pub super_options: Option<String>,
    /// The stored workload as JSON, read only when [`RunFilter::with_workload`] asks (a
    /// trend's change point compares two runs' workloads). Not in `list --json`, as
    /// `threads`.
    #[serde(skip)]
    pub spec_json: Option<String>,
}

/// A run loaded whole.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredRun {
    /// The list row.
    pub row: RunRow,
    /// The workload.
    pub spec: WorkloadSpec,
    /// Where it ran.
    pub system: SystemInfo,
    /// What it measured: `None` while running, and for runs that failed (via
    /// [`Store::fail_run`]) or were interrupted before storing a result.
    pub result: Option<RunResult>,
    /// How far the run got, as streamed while it ran (`None` when nothing was streamed).
    pub progress: Option<super::RunProgress>,
    /// Interval samples streamed before the run ended without a result (interrupted by a
    /// kill, or still running); empty when `result` holds them.
    pub partial_intervals: Vec<IntervalSample>,
    /// The run's private directory, while it is not known to be removed.
    pub run_dir: Option<super::RunDir>,
    /// Where the workload came from (a fio job file, an imported fio result); `None` for
    /// runs from the form, a preset or flags.
    pub origin: Option<super::RunOrigin>,
    /// What a crash test's power cuts found (issue 33); `None` for any other run.
    pub crash_test: Option<crate::crashlog::CrashReport>,
}

/// Which runs [`Store::list_runs`] returns; every field is optional and they combine with AND.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFilter {
    /// Case-insensitive substring of the label, preset, target, filesystem type, kernel
    /// release or any tag.
    pub text: Option<String>,
    /// Exactly this status.
    pub status: Option<RunStatus>,
    /// Exactly this label.
    pub label: Option<String>,
    /// Exactly this preset.
    pub preset: Option<String>,
    /// Exactly this filesystem type (`ext4`).
    pub fs_type: Option<String>,
    /// Kernel releases starting with this (`6.8` matches `6.8.0-45-generic`).
    pub kernel: Option<String>,
    /// Runs of this experiment.
    pub experiment_id: Option<i64>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
    /// Read each run's stored workload into [`RunRow::spec_json`] (a trend compares the
    /// workloads either side of a change point); left out otherwise (~600 bytes a run).
    pub with_workload: bool,
}

/// Columns read by [`row_from`], in its order.
const ROW_SELECT: &str = "SELECT r.id, r.experiment_id, r.label, \
     (SELECT json_group_array(tag) FROM \
        (SELECT tag FROM run_tags t WHERE t.run_id = r.id ORDER BY tag)), \
     r.status, r.error, r.kind, r.preset, r.preset_scale, r.target, r.fs_type, \
     r.mount_options, r.device, r.kernel_release, r.created_at_ms, r.wall_ns, r.writes, \
     r.syncs, r.iops, r.mib_per_sec, r.write_p99_ns, r.sync_p50_ns, r.sync_p99_ns, \
     r.flushes_per_sync, r.progress_t_ms, r.progress_writes, r.uuid, \
     json_extract(r.spec_json, '$.threads'), \
     CASE WHEN r.kind = 'smallfiles' THEN json_extract(r.spec_json, '$.smallfiles.sync') \
       WHEN json_extract(r.spec_json, '$.open_flags.sync') THEN 'O_SYNC' \
       WHEN json_extract(r.spec_json, '$.open_flags.dsync') THEN 'O_DSYNC' \
       ELSE json_extract(r.spec_json, '$.sync') END, \
     json_extract(r.system_json, '$.mount.super_options'), r.durable_p99_ns, \
     r.durable_ops_per_sec, r.spec_json FROM runs r";

fn conversion_error(
    column: usize,
    kind: Type,
    err: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, kind, Box::new(err))
}

#[derive(Debug, thiserror::Error)]
#[error("unknown run status '{0}'")]
struct UnknownStatus(String);

/// Reads a [`RunRow`] from a row of [`ROW_SELECT`].
fn row_from(row: &Row<'_>) -> rusqlite::Result<RunRow> {
    let tags_json: String = row.get(3)?;
    let tags = serde_json::from_str(&tags_json).map_err(|e| conversion_error(3, Type::Text, e))?;
    let status: String = row.get(4)?;
    let status = RunStatus::parse(&status)
        .ok_or_else(|| conversion_error(4, Type::Text, UnknownStatus(status.clone())))?;
    let has_syncs = opt_u64_at(row, 17)?.is_some_and(|n| n > 0);
    Ok(RunRow {
        id: row.get(0)?,
        uuid: row.get::<_, Option<String>>(26)?.unwrap_or_default(),
        experiment_id: row.get(1)?,
        label: row.get(2)?,
        tags,
        status,
        error: super::failure_column::decode(row.get(5)?),
        kind: row.get(6)?,
        preset: row.get(7)?,
        preset_scale: row.get(8)?,
        target: row.get(9)?,
        fs_type: row.get(10)?,
        mount_options: row.get(11)?,
        device: row.get(12)?,
        kernel_release: row.get(13)?,
        created_at_ms: row.get(14)?,
        wall_ns: opt_u64_at(row, 15)?,
        writes: opt_u64_at(row, 16)?,
        syncs: opt_u64_at(row, 17)?,
        iops: row.get(18)?,
        mib_per_sec: row.get(19)?,
        write_p99_ns: opt_u64_at(row, 20)?,
        // A run without syncs (O_SYNC/O_DSYNC writes, `--sync none`) has no sync latency,
        // not one of 0 ns.
        sync_p50_ns: opt_u64_at(row, 21)?.filter(|_| has_syncs),
        sync_p99_ns: opt_u64_at(row, 22)?.filter(|_| has_syncs),
        flushes_per_sync: row.get(23)?,
        durable_p99_ns: opt_u64_at(row, 30)?,
        durable_ops_per_sec: row.get(31)?,
        progress_t_ms: opt_u64_at(row, 24)?,
        progress_writes: opt_u64_at(row, 25)?,
        threads: row
            .get::<_, Option<i64>>(27)?
            .and_then(|t| u32::try_from(t).ok()),
        sync: row
            .get::<_, Option<rusqlite::types::Value>>(28)?
            .and_then(|v| match v {
                rusqlite::types::Value::Text(t) => Some(t),
                _ => None,
            }),
        super_options: row
            .get::<_, Option<rusqlite::types::Value>>(29)?
            .and_then(|v| match v {
                rusqlite::types::Value::Text(t) => Some(t),
                _ => None,
            }),
        spec_json: row.get(32)?,
    })
}

/// A count or duration column: stored as INTEGER, refused when negative.
fn u64_at(row: &Row<'_>, column: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(column)?;
    u64::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, value))
}

/// [`u64_at`] for a nullable column.
fn opt_u64_at(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<u64>> {
    let value: Option<i64> = row.get(column)?;
    value
        .map(|v| u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, v)))
        .transpose()
}

/// Longest filter text that can match a run: a target path's limit.
pub const MAX_FILTER_BYTES: usize = 4096;

/// `%text%` for LIKE, with the wildcards in `text` escaped (ESCAPE '\').
fn like_pattern(prefix: &str, text: &str, suffix: &str) -> String {
    let mut out = String::from(prefix);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str(suffix);
    out
}

/// Columns of a run needed to rebuild its [`RunResult`] besides the [`RunRow`].
struct Detail {
    spec_json: String,
    system_json: String,
    started_at_ms: Option<i64>,
    bytes: Option<u64>,
    device_json: Option<String>,
    warnings_json: Option<String>,
    noise_json: Option<String>,
    detail_json: Option<String>,
    origin_json: Option<String>,
    kernel_trace_json: Option<String>,
}

impl Store {
    /// Runs matching `filter`, newest first.
    pub fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunRow>, StoreError> {
        // No column the text is matched against holds more than a path (4096 bytes): a
        // longer text matches nothing, and SQLite refuses a LIKE pattern past 50 000 bytes
        // ("pattern too complex"), which a pasted text must not turn into an error.
        if filter
            .text
            .as_ref()
            .is_some_and(|t| t.len() > MAX_FILTER_BYTES)
        {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<&str> = Vec::new();
        let mut args: Vec<Value> = Vec::new();
        if let Some(text) = &filter.text {
            let pattern = like_pattern("%", text, "%");
            clauses.push(
                "(r.label LIKE ?1 ESCAPE '\\' OR r.preset LIKE ?1 ESCAPE '\\' \
                 OR r.target LIKE ?1 ESCAPE '\\' OR r.fs_type LIKE ?1 ESCAPE '\\' \
                 OR r.kernel_release LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM run_tags t \
                 WHERE t.run_id = r.id AND t.tag LIKE ?1 ESCAPE '\\'))",
            );
            args.push(Value::Text(pattern));
        }
        // Every other clause takes the next numbered parameter, after ?1 of the text clause.
        let mut exact = |clause: &'static str, value: Value| {
            clauses.push(clause);
            args.push(value);
        };
        if let Some(status) = filter.status {
            exact("r.status = ?", Value::Text(status.as_str().into()));
        }
        if let Some(label) = &filter.label {
            exact("r.label = ?", Value::Text(label.clone()));
        }
        if let Some(preset) = &filter.preset {
            exact("r.preset = ?", Value::Text(preset.clone()));
        }
        if let Some(fs_type) = &filter.fs_type {
            exact("r.fs_type = ?", Value::Text(fs_type.clone()));
        }
        if let Some(kernel) = &filter.kernel {
            exact(
                "r.kernel_release LIKE ? ESCAPE '\\'",
                Value::Text(like_pattern("", kernel, "%")),
            );
        }
        if let Some(experiment) = filter.experiment_id {
            exact("r.experiment_id = ?", Value::Integer(experiment));
        }
        let mut sql = if filter.with_workload {
            String::from(ROW_SELECT)
        } else {
            ROW_SELECT.replace("r.spec_json FROM", "NULL FROM")
        };
        for (i, clause) in clauses.iter().enumerate() {
            sql.push_str(if i == 0 { " WHERE " } else { " AND " });
            sql.push_str(clause);
        }
        sql.push_str(" ORDER BY r.created_at_ms DESC, r.id DESC LIMIT ?");
        let limit = filter
            .limit
            .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        args.push(Value::Integer(limit));
        // Numbered (?1) and anonymous (?) parameters mix: an anonymous one takes the number
        // after the largest so far, so the text pattern is bound once and reused.
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One run with its spec, system and (when stored) full result.
    pub fn load_run(&self, id: i64) -> Result<StoredRun, StoreError> {
        let row = self
            .conn
            .query_row(&format!("{ROW_SELECT} WHERE r.id = ?1"), [id], row_from)
            .optional()?
            .ok_or(StoreError::NotFound { id })?;
        let detail = self.conn.query_row(
            "SELECT spec_json, system_json, started_at_ms, bytes, device_json, warnings_json, \
             noise_json, detail_json, origin_json, kernel_trace_json FROM runs WHERE id = ?1",
            [id],
            |r| {
                Ok(Detail {
                    spec_json: r.get(0)?,
                    system_json: r.get(1)?,
                    started_at_ms: r.get(2)?,
                    bytes: opt_u64_at(r, 3)?,
                    device_json: r.get(4)?,
                    warnings_json: r.get(5)?,
                    noise_json: r.get(6)?,
                    detail_json: r.get(7)?,
                    origin_json: r.get(8)?,
                    kernel_trace_json: r.get(9)?,
                })
            },
        )?;
        let spec: WorkloadSpec = serde_json::from_str(&detail.spec_json)?;
        let system: SystemInfo = serde_json::from_str(&detail.system_json)?;
        let result = match row.wall_ns {
            None => None,
            Some(wall_ns) => Some(self.load_result(&row, wall_ns, &detail, &spec, &system)?),
        };
        let partial_intervals = match result {
            None => self.load_intervals(id)?,
            Some(_) => Vec::new(),
        };
        Ok(StoredRun {
            row,
            spec,
            system,
            result,
            progress: self.run_progress(id)?,
            partial_intervals,
            run_dir: self.run_dir(id)?,
            origin: detail
                .origin_json
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
            crash_test: self.crash_test(id)?,
        })
    }

    fn load_result(
        &self,
        row: &RunRow,
        wall_ns: u64,
        detail: &Detail,
        spec: &WorkloadSpec,
        system: &SystemInfo,
    ) -> Result<RunResult, StoreError> {
        let id = row.id;
        let missing = |what: &str| StoreError::Corrupt {
            id,
            problem: format!("its result has no {what}"),
        };
        let device: DeviceAccounting = serde_json::from_str(
            detail
                .device_json
                .as_deref()
                .ok_or_else(|| missing("device accounting"))?,
        )?;
        let warnings: Vec<crate::metrics::Warning> = match &detail.warnings_json {
            Some(json) => serde_json::from_str(json)?,
            None => Vec::new(),
        };
        let kind_detail: super::runs::KindDetail = match &detail.detail_json {
            Some(json) => serde_json::from_str(json)?,
            None => Default::default(),
        };
        Ok(RunResult {
            id,
            status: row.status,
            error: row.error.clone(),
            spec: spec.clone(),
            system: system.clone(),
            started_at_ms: detail.started_at_ms.ok_or_else(|| missing("start time"))?,
            wall_ns,
            writes: row.writes.ok_or_else(|| missing("write count"))?,
            syncs: row.syncs.ok_or_else(|| missing("sync count"))?,
            bytes: detail.bytes.ok_or_else(|| missing("byte count"))?,
            write_lat: self.load_histogram(id, "write")?,
            sync_lat: self.load_histogram(id, "sync")?,
            durable_lat: self.load_optional_histogram(id, "durable")?,
            intervals: self.load_intervals(id)?,
            threads: self.load_threads(id)?,
            device,
            warnings,
            noise: detail
                .noise_json
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
            ops: kind_detail.ops,
            phases: kind_detail.phases,
            group: kind_detail.group,
            reported: kind_detail.reported,
            kernel_trace: detail
                .kernel_trace_json
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
        })
    }

    fn load_histogram(&self, id: i64, name: &str) -> Result<LatencyHistogram, StoreError> {
        self.load_optional_histogram(id, name)?
            .ok_or_else(|| StoreError::Corrupt {
                id,
                problem: format!("its {name} latency histogram is missing"),
            })
    }

    /// A histogram a run may lack (`durable`: workloads without a durable operation).
    fn load_optional_histogram(
        &self,
        id: i64,
        name: &str,
    ) -> Result<Option<LatencyHistogram>, StoreError> {
        let Some((encoding, data)) = self
            .conn
            .query_row(
                "SELECT encoding, data FROM histograms WHERE run_id = ?1 AND name = ?2",
                (id, name),
                |r| Ok::<(String, Vec<u8>), _>((r.get(0)?, r.get(1)?)),
            )
            .optional()?
        else {
            return Ok(None);
        };
        if encoding != HISTOGRAM_ENCODING {
            return Err(StoreError::Corrupt {
                id,
                problem: format!(
                    "its {name} latency histogram has encoding '{encoding}', not '{HISTOGRAM_ENCODING}'"
                ),
            });
        }
        Ok(Some(LatencyHistogram::from_bytes(&data)?))
    }

    /// A run's stored interval samples, in order (streamed while it ran, or final).
    pub fn load_intervals(&self, id: i64) -> Result<Vec<IntervalSample>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT t_ms, dur_ms, writes, syncs, bytes, write_p50_ns, write_p99_ns, sync_p50_ns, \
             sync_p99_ns, device_flushes, kernel_commits, kernel_flushes, inflight FROM intervals WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(IntervalSample {
                t_ms: u64_at(r, 0)?,
                dur_ms: u64_at(r, 1)?,
                writes: u64_at(r, 2)?,
                syncs: u64_at(r, 3)?,
                bytes: u64_at(r, 4)?,
                write_p50_ns: opt_u64_at(r, 5)?,
                write_p99_ns: opt_u64_at(r, 6)?,
                sync_p50_ns: opt_u64_at(r, 7)?,
                sync_p99_ns: opt_u64_at(r, 8)?,
                device_flushes: opt_u64_at(r, 9)?,
                kernel_commits: opt_u64_at(r, 10)?,
                kernel_flushes: opt_u64_at(r, 11)?,
                inflight: r.get::<_, Option<f64>>(12)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn load_threads(&self, id: i64) -> Result<Vec<ThreadStats>, StoreError> {
        // Insertion order (rowid) is the order of `RunResult::threads`.
        let mut stmt = self.conn.prepare(
            "SELECT thread, writes, syncs, bytes, busy_ns, wall_ns FROM thread_stats \
             WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(ThreadStats {
                thread: r.get(0)?,
                writes: u64_at(r, 1)?,
                syncs: u64_at(r, 2)?,
                bytes: u64_at(r, 3)?,
                busy_ns: u64_at(r, 4)?,
                wall_ns: u64_at(r, 5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Ids of the runs with this label, oldest first.
    pub fn run_ids_with_label(&self, label: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE label = ?1 ORDER BY created_at_ms, id")?;
        let ids = stmt.query_map([label], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// Ids of the runs of an experiment, oldest first ([`StoreError::ExperimentNotFound`]
    /// when there is no such experiment).
    pub fn run_ids_in_experiment(&self, experiment_id: i64) -> Result<Vec<i64>, StoreError> {
        self.check_experiment(experiment_id)?;
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE experiment_id = ?1 ORDER BY created_at_ms, id")?;
        let ids = stmt.query_map([experiment_id], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }
}
