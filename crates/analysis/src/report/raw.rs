//! Raw exports that other tools read: `export --format json|csv|intervals-csv|hlog`.
//!
//! Every exporter is a pure function of stored runs ([`StoredRun`]) into a writer; the
//! shapes are documented in docs/EXPORT.md "## Raw formats". Runs without a result
//! (running, failed, interrupted) keep their metadata everywhere: in JSON with
//! `"result": null` and their streamed samples, in CSV with empty figure cells, in the
//! intervals CSV with the samples streamed before they ended, and in the hlog as a comment
//! line only. Imported fio runs without histograms (plain fio JSON) carry the percentiles
//! fio printed in JSON and CSV, `"histograms": null` in JSON, and a comment in the hlog.

use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use serde_json::{Value, json};

use crate::metrics::{IntervalSample, LatencyHistogram, RunResult};
use crate::store::StoredRun;

/// Version of the `export --format json` document's shape; bumped when a field is renamed,
/// removed or changes meaning (adding a field does not bump it).
pub const RAW_JSON_SCHEMA_VERSION: u32 = 1;

/// The percentiles in each histogram's table of the JSON export.
pub const JSON_PERCENTILES: [f64; 9] = [0.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 100.0];

/// The raw export formats, as `export --format` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawFormat {
    /// `json`: [`runs_json`].
    Json,
    /// `csv`: [`runs_csv`].
    Csv,
    /// `intervals-csv`: [`intervals_csv`].
    IntervalsCsv,
    /// `hlog`: [`hlog`].
    Hlog,
}

/// The names `export --format` accepts for the raw formats.
pub const RAW_FORMATS: [&str; 4] = ["json", "csv", "intervals-csv", "hlog"];

impl RawFormat {
    /// The format named `name` (exactly one of [`RAW_FORMATS`]); `None` otherwise.
    pub fn parse(name: &str) -> Option<RawFormat> {
        match name {
            "json" => Some(RawFormat::Json),
            "csv" => Some(RawFormat::Csv),
            "intervals-csv" => Some(RawFormat::IntervalsCsv),
            "hlog" => Some(RawFormat::Hlog),
            _ => None,
        }
    }

    /// Writes `runs` in this format.
    pub fn write<W: Write>(self, runs: &[StoredRun], out: W) -> Result<(), RawExportError> {
        match self {
            RawFormat::Json => runs_json(runs, out),
            RawFormat::Csv => runs_csv(runs, out),
            RawFormat::IntervalsCsv => intervals_csv(runs, out),
            RawFormat::Hlog => hlog(runs, out),
        }
    }
}

/// Why a raw export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RawExportError {
    /// The writer refused the bytes (a full disk, a closed pipe).
    #[error("cannot write the {format} export: {source}")]
    Write {
        /// The export format (`csv`).
        format: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A stored histogram could not be encoded or decoded (a damaged database row).
    #[error("run {run}: the {which} latency histogram cannot be exported: {detail}")]
    Histogram {
        /// The run's id.
        run: i64,
        /// `write`, `sync` or an operation's name.
        which: String,
        /// What went wrong.
        detail: String,
    },
}

fn write_err(format: &'static str) -> impl Fn(io::Error) -> RawExportError {
    move |source| RawExportError::Write { format, source }
}

fn csv_err(format: &'static str) -> impl Fn(csv::Error) -> RawExportError {
    move |e| RawExportError::Write {
        format,
        source: io::Error::other(e.to_string()),
    }
}

/// One histogram as a percentile table (ns) plus the HdrHistogram V2+deflate encoding in
/// base64, so every figure can be computed again.
fn histogram_json(run: i64, which: &str, h: &LatencyHistogram) -> Result<Value, RawExportError> {
    let bytes = h.to_bytes().map_err(|e| RawExportError::Histogram {
        run,
        which: which.to_string(),
        detail: e.to_string(),
    })?;
    let table: Vec<Value> = JSON_PERCENTILES
        .iter()
        .map(|&p| json!({"percentile": p, "value_ns": h.percentile_ns(p)}))
        .collect();
    Ok(json!({
        "count": h.count(),
        "percentiles_ns": table,
        "hdr_v2_deflate_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
    }))
}

/// The `histograms` object of one result: write, sync, durable operations (`null` when the
/// workload has none) and every operation of the kinds beyond fileio; `null` for an import
/// that has percentiles only.
fn histograms_json(id: i64, r: &RunResult) -> Result<Value, RawExportError> {
    if !r.has_histograms() {
        return Ok(Value::Null);
    }
    let ops: Result<Vec<Value>, RawExportError> = r
        .ops
        .iter()
        .map(|o| {
            Ok(json!({
                "op": o.op,
                "count": o.count,
                "bytes": o.bytes,
                "latency": histogram_json(id, &o.op, &o.lat)?,
            }))
        })
        .collect();
    let durable = match &r.durable_lat {
        Some(h) => histogram_json(id, "durable", h)?,
        None => Value::Null,
    };
    Ok(json!({
        "write": histogram_json(id, "write", &r.write_lat)?,
        "sync": histogram_json(id, "sync", &r.sync_lat)?,
        "durable": durable,
        "ops": ops?,
    }))
}

/// One run's document in the JSON export.
pub fn run_document(run: &StoredRun) -> Result<Value, RawExportError> {
    let row = &run.row;
    let result = match &run.result {
        Some(r) => {
            let mut summary = super::run_json(r);
            // The document carries these once, at its top level.
            for key in ["workload", "id", "status", "error", "error_code"] {
                if let Some(map) = summary.as_object_mut() {
                    map.remove(key);
                }
            }
            json!({
                "summary": summary,
                "intervals": r.intervals,
                "threads": r.threads,
                "histograms": histograms_json(row.id, r)?,
            })
        }
        None => Value::Null,
    };
    Ok(json!({
        "id": row.id,
        "uuid": row.uuid,
        "label": row.label,
        "tags": row.tags,
        "experiment_id": row.experiment_id,
        "kind": row.kind,
        "preset": row.preset,
        "preset_scale": row.preset_scale,
        "status": row.status.as_str(),
        "error": row.error.as_ref().map(crate::words::failures::stored_failure_text),
        "error_code": row.error.as_ref().map(|e| e.code()),
        "created_at_ms": row.created_at_ms,
        "spec": run.spec,
        "system": super::shapes::system_json(&run.system),
        "origin": run.origin,
        "progress": run.progress,
        "partial_intervals": run.partial_intervals,
        "result": result,
    }))
}

/// `export --format json`: `{"schema_version", "fsynclab_version", "runs": [...]}`, pretty
/// printed, one document per run in the order given.
pub fn runs_json<W: Write>(runs: &[StoredRun], mut out: W) -> Result<(), RawExportError> {
    let docs: Result<Vec<Value>, RawExportError> = runs.iter().map(run_document).collect();
    let doc = json!({
        "schema_version": RAW_JSON_SCHEMA_VERSION,
        "fsynclab_version": env!("CARGO_PKG_VERSION"),
        "runs": docs?,
    });
    serde_json::to_writer_pretty(&mut out, &doc)
        .map_err(|e| write_err("json")(io::Error::other(e)))?;
    out.write_all(b"\n").map_err(write_err("json"))
}

/// Guards a text cell against spreadsheet formula injection: a value starting with `=`,
/// `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, which spreadsheets show
/// as text and never evaluate.
pub fn csv_text(value: &str) -> String {
    // Control characters (ESC, BEL, OSC sequences in a label from an old bundle) are
    // escaped, so a CSV shown in a terminal cannot drive it.
    let value = crate::spec::escape_control(value);
    match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{value}"),
        _ => value.into_owned(),
    }
}

/// The header of `export --format csv` (units in the names).
pub const RUNS_CSV_HEADER: [&str; 35] = [
    "id",
    "uuid",
    "label",
    "tags",
    "experiment_id",
    "kind",
    "preset",
    "preset_scale",
    "status",
    "error",
    "created_at_ms",
    "fs_type",
    "mount_options",
    "device",
    "kernel",
    "target",
    "threads",
    "block_size_bytes",
    "file_size_bytes",
    "sync_method",
    "sync_every",
    "origin",
    "wall_s",
    "writes",
    "syncs",
    "bytes",
    "iops",
    "syncs_per_sec",
    "mib_per_sec",
    "write_p50_us",
    "write_p99_us",
    "sync_p50_us",
    "sync_p99_us",
    "sync_p999_us",
    "flushes_per_sync",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn us(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e3)
}

/// The figure cells of one result (empty cells for a run without one).
fn figure_cells(r: Option<&RunResult>) -> Vec<String> {
    let Some(r) = r else {
        return vec![String::new(); 13];
    };
    let s = r.summary();
    let (w, sy) = (r.latency_summary(false), r.latency_summary(true));
    vec![
        format!("{:.6}", r.wall_secs()),
        r.writes.to_string(),
        r.syncs.to_string(),
        r.bytes.to_string(),
        format!("{:.3}", s.iops),
        format!("{:.3}", s.syncs_per_sec),
        format!("{:.3}", s.mib_per_sec),
        us(w.p50_ns),
        us(w.p99_ns),
        us(sy.p50_ns),
        us(sy.p99_ns),
        us(sy.p999_ns),
        s.flushes_per_sync
            .map(|f| format!("{f:.4}"))
            .unwrap_or_default(),
    ]
}

/// One summary row of `export --format csv`.
fn run_row(run: &StoredRun) -> Vec<String> {
    let flat = run.spec.flat();
    let row = &run.row;
    let text = |s: &str| csv_text(s);
    let mut cells = vec![
        row.id.to_string(),
        text(&row.uuid),
        text(row.label.as_deref().unwrap_or("")),
        text(&row.tags.join(";")),
        opt(row.experiment_id),
        text(&row.kind),
        text(row.preset.as_deref().unwrap_or("")),
        opt(row.preset_scale),
        row.status.as_str().to_string(),
        text(
            &row.error
                .as_ref()
                .map(crate::words::failures::stored_failure_text)
                .unwrap_or_default(),
        ),
        row.created_at_ms.to_string(),
        text(row.fs_type.as_deref().unwrap_or("")),
        text(row.mount_options.as_deref().unwrap_or("")),
        text(row.device.as_deref().unwrap_or("")),
        text(row.kernel_release.as_deref().unwrap_or("")),
        text(&row.target),
        run.spec.common.threads.to_string(),
        // fileio's columns; another kind's run shows them at their defaults, as stored.
        flat.block_size.to_string(),
        flat.file_size.to_string(),
        flat.sync.as_str().to_string(),
        flat.sync_every.to_string(),
        text(run.origin.as_ref().map(|o| o.kind.as_str()).unwrap_or("")),
    ];
    cells.extend(figure_cells(run.result.as_ref()));
    cells
}

/// `export --format csv`: a header and one summary row per run (the `csv` crate quotes
/// as needed; text cells are guarded by [`csv_text`]).
pub fn runs_csv<W: Write>(runs: &[StoredRun], out: W) -> Result<(), RawExportError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(RUNS_CSV_HEADER).map_err(csv_err("csv"))?;
    for run in runs {
        w.write_record(run_row(run)).map_err(csv_err("csv"))?;
    }
    w.flush().map_err(write_err("csv"))
}

/// The header of `export --format intervals-csv`.
pub const INTERVALS_CSV_HEADER: [&str; 12] = [
    "run_id",
    "t_ms",
    "dur_ms",
    "writes",
    "syncs",
    "bytes",
    "write_p50_ns",
    "write_p99_ns",
    "sync_p50_ns",
    "sync_p99_ns",
    "device_flushes",
    "partial",
];

/// `export --format intervals-csv`: one row per interval sample with its run's id; a run
/// without a result contributes the samples streamed before it ended (`partial` = 1).
pub fn intervals_csv<W: Write>(runs: &[StoredRun], out: W) -> Result<(), RawExportError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(INTERVALS_CSV_HEADER)
        .map_err(csv_err("intervals-csv"))?;
    for run in runs {
        let (samples, partial): (&[IntervalSample], &str) = match &run.result {
            Some(r) => (&r.intervals, "0"),
            None => (&run.partial_intervals, "1"),
        };
        for s in samples {
            w.write_record([
                run.row.id.to_string(),
                s.t_ms.to_string(),
                s.dur_ms.to_string(),
                s.writes.to_string(),
                s.syncs.to_string(),
                s.bytes.to_string(),
                opt(s.write_p50_ns),
                opt(s.write_p99_ns),
                opt(s.sync_p50_ns),
                opt(s.sync_p99_ns),
                opt(s.device_flushes),
                partial.to_string(),
            ])
            .map_err(csv_err("intervals-csv"))?;
        }
    }
    w.flush().map_err(write_err("intervals-csv"))
}

/// The HdrHistogram of a stored histogram (decoded from its own V2 encoding).
fn hdr_of(run: i64, which: &str, h: &LatencyHistogram) -> Result<Histogram<u64>, RawExportError> {
    let fail = |detail: String| RawExportError::Histogram {
        run,
        which: which.to_string(),
        detail,
    };
    let bytes = h.to_bytes().map_err(|e| fail(e.to_string()))?;
    Deserializer::new()
        .deserialize(&mut io::Cursor::new(bytes))
        .map_err(|e| fail(format!("{e:?}")))
}

/// The hlog tag of one histogram: `run<ID>-write`, `run<ID>-sync`, `run<ID>-op-<name>`
/// (characters other than ASCII letters, digits, `-` and `_` become `_`).
pub fn hlog_tag(run: i64, which: &str) -> String {
    let clean: String = which
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("run{run}-{clean}")
}

/// `export --format hlog`: an HdrHistogram interval log (the Java `HistogramLogWriter`
/// format, V2 + deflate, values in ns) with one interval per run and operation, spanning
/// the run's timed part (start = its start in Unix seconds, length = its wall time),
/// tagged by [`hlog_tag`]. Runs without a result or without histograms are a `#` comment.
pub fn hlog<W: Write>(runs: &[StoredRun], mut out: W) -> Result<(), RawExportError> {
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    builder.add_comment(&format!(
        "fsynclab {} raw export: latency in ns, one interval per run and operation, tags run<ID>-write, run<ID>-sync, run<ID>-durable, run<ID>-op-<NAME>",
        env!("CARGO_PKG_VERSION")
    ));
    let first = runs
        .iter()
        .filter_map(|r| r.result.as_ref().filter(|r| r.has_histograms()))
        .map(|r| r.started_at_ms)
        .min();
    if let Some(ms) = first {
        builder.with_start_time(UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64));
    }
    let mut log = builder
        .begin_log_with(&mut out, &mut serializer)
        .map_err(write_err("hlog"))?;
    for run in runs {
        let id = run.row.id;
        let Some(r) = &run.result else {
            log.write_comment(&format!(
                "run {id}: no result ({}), no histograms",
                run.row.status.as_str()
            ))
            .map_err(write_err("hlog"))?;
            continue;
        };
        if !r.has_histograms() {
            log.write_comment(&format!(
                "run {id}: imported without histograms (percentiles only), nothing to log"
            ))
            .map_err(write_err("hlog"))?;
            continue;
        }
        let start = Duration::from_millis(r.started_at_ms.max(0) as u64);
        let length = Duration::from_nanos(r.wall_ns);
        let mut all = vec![
            ("write".to_string(), &r.write_lat),
            ("sync".to_string(), &r.sync_lat),
        ];
        all.extend(r.durable_lat.as_ref().map(|h| ("durable".to_string(), h)));
        all.extend(r.ops.iter().map(|o| (format!("op-{}", o.op), &o.lat)));
        for (which, h) in all {
            let hist = hdr_of(id, &which, h)?;
            let tag = hlog_tag(id, &which);
            log.write_histogram(&hist, start, length, Tag::new(&tag))
                .map_err(|e| RawExportError::Histogram {
                    run: id,
                    which: which.clone(),
                    detail: format!("{e:?}"),
                })?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
