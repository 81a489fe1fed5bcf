//! Whether a run's writes were durable when its workload treated them as committed, and
//! what one write call and one sync call mean in it — so a comparison never judges write
//! or sync latency across sides where those calls do different work (an O_DSYNC write
//! includes its flush; a buffered write does not), and a ranking never puts a method that
//! keeps nothing first.

use crate::metrics::RunResult;
use crate::probe::SystemInfo;
use crate::spec::{FileSync, KindSpec, NoDurableOp, SyncMethod, WorkloadSpec, durable_op};

/// Why writes a workload treats as committed are not durable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotDurable {
    /// Nothing syncs them before the run's end (buffered or O_DIRECT writes alone).
    NoSync,
    /// sync_file_range writes back but flushes no device cache and no metadata.
    SyncFileRange,
    /// The target is a memory filesystem (`tmpfs`): nothing reaches a device.
    MemoryFs(String),
    /// The mount turns cache flushes off (`nobarrier`, `barrier=0`).
    NoBarrier(String),
    /// Each record is acknowledged before the flush that makes it durable (the unsafe
    /// `early-ack` group commit).
    EarlyAck,
}

impl NotDurable {
    /// Short words for a table cell.
    pub fn brief(&self) -> String {
        match self {
            NotDurable::NoSync => "not durable: no sync".into(),
            NotDurable::SyncFileRange => "not durable: sync_file_range".into(),
            NotDurable::MemoryFs(fs) => format!("not durable: {fs}"),
            NotDurable::NoBarrier(opt) => format!("not durable: {opt}"),
            NotDurable::EarlyAck => "not durable: acknowledged before the flush".into(),
        }
    }

    /// What it means, in a sentence.
    pub fn explain(&self) -> String {
        match self {
            NotDurable::NoSync => "nothing syncs its writes before the run ends: a power cut \
                 loses them (O_DIRECT alone leaves them in the device's cache)"
                .into(),
            NotDurable::SyncFileRange => "sync_file_range writes the range back but flushes no \
                 device cache and no metadata: a power cut can lose what it returned for"
                .into(),
            NotDurable::MemoryFs(fs) => {
                format!("the target is on {fs}: nothing reaches a device, fsync returns at once")
            }
            NotDurable::NoBarrier(opt) => {
                format!("the filesystem is mounted {opt}: fsync sends the device no cache flush")
            }
            NotDurable::EarlyAck => "each record is acknowledged when its write returns, \
                 before the group's flush (early-ack, the unsafe control): a power cut after \
                 the acknowledgement loses it"
                .into(),
        }
    }
}

/// Why `run`'s committed writes are not durable, or `None` when they are (as far as the
/// workload and the mount tell: a device that ignores flushes cannot be seen here).
pub fn not_durable(run: &RunResult) -> Option<NotDurable> {
    not_durable_spec(&run.spec, &run.system)
}

/// [`not_durable`] from a workload and where it ran.
pub fn not_durable_spec(spec: &WorkloadSpec, system: &SystemInfo) -> Option<NotDurable> {
    match durable_op(spec) {
        Err(NoDurableOp::NoSync) => return Some(NotDurable::NoSync),
        Err(NoDurableOp::SyncFileRange) => return Some(NotDurable::SyncFileRange),
        Err(NoDurableOp::EarlyAck) => return Some(NotDurable::EarlyAck),
        _ => {}
    }
    let mount = system.mount.as_ref()?;
    if crate::probe::is_memory_fs(&mount.fs_type) {
        return Some(NotDurable::MemoryFs(mount.fs_type.clone()));
    }
    ["nobarrier", "barrier=0"]
        .into_iter()
        .find(|o| mount.has_option(o))
        .map(|o| NotDurable::NoBarrier(o.to_string()))
}

/// What one timed write call of `spec` does, in words (`buffered`, `O_DSYNC`...): a write
/// opened O_DSYNC includes its flush, a buffered one copies into the page cache.
pub fn write_meaning(spec: &WorkloadSpec) -> String {
    let f = spec.open_flags();
    let mut words: Vec<&str> = Vec::new();
    if f.direct {
        words.push("O_DIRECT");
    }
    if f.sync {
        words.push("O_SYNC");
    } else if f.dsync {
        words.push("O_DSYNC");
    }
    if let KindSpec::Smallfiles(s) = &spec.kind
        && s.sync == FileSync::OSync
    {
        words.push("O_SYNC");
    }
    if words.is_empty() {
        "buffered".into()
    } else {
        words.join("+")
    }
}

/// What one timed sync call of `spec` is (`fsync`, `fdatasync`...; `none`).
pub fn sync_meaning(spec: &WorkloadSpec) -> String {
    match &spec.kind {
        KindSpec::Smallfiles(s) => s.sync.as_str().into(),
        _ if spec.kind.params().syncs_unchanged_files() => format!(
            "{} of an unchanged file",
            spec.sync().unwrap_or(SyncMethod::None).as_str()
        ),
        _ => spec.sync().unwrap_or(SyncMethod::None).as_str().into(),
    }
}

/// The role a timed write call plays, which decides whether two sides' write latencies can
/// be compared: a write that is durable when it returns (it includes its flush) against
/// one that is not (buffered or O_DIRECT: its sync does the rest).
fn write_role(spec: &WorkloadSpec) -> String {
    let flags = spec.open_flags();
    let durable = flags.sync
        || flags.dsync
        || matches!(&spec.kind, KindSpec::Smallfiles(s) if s.sync == FileSync::OSync);
    if durable {
        "an O_SYNC/O_DSYNC write, durable when it returns (it includes its flush)".into()
    } else {
        "a buffered or O_DIRECT write, not durable until a sync".into()
    }
}

/// The role a timed sync call plays: fsync and fdatasync both make the writes before them
/// durable (their latencies compare: what fsync's metadata costs over fdatasync is the
/// question); sync_file_range writes back without a cache flush; syncfs syncs a whole
/// filesystem at a thread's end.
fn sync_role(spec: &WorkloadSpec) -> String {
    match sync_meaning(spec).as_str() {
        "fsync" | "fdatasync" | "sync_file_range+fdatasync" => {
            "fsync or fdatasync, which make the writes durable".into()
        }
        "sync_file_range" => "sync_file_range, a writeback without a cache flush".into(),
        other => other.into(),
    }
}

/// The one meaning the runs share, or every meaning they have (sorted) when they differ.
fn meanings(runs: &[&RunResult], of: fn(&WorkloadSpec) -> String) -> Vec<String> {
    let mut all: Vec<String> = runs.iter().map(|r| of(&r.spec)).collect();
    all.sort();
    all.dedup();
    all
}

/// Why write (`sync == false`) or sync latencies of the two sides cannot be compared, when
/// their calls mean different things; `None` when they mean the same.
pub fn meaning_differs(base: &[&RunResult], cand: &[&RunResult], sync: bool) -> Option<String> {
    let of = if sync { sync_role } else { write_role };
    let (b, c) = (meanings(base, of), meanings(cand, of));
    if b.len() == 1 && b == c {
        return None;
    }
    // A side that made no sync call has no sync latency: nothing to misjudge. (A side
    // with `sync none` may still have made the end-of-run fsync, which is not its method.)
    let no_calls = |runs: &[&RunResult]| runs.iter().all(|r| r.syncs == 0);
    if sync && (no_calls(base) || no_calls(cand)) {
        return None;
    }
    let call = if sync { "sync" } else { "write" };
    Some(format!(
        "{call} latency is not compared: a {call} call is {} in the baseline and {} in the \
         candidate, which do different work; compare the durable-operation rows",
        b.join(" or "),
        c.join(" or "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;
    use crate::spec::OpenFlags;
    use fsynclab_core::sysinfo::MountInfo;

    fn mounted(fs: &str, options: &str) -> SystemInfo {
        SystemInfo {
            mount: Some(MountInfo {
                fs_type: fs.into(),
                mount_point: "/mnt/x".into(),
                mount_options: options.into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn durable_unless_the_workload_or_the_mount_keeps_nothing() {
        let fdatasync = FlatSpec {
            sync: SyncMethod::Fdatasync,
            ..FlatSpec::default()
        }
        .typed();
        assert_eq!(not_durable_spec(&fdatasync, &mounted("ext4", "rw")), None);
        assert_eq!(
            not_durable_spec(&fdatasync, &mounted("ext4", "rw,nobarrier")),
            Some(NotDurable::NoBarrier("nobarrier".into()))
        );
        assert_eq!(
            not_durable_spec(&fdatasync, &mounted("tmpfs", "rw")),
            Some(NotDurable::MemoryFs("tmpfs".into()))
        );
        let srf = FlatSpec {
            sync: SyncMethod::SyncFileRange,
            ..FlatSpec::default()
        }
        .typed();
        assert_eq!(
            not_durable_spec(&srf, &mounted("xfs", "rw")),
            Some(NotDurable::SyncFileRange)
        );
        let none = FlatSpec {
            sync: SyncMethod::None,
            ..FlatSpec::default()
        }
        .typed();
        assert_eq!(
            not_durable_spec(&none, &SystemInfo::default()),
            Some(NotDurable::NoSync)
        );
        let dsync = FlatSpec {
            sync: SyncMethod::None,
            open_flags: OpenFlags {
                dsync: true,
                ..Default::default()
            },
            ..FlatSpec::default()
        }
        .typed();
        assert_eq!(not_durable_spec(&dsync, &mounted("xfs", "rw")), None);
    }

    #[test]
    fn write_and_sync_calls_are_named_by_what_they_do() {
        let mut spec = WorkloadSpec::default();
        assert_eq!(write_meaning(&spec), "buffered");
        spec.edit(|f| f.open_flags.dsync = true);
        spec.edit(|f| f.open_flags.direct = true);
        assert_eq!(write_meaning(&spec), "O_DIRECT+O_DSYNC");
        spec.edit(|f| f.sync = SyncMethod::None);
        assert_eq!(sync_meaning(&spec), "none");
        // An empty fsync is not the fsync of a write: its latencies do not compare.
        let written = WorkloadSpec::default();
        let mut empty = written.clone();
        empty.edit(|f| {
            f.sync_only = true;
            f.duration_s = Some(1.0);
        });
        assert_eq!(sync_meaning(&empty), "fsync of an unchanged file");
        assert_ne!(sync_role(&empty), sync_role(&written));
        assert_eq!(not_durable_spec(&empty, &mounted("xfs", "rw")), None);
        // sync_file_range + fdatasync makes writes durable as fdatasync does.
        let mut sfr = written.clone();
        sfr.edit(|f| f.sync = SyncMethod::SyncFileRangeFdatasync);
        assert_eq!(sync_role(&sfr), sync_role(&written));
        assert_eq!(not_durable_spec(&sfr, &mounted("xfs", "rw")), None);
    }
}
