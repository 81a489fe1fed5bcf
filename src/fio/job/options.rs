//! One fio job's options → a `fileio` [`WorkloadSpec`] in fio mode. Every option the
//! engine can do is mapped; one it cannot do the way fio would is refused, naming the
//! option, its line, the value and what to write instead; one this reader does not know
//! is listed in a warning (or refused in strict mode), never dropped silently.
//! `docs/FIO.md` ("Running fio job files") is the table of what maps to what, and why.

use std::path::PathBuf;

use super::FioOption;
pub use super::error::JobError;
use super::option_values::{
    Filename, at_line, bool_of, count_of, count_u32, directory_of, fallocate_of, filename_of,
    flag_of, kb_base_of, refuse, rw_of, size_of, sync_file_range_of, value_of,
};
use super::value::{KbBase, parse_fio_time_us};
use crate::metrics::RunWarning;
use crate::spec::{
    FileioMode, FlatSpec, IoEngine, OpenFlags, Pattern, Prepare, SyncMethod, SyncOrder,
    WorkloadKind, WorkloadSpec,
};

/// A job translated: the spec, the job's `directory` (the run's target unless the user
/// names another), and what the user must know about the translation.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// The workload (validated).
    pub spec: WorkloadSpec,
    /// The job's `directory=`, when it has one.
    pub directory: Option<PathBuf>,
    /// The block device of a `filename=/dev/...` job: it runs on the bare device (checked
    /// by `crate::rawdev` and confirmed by the user like `run --device`), each job clone
    /// writing `size` bytes of it from `offset` on, one clone after the other.
    pub device: Option<PathBuf>,
    /// The job's `offset=` (a device job's first byte; 0 otherwise).
    pub offset: u64,
    /// Everything that differs from what fio would do or was ignored (typed; worded by
    /// the front ends); the unknown options are in one of them.
    pub warnings: Vec<RunWarning>,
    /// The option names this reader does not know (ignored; an error in strict mode).
    pub unknown: Vec<String>,
}

/// The options read so far (a later option of the same name replaces an earlier one).
#[derive(Default)]
struct Job {
    pattern: Option<Pattern>,
    block_size: Option<u64>,
    size: Option<u64>,
    file_size: Option<u64>,
    io_size: Option<u64>,
    threads: Option<u32>,
    fsync: u32,
    fdatasync: u32,
    sync_file_range: u32,
    open_flags: OpenFlags,
    fallocate: Option<(Prepare, Option<RunWarning>)>,
    overwrite: bool,
    runtime: Option<(FioOption, u64)>,
    /// `ramp_time` in µs: the warm-up.
    ramp_us: u64,
    time_based: bool,
    directory: Option<PathBuf>,
    filename: Option<Filename>,
    /// `offset=` and `offset_increment=`, with their lines.
    offset: Option<(FioOption, u64)>,
    offset_increment: Option<(FioOption, u64)>,
    final_sync: bool,
    seed: Option<u64>,
    ioengine: IoEngine,
    iodepth: Option<(String, u32)>,
    fixedbufs: bool,
    warnings: Vec<RunWarning>,
}

impl Job {
    /// Reads one option; `false` when the option is unknown.
    fn take(&mut self, o: &FioOption, kb: KbBase) -> Result<bool, JobError> {
        match o.key.as_str() {
            "rw" | "readwrite" => self.pattern = Some(rw_of(o)?),
            "bs" | "blocksize" => self.block_size = Some(size_of(o, kb)?),
            "size" => self.size = Some(size_of(o, kb)?),
            "filesize" => self.file_size = Some(size_of(o, kb)?),
            "io_size" | "io_limit" => self.io_size = Some(size_of(o, kb)?),
            "numjobs" => self.threads = Some(count_u32(o, "jobs")?),
            "nrfiles" | "nr_files" => {
                if count_of(o, "files")? != 1 {
                    return Err(refuse(
                        o,
                        "gives each job several files of its own; the engine gives each thread one file (or N files shared by all threads, which fio does not do)",
                        "write nrfiles=1 (or drop it)",
                    ));
                }
            }
            "fsync" => self.fsync = count_u32(o, "writes")?,
            "fdatasync" => self.fdatasync = count_u32(o, "writes")?,
            "sync_file_range" => self.sync_file_range = sync_file_range_of(o)?,
            "sync" => self.sync_flags(o)?,
            "direct" => self.open_flags.direct = bool_of(o)?,
            "buffered" => self.open_flags.direct = !bool_of(o)?,
            "fallocate" => self.fallocate = Some(fallocate_of(o)?),
            "overwrite" => self.overwrite = bool_of(o)?,
            "ioengine" => {
                self.ioengine = match value_of(o)? {
                    "psync" | "sync" | "pvsync" => IoEngine::Sync,
                    "io_uring" => IoEngine::IoUring,
                    other => {
                        return Err(refuse(
                            o,
                            format!(
                                "the {other} engine is not one the engine replays: it has the synchronous calls and io_uring"
                            ),
                            "write ioengine=psync (or sync, pvsync) or ioengine=io_uring",
                        ));
                    }
                }
            }
            "iodepth" => {
                let depth = u32::try_from(count_of(o, "depth")?).unwrap_or(u32::MAX);
                self.iodepth = Some((value_of(o)?.to_string(), depth));
            }
            "fixedbufs" => self.fixedbufs = flag_of(o)?,
            "runtime" | "timeout" => {
                let us = parse_fio_time_us(value_of(o)?)
                    .map_err(|p| refuse(o, p, "write e.g. runtime=30 (seconds) or 500ms"))?;
                self.runtime = Some((o.clone(), us));
            }
            "time_based" => self.time_based = flag_of(o)?,
            "ramp_time" => {
                // fio runs the job for ramp_time before it starts counting: the warm-up.
                self.ramp_us = parse_fio_time_us(value_of(o)?)
                    .map_err(|p| refuse(o, p, "write e.g. ramp_time=2 (seconds) or 500ms"))?;
            }
            "directory" => {
                self.directory = directory_of(o)?;
                if self.directory.is_none() {
                    self.warnings
                        .push(RunWarning::FioEmptyDirectory { line: o.line });
                }
            }
            "filename" => self.filename = Some(filename_of(o)?),
            "offset" => self.offset = Some((o.clone(), size_of(o, kb)?)),
            "offset_increment" => self.offset_increment = Some((o.clone(), size_of(o, kb)?)),
            "end_fsync" => self.final_sync = bool_of(o)?,
            "randseed" => self.seed = Some(count_of(o, "seed")?),
            // Reporting, scheduling between jobs (each job is its own run here), naming, and
            // threads-vs-processes (the engine always uses threads): nothing to do.
            "group_reporting" | "stonewall" | "wait_for_previous" | "new_group" | "thread" => {
                flag_of(o)?;
            }
            // fsynclab always starts a run from new files in its own directory and removes
            // them at the end (unless --keep), as fio with unlink=1: nothing to do.
            "unlink" => {
                flag_of(o)?;
            }
            "name" | "description" | "kb_base" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `sync=`: O_SYNC / O_DSYNC on the files.
    fn sync_flags(&mut self, o: &FioOption) -> Result<(), JobError> {
        let (sync, dsync) = match value_of(o)? {
            "none" | "0" => (false, false),
            "sync" | "1" => (true, false),
            "dsync" => (false, true),
            _ => {
                return Err(refuse(
                    o,
                    "is not a fio sync mode",
                    "write sync=none, sync (O_SYNC) or dsync (O_DSYNC)",
                ));
            }
        };
        self.open_flags.sync = sync;
        self.open_flags.dsync = dsync;
        Ok(())
    }

    /// The spec of the options read (not yet validated).
    fn into_spec(mut self, options: &[FioOption]) -> Result<(WorkloadSpec, Self), JobError> {
        // Built in the flat form, by fio's options, then typed.
        let mut spec = FlatSpec {
            kind: WorkloadKind::Fileio,
            mode: FileioMode::Fio,
            ..FlatSpec::default()
        };
        spec.pattern = self.pattern.ok_or(JobError::Missing {
            option: "rw",
            problem: "fio's default is rw=read, and the engine only writes",
            fix: "write rw=write or rw=randwrite",
        })?;
        spec.block_size = self.block_size.unwrap_or(4096);
        spec.file_size = self.file_size.or(self.size).ok_or(JobError::Missing {
            option: "size",
            problem: "the engine creates the job's files and needs their size",
            fix: "write size=<bytes per job>, e.g. size=64m (or filesize=)",
        })?;
        // fio caps `size` at the files' total size; `io_size` overrides both.
        spec.io_size = self.io_size.or(match (self.size, self.file_size) {
            (Some(size), Some(file_size)) if size < file_size => Some(size),
            _ => None,
        });
        spec.threads = self.threads.unwrap_or(1);
        self.sync_method(&mut spec, options)?;
        spec.open_flags = self.open_flags;
        // fio's default fallocate is `native` (fallocate(2)) on Linux; `overwrite=1` lays
        // the files out by writing them first.
        spec.prepare = match self.fallocate.take() {
            _ if self.overwrite => Prepare::Fill,
            Some((prepare, note)) => {
                self.warnings.extend(note);
                prepare
            }
            None => Prepare::Fallocate,
        };
        spec.final_sync = self.final_sync;
        self.engine(&mut spec);
        if let Some(seed) = self.seed {
            spec.seed = seed;
        }
        self.stop_rule(&mut spec)?;
        self.device_range(&spec, options)?;
        if let Some(Filename::Plain(name)) = &self.filename
            && spec.threads > 1
        {
            spec.shared_files = Some(1);
            self.warnings.push(RunWarning::FioSharedFilename {
                name: name.clone(),
                threads: spec.threads,
            });
        }
        Ok((spec.typed(), self))
    }

    /// `offset=` and `offset_increment=`: a device job's range. Each clone of a device job
    /// writes its own part, one after the other (`offset_increment` equal to the size, or
    /// one clone); files are always written from their start (an offset of 0).
    fn device_range(&self, spec: &FlatSpec, options: &[FioOption]) -> Result<(), JobError> {
        let device = matches!(self.filename, Some(Filename::Device(_)));
        if !device {
            for (o, value) in [&self.offset, &self.offset_increment].into_iter().flatten() {
                if *value != 0 {
                    return Err(refuse(
                        o,
                        "applies to a device job only: the engine writes its own files from their start",
                        format!("drop {}, or name a device with filename=/dev/...", o.key),
                    ));
                }
            }
            return Ok(());
        }
        if let Some(o) = options.iter().rev().find(|o| o.key == "directory")
            && self.directory.is_some()
        {
            return Err(refuse(
                o,
                "is set beside a device filename=/dev/...: a job on a device writes no directory",
                "drop directory= (or drop filename= to run in the directory)",
            ));
        }
        let increment = self.offset_increment.as_ref().map_or(0, |(_, v)| *v);
        if spec.threads > 1 && increment != spec.file_size {
            let o = self
                .offset_increment
                .as_ref()
                .map(|(o, _)| o.clone())
                .unwrap_or(FioOption {
                    key: "offset_increment".into(),
                    value: None,
                    line: 0,
                });
            let problem = if increment < spec.file_size {
                format!(
                    "makes numjobs={} clones write overlapping parts of the device; the engine gives each clone its own",
                    spec.threads
                )
            } else {
                format!(
                    "leaves gaps between the numjobs={} clones' parts; the engine writes each clone's part right after the previous one",
                    spec.threads
                )
            };
            return Err(refuse(
                &o,
                problem,
                format!("write offset_increment={} (the size)", spec.file_size),
            ));
        }
        Ok(())
    }

    /// `ioengine`, `iodepth` and `fixedbufs`: a depth above 1 means something only to
    /// io_uring (the synchronous engines have one write in flight, in fio too); the spec's
    /// own check refuses `fixedbufs` without io_uring, naming both options. fio's io_uring
    /// engine queues a periodic sync right behind its write without waiting for it (io_u.c
    /// `get_rw_ddir` counts issued writes, not completed ones), so at a depth above 1 the
    /// job's syncs are `sync_order = unordered`. Called after the sync method is known.
    fn engine(&mut self, spec: &mut FlatSpec) {
        spec.ioengine = self.ioengine;
        spec.fixedbufs = self.fixedbufs;
        match (self.ioengine, &self.iodepth) {
            (IoEngine::IoUring, Some((text, depth))) => {
                spec.iodepth = *depth;
                if *depth > 1 && spec.sync != SyncMethod::None {
                    spec.sync_order = SyncOrder::Unordered;
                    self.warnings.push(RunWarning::FioIodepthUnordered {
                        depth: text.clone(),
                        sync: spec.sync.as_str().to_string(),
                    });
                }
            }
            (IoEngine::Sync, Some((text, depth))) if *depth > 1 => {
                self.warnings.push(RunWarning::FioIodepthIgnored {
                    depth: text.clone(),
                });
            }
            _ => {}
        }
    }

    fn sync_method(&self, spec: &mut FlatSpec, options: &[FioOption]) -> Result<(), JobError> {
        let set: Vec<(SyncMethod, u32)> = [
            (SyncMethod::Fsync, self.fsync),
            (SyncMethod::Fdatasync, self.fdatasync),
            (SyncMethod::SyncFileRange, self.sync_file_range),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
        match set.as_slice() {
            [] => {
                spec.sync = SyncMethod::None;
                spec.sync_every = 1;
            }
            [(method, every)] => {
                spec.sync = *method;
                spec.sync_every = *every;
            }
            _ => {
                let last = options
                    .iter()
                    .rev()
                    .find(|o| matches!(o.key.as_str(), "fsync" | "fdatasync" | "sync_file_range"));
                let o = last.cloned().unwrap_or(FioOption {
                    key: "fsync".into(),
                    value: None,
                    line: 0,
                });
                return Err(refuse(
                    &o,
                    "is one of several periodic syncs (fsync, fdatasync, sync_file_range) in this job; the engine issues one kind of sync call",
                    "keep one of them (set the others to 0)",
                ));
            }
        }
        Ok(())
    }

    /// `runtime` + `time_based` → a duration; `runtime` alone is refused.
    fn stop_rule(&self, spec: &mut FlatSpec) -> Result<(), JobError> {
        if self.ramp_us > 0 {
            spec.warmup_s = Some(self.ramp_us as f64 / 1e6);
        }
        match (&self.runtime, self.time_based) {
            (Some((_, us)), true) if *us > 0 => spec.duration_s = Some(*us as f64 / 1e6),
            (_, true) => {
                return Err(JobError::Missing {
                    option: "runtime",
                    problem: "time_based runs for the runtime, and there is none",
                    fix: "write runtime=<seconds> with time_based",
                });
            }
            (Some((o, us)), false) if *us > 0 => {
                return Err(refuse(
                    o,
                    "without time_based is a cap: fio stops at the runtime or when the size is written, whichever comes first, and the engine stops at one of the two",
                    "add time_based=1 to run for exactly this long, or drop runtime to write the whole size",
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// Translates one job's effective options (see [`super::FioJob::options`]) into a
/// `fileio` spec in fio mode, validated. Unknown options are listed in one warning and in
/// [`JobSpec::unknown`]; with `strict` they are an error.
pub fn options_to_spec(options: &[FioOption], strict: bool) -> Result<JobSpec, JobError> {
    let kb = kb_base_of(options)?;
    let mut job = Job::default();
    let mut unknown: Vec<&FioOption> = Vec::new();
    for o in options {
        if !job.take(o, kb)? {
            unknown.push(o);
        }
    }
    if strict && !unknown.is_empty() {
        return Err(JobError::Unknown {
            options: unknown
                .iter()
                .map(|o| format!("{}{}", o.key, at_line(o.line)))
                .collect(),
        });
    }
    let (spec, job) = job.into_spec(options)?;
    spec.validate()
        .map_err(|spec_error| JobError::Invalid { spec_error })?;
    let mut warnings = job.warnings;
    if !unknown.is_empty() {
        warnings.insert(
            0,
            RunWarning::FioUnknownOptions {
                options: unknown.iter().map(|o| (o.key.clone(), o.line)).collect(),
            },
        );
    }
    let mut names: Vec<String> = unknown.iter().map(|o| o.key.clone()).collect();
    names.dedup();
    let (device, offset) = match &job.filename {
        Some(Filename::Device(path)) => (
            Some(path.clone()),
            job.offset.as_ref().map_or(0, |(_, v)| *v),
        ),
        _ => (None, 0),
    };
    Ok(JobSpec {
        spec,
        device,
        offset,
        directory: job.directory,
        warnings,
        unknown: names,
    })
}
