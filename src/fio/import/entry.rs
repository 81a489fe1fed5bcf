//! One job entry of fio's JSON (`jobs[i]` or `client_stats[i]`) as an [`ImportedRun`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::node::{MAX_COUNT, Node};
use super::{DiskEntry, FileFacts, ImportError};
use crate::metrics::{
    DeviceAccounting, LatencyHistogram, ReportedDisk, ReportedFigures, ReportedLatency,
    ReportedPercentile, RunFailure, RunResult, RunStatus, RunWarning, Warning,
};
use crate::probe::{NoDevice, SystemInfo};
use crate::spec::{CommonSpec, KindSpec, WorkloadKind, WorkloadSpec};
use crate::store::{OriginKind, RunOrigin};

/// The name fio gives the sum over servers in client mode: not a run of its own.
pub const ALL_CLIENTS: &str = "All clients";

/// Most options one job may carry, and the longest option text accepted.
const MAX_OPTIONS: usize = 4096;
const MAX_OPTION_BYTES: usize = 4096;
/// Most histogram bins accepted per distribution (fio 3.33 has at most 1856).
const MAX_BINS: usize = 65_536;

/// A fio server in client mode (`hostname` and `port` of a `client_stats` entry).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FioHost {
    /// The server's name or address as fio reported it.
    pub name: String,
    /// Its port, when fio reported one.
    pub port: Option<u16>,
}

impl FioHost {
    /// `name:port` (or the name alone): what labels and origins show.
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.name),
            None => self.name.clone(),
        }
    }
}

/// One job entry of fio's output as a finished run, ready to store.
#[derive(Clone, Debug)]
pub struct ImportedRun {
    /// The server that ran it (client mode), `None` for a plain fio run.
    pub host: Option<FioHost>,
    /// The job's name (`jobname`).
    pub job: String,
    /// Where the entry was in the JSON (`client_stats[1]`).
    pub entry: String,
    /// The run: figures, histograms (JSON+), fio's own figures in `reported`.
    pub result: RunResult,
    /// Origin: fio version, host, job options; `file` is left for the caller to set.
    pub origin: RunOrigin,
}

/// An entry read: a run, or why it is not one.
pub(super) enum Entry {
    Run(Box<ImportedRun>),
    Skipped(String),
}

/// A string with no control or invisible characters, at most `max` bytes.
pub(super) fn checked_text<'a>(node: Node<'a>, max: usize) -> Result<&'a str, ImportError> {
    let text = node.str()?;
    if text.len() > max {
        return Err(node.error(
            format!("is {} bytes long, more than {max}", text.len()),
            "the file is damaged or not fio's output",
        ));
    }
    crate::spec::check_text(node.path, text).map_err(|e| {
        node.error(
            e.problem,
            "fio writes plain text here; the file is damaged or was edited",
        )
    })?;
    Ok(text)
}

/// `global options` / `job options`: string values only (fio writes every option value as
/// a string); a key fio repeats keeps its last value (serde_json's maps do that).
pub(super) fn options(node: Node<'_>) -> Result<Vec<(String, String)>, ImportError> {
    let map = node.object()?;
    if map.len() > MAX_OPTIONS {
        return Err(node.error(
            format!("has {} options, more than {MAX_OPTIONS}", map.len()),
            "the file is damaged or not fio's output",
        ));
    }
    let mut out = Vec::with_capacity(map.len());
    for key in map.keys() {
        let value = node.get(key)?;
        let key_node = Node {
            value: &serde_json::Value::String(key.clone()),
            path: &value.path,
        };
        checked_text(key_node, MAX_OPTION_BYTES)?;
        out.push((
            key.clone(),
            checked_text(value.node(), MAX_OPTION_BYTES)?.into(),
        ));
    }
    Ok(out)
}

/// One `disk_util` entry.
pub(super) fn disk(node: Node<'_>) -> Result<DiskEntry, ImportError> {
    let count = |key: &str| -> Result<u64, ImportError> {
        match node.opt(key)? {
            Some(v) => v.node().count(),
            None => Ok(0),
        }
    };
    let disk = ReportedDisk {
        name: checked_text(node.get("name")?.node(), 256)?.to_string(),
        write_ios: count("write_ios")?,
        write_merges: count("write_merges")?,
        write_ticks_ms: count("write_ticks")?,
        in_queue_ms: count("in_queue")?,
        util_pct: match node.opt("util")? {
            Some(v) => v.node().non_negative()?,
            None => 0.0,
        },
    };
    Ok(DiskEntry {
        host: host(node)?,
        disk,
    })
}

/// `hostname` and `port` of a client-mode entry.
fn host(node: Node<'_>) -> Result<Option<FioHost>, ImportError> {
    let Some(name) = node.opt("hostname")? else {
        return Ok(None);
    };
    let name = checked_text(name.node(), 255)?.to_string();
    let port = match node.opt("port")? {
        Some(p) => {
            let p = p.node();
            let value = p.count()?;
            Some(u16::try_from(value).map_err(|_| {
                p.error(format!("is {value}, not a TCP port"), "the file is damaged")
            })?)
        }
        None => None,
    };
    Ok(Some(FioHost { name, port }))
}

/// A latency distribution (`clat_ns`, `sync.lat_ns`): fio's figures and, from JSON+
/// `bins`, the histogram.
fn latency(node: Node<'_>) -> Result<(ReportedLatency, Option<LatencyHistogram>), ImportError> {
    let count = |key: &str| node.get(key).and_then(|v| v.node().count());
    let mut reported = ReportedLatency {
        count: count("N")?,
        min_ns: count("min")?,
        max_ns: count("max")?,
        mean_ns: node.get("mean")?.node().non_negative()?,
        stddev_ns: match node.opt("stddev")? {
            Some(v) => v.node().non_negative()?,
            None => 0.0,
        },
        percentiles: Vec::new(),
    };
    if let Some(pcts) = node.opt("percentile")? {
        let pcts = pcts.node();
        for key in pcts.object()?.keys() {
            let value = pcts.get(key)?;
            let pct: f64 = key
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=100.0).contains(p))
                .ok_or_else(|| {
                    value.node().error(
                        "is not a percentile key (a number in 0..=100)",
                        "the file is damaged or was edited",
                    )
                })?;
            let ns = value.node().count()?;
            reported.percentiles.push(ReportedPercentile { pct, ns });
        }
        reported.percentiles.sort_by(|a, b| a.pct.total_cmp(&b.pct));
    }
    let histogram = match node.opt("bins")? {
        Some(bins) => {
            let hist = histogram(bins.node())?;
            if hist.count() != reported.count {
                return Err(bins.node().error(
                    format!(
                        "sum to {} latencies but N is {}",
                        hist.count(),
                        reported.count
                    ),
                    "the file is damaged or was edited; give fio's json+ output unchanged",
                ));
            }
            Some(hist)
        }
        None => None,
    };
    Ok((reported, histogram))
}

/// JSON+ `bins`: latency (ns, the key) → count.
fn histogram(node: Node<'_>) -> Result<LatencyHistogram, ImportError> {
    let map = node.object()?;
    if map.len() > MAX_BINS {
        return Err(node.error(
            format!("has {} bins, more than {MAX_BINS}", map.len()),
            "the file is damaged or not fio's output",
        ));
    }
    let mut hist = LatencyHistogram::new();
    let mut total: u64 = 0;
    for key in map.keys() {
        let value = node.get(key)?;
        let ns: u64 = key
            .trim()
            .parse()
            .ok()
            .filter(|ns| *ns <= MAX_COUNT)
            .ok_or_else(|| {
                value.node().error(
                    "is not a latency bin (its key must be whole nanoseconds)",
                    "the file is damaged or was edited",
                )
            })?;
        let n = value.node().count()?;
        total = total
            .checked_add(n)
            .filter(|t| *t <= MAX_COUNT)
            .ok_or_else(|| {
                node.error(
                    "counts sum beyond the largest count accepted",
                    "the file is damaged",
                )
            })?;
        hist.record_n(ns, n);
    }
    Ok(hist)
}

/// Reads one job entry.
pub(super) fn read_entry(
    facts: &FileFacts,
    node: Node<'_>,
    client_mode: bool,
) -> Result<Entry, ImportError> {
    let job = checked_text(node.get("jobname")?.node(), 256)?.to_string();
    if client_mode && job == ALL_CLIENTS {
        return Ok(Entry::Skipped(format!(
            "{} \"{ALL_CLIENTS}\": fio's sum over the servers, not a run (each server's \
             entry is imported)",
            node.path
        )));
    }
    let write = node.get("write")?;
    let write = write.node();
    let writes = write.get("total_ios")?.node().count()?;
    if writes == 0 {
        return Ok(Entry::Skipped(format!(
            "{} \"{job}\": wrote nothing (write.total_ios is 0); fsynclab imports write jobs",
            node.path
        )));
    }
    let host = host(node)?;
    let mut options = facts.global_options.clone();
    if let Some(own) = node.opt("job options")? {
        options.extend(super::entry::options(own.node())?);
    }
    let job_options: BTreeMap<String, String> = options.into_iter().collect();
    let figures = read_figures(facts, write, node)?;
    let (reported, write_lat, sync_lat, syncs) = figures;
    let error_code = match node.opt("error")? {
        Some(e) => e.node().count()?,
        None => 0,
    };
    let mut warnings = vec![RunWarning::FioMachineFactsUnknown];
    if !reported.histograms {
        warnings.push(RunWarning::FioNoHistogram);
    }
    let spec = spec_of(&job_options, reported.runtime_ms, &mut warnings);
    let wall_ns = reported.runtime_ms.saturating_mul(1_000_000);
    let started_at_ms = facts
        .timestamp_ms
        .map(|t| t.saturating_sub(reported.runtime_ms as i64))
        .unwrap_or(0);
    let host_label = host.as_ref().map(FioHost::label);
    let system = system_of(facts, host.as_ref(), &job_options);
    let result = RunResult {
        id: 0,
        status: if error_code == 0 {
            RunStatus::Finished
        } else {
            RunStatus::Failed
        },
        error: (error_code != 0).then(|| RunFailure::FioError { error: error_code }.into()),
        spec,
        system,
        started_at_ms,
        wall_ns,
        writes,
        syncs,
        // fio times a write and its sync apart: their sum per operation is not known.
        durable_lat: None,
        bytes: write.get("io_bytes")?.node().count()?,
        write_lat: write_lat.unwrap_or_default(),
        sync_lat: sync_lat.unwrap_or_default(),
        intervals: Vec::new(),
        threads: Vec::new(),
        device: DeviceAccounting::Unavailable {
            reason: NoDevice::FioImport.into(),
        },
        warnings: warnings.into_iter().map(Warning::from).collect(),
        noise: None,
        ops: Vec::new(),
        phases: Vec::new(),
        group: None,
        reported: Some(reported),
        kernel_trace: None,
    };
    let origin = RunOrigin {
        kind: OriginKind::FioImport,
        file: None,
        job: Some(job.clone()),
        job_text: None,
        job_options,
        tool_version: facts.tool_version.clone(),
        hostname: host_label,
    };
    Ok(Entry::Run(Box::new(ImportedRun {
        host,
        job,
        entry: node.path.to_string(),
        result,
        origin,
    })))
}

/// What an import knows of the machine: fio's version, the host (client mode), the
/// `directory` option as the target; nothing else.
fn system_of(
    facts: &FileFacts,
    host: Option<&FioHost>,
    job_options: &BTreeMap<String, String>,
) -> SystemInfo {
    SystemInfo {
        tool_version: facts.tool_version.clone().unwrap_or_else(|| "fio".into()),
        hostname: host.map(|h| h.name.clone()),
        target: job_options
            .get("directory")
            .map(PathBuf::from)
            .unwrap_or_default(),
        device_note: Some(NoDevice::FioImport.into()),
        ..Default::default()
    }
}

/// The workload fio's job options describe, through the job-file reader's own mapping
/// (`fio::job::options_to_spec`, not strict), as kind `fio`. Options it cannot map leave
/// the workload unknown (`threads` 0, which `describe` words as such), with a warning.
///
/// `runtime` without `time_based` is a cap: when the job ended before it (its write runtime
/// is shorter) it did not shape the work and is left out of the mapping; when the job
/// reached it, the job ran for that time and is described as time based. Either way with a
/// note.
fn spec_of(
    job_options: &BTreeMap<String, String>,
    runtime_ms: u64,
    warnings: &mut Vec<RunWarning>,
) -> WorkloadSpec {
    let cap_not_reached = |key: &str, value: &str| {
        key == "runtime"
            && !job_options.contains_key("time_based")
            && crate::fio::job::parse_fio_time_us(value)
                .is_ok_and(|cap_us| runtime_ms.saturating_mul(1000) < cap_us)
    };
    let mut job_options = job_options.clone();
    if let Some(cap) = job_options.get("runtime").cloned()
        && !job_options.contains_key("time_based")
        && !cap_not_reached("runtime", &cap)
    {
        warnings.push(RunWarning::FioRuntimeReached {
            cap: cap.clone(),
            runtime_ms,
        });
        job_options.insert("time_based".into(), "1".into());
    }
    let options: Vec<crate::fio::job::FioOption> = job_options
        .iter()
        .filter(|(key, value)| {
            let skip = cap_not_reached(key, value);
            if skip {
                warnings.push(RunWarning::FioRuntimeNotReached {
                    value: value.to_string(),
                    runtime_ms,
                });
            }
            !skip
        })
        .map(|(key, value)| crate::fio::job::FioOption {
            key: key.clone(),
            value: Some(value.clone()),
            line: 0,
        })
        .collect();
    match crate::fio::job::options_to_spec(&options, false) {
        Ok(mapped) => {
            warnings.extend(
                mapped
                    .warnings
                    .into_iter()
                    .map(|note| RunWarning::FioAsWorkload {
                        note: Box::new(note),
                    }),
            );
            // fio's options in fileio's terms, kept as the imported kind.
            let spec = mapped.spec;
            WorkloadSpec {
                kind: match spec.kind {
                    KindSpec::Fileio(options) => KindSpec::Fio(options),
                    other => other,
                },
                ..spec
            }
        }
        Err(e) => {
            warnings.push(RunWarning::FioNotAWorkload {
                option: untranslated_option(&e),
            });
            WorkloadSpec {
                common: CommonSpec {
                    threads: 0,
                    ..CommonSpec::default()
                },
                kind: KindSpec::default_of(WorkloadKind::Fio),
            }
        }
    }
}

type Figures = (
    ReportedFigures,
    Option<LatencyHistogram>,
    Option<LatencyHistogram>,
    u64,
);

/// fio's figures of one entry: rates, runtime, latencies, the disks of its host.
fn read_figures(
    facts: &FileFacts,
    write: Node<'_>,
    entry: Node<'_>,
) -> Result<Figures, ImportError> {
    let (write_rep, write_hist) = latency(write.get("clat_ns")?.node())?;
    let (sync_rep, sync_hist) = match entry.opt("sync")? {
        Some(sync) => match sync.node().opt("lat_ns")? {
            Some(lat) => latency(lat.node())?,
            None => (ReportedLatency::default(), None),
        },
        None => (ReportedLatency::default(), None),
    };
    let syncs = sync_rep.count;
    let histograms = write_hist.is_some();
    if histograms && syncs > 0 && sync_hist.is_none() {
        return Err(entry.error(
            "has write latency bins but no sync latency bins (sync.lat_ns.bins)",
            "give fio's json+ output unchanged",
        ));
    }
    let bw_bytes = match write.opt("bw_bytes")? {
        Some(b) => b.node().non_negative()?,
        // fio before 3.0 printed only `bw`, KiB/s.
        None => write.get("bw")?.node().non_negative()? * 1024.0,
    };
    let host = host(entry)?;
    let disks = facts
        .disks
        .iter()
        .filter(|d| d.host.is_none() || d.host == host)
        .map(|d| d.disk.clone())
        .collect();
    let reported = ReportedFigures {
        tool: facts.tool_version.clone().unwrap_or_else(|| "fio".into()),
        iops: write.get("iops")?.node().non_negative()?,
        bw_bytes_per_sec: bw_bytes,
        runtime_ms: write.get("runtime")?.node().count()?,
        write_lat: write_rep,
        sync_lat: sync_rep,
        histograms,
        disks,
    };
    Ok((reported, write_hist, sync_hist, syncs))
}

/// The option a job error names, when it names one.
fn untranslated_option(e: &crate::fio::job::JobError) -> Option<String> {
    use crate::fio::job::JobError;
    match e {
        JobError::Option { key, .. } => Some(key.clone()),
        JobError::Missing { option, .. } => Some((*option).to_string()),
        JobError::Unknown { options } => options.first().cloned(),
        JobError::Invalid { .. } => None,
    }
}
