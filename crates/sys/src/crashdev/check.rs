//! The power cuts checked: every crash state the plan names is built from the log (from a
//! checkpoint of the medium at its last flush, so the cost is linear in the log), loop-mounted
//! from a throwaway copy (the mount replays the journal, which changes the image), its
//! acknowledged records read back and judged, and the filesystem's checker run on it.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};

pub use super::check_error::CheckError;
use super::check_error::io;
use fsynclab_core::crashlog::{
    Ack, AckedFiles, BEGIN_MARK, CrashState, END_MARK, Entry, Found, Image, Op, PlanOptions,
    classify, is_mark, plan_states, read_entries, replay,
};
pub use fsynclab_core::crashlog::{CrashReport, Failure, FirstFailure};

use crate::sysinfo::FsKind;

/// What to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The filesystem on the device (its checker).
    pub fs: FsKind,
    /// The workload's run directory, relative to the filesystem's root.
    pub dir: PathBuf,
    /// The files the workload's acknowledgements name, relative to `dir`.
    pub files: AckedFiles,
    /// The cuts and subsets.
    pub plan: PlanOptions,
    /// Only this run's part of the log (its begin mark to its end mark) and its
    /// acknowledgements: a lasting recording device's log holds every run made on it.
    /// `None`: from the first begin mark to the end, every acknowledgement.
    pub run: Option<u64>,
}

/// A device image in a file of the work directory.
pub(super) struct FileImage {
    pub(super) file: File,
    pub(super) size: u64,
}

impl Image for FileImage {
    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    fn zero(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        let mode = nix::fcntl::FallocateFlags::FALLOC_FL_PUNCH_HOLE
            | nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE;
        nix::fcntl::fallocate(&self.file, mode, offset as i64, len as i64)
            .map_err(std::io::Error::from)
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// Copies `from` to a new `to`, its holes left holes (only the data segments are copied).
fn sparse_copy(from: &Path, to: &Path, size: u64) -> Result<File, CheckError> {
    use nix::unistd::{Whence, lseek};
    let src = File::open(from).map_err(io("open", from))?;
    let _ = std::fs::remove_file(to);
    let dst = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(io("create", to))?;
    dst.set_len(size).map_err(io("size", to))?;
    let mut at = 0i64;
    let mut buf = vec![0u8; 1 << 20];
    while (at as u64) < size {
        let Ok(start) = lseek(&src, at, Whence::SeekData) else {
            break; // ENXIO: no data after `at`
        };
        let end = lseek(&src, start, Whence::SeekHole).unwrap_or(size as i64);
        let mut pos = start as u64;
        while pos < end as u64 {
            let n = buf.len().min((end as u64 - pos) as usize);
            src.read_exact_at(&mut buf[..n], pos)
                .map_err(io("read", from))?;
            dst.write_all_at(&buf[..n], pos).map_err(io("write", to))?;
            pos += n as u64;
        }
        at = end;
    }
    Ok(dst)
}

/// Runs a program; its stdout, or its command line and message.
fn run(program: &str, args: &[&str]) -> Result<String, (String, String)> {
    super::tool::run(program, args).map_err(|e| match e {
        super::DeviceError::Tool { command, message } => (command, message),
        other => (program.to_string(), other.to_string()),
    })
}

/// A loop device over a state's image, detached when dropped.
struct Loop(String);

impl Loop {
    fn attach(image: &Path) -> Result<Loop, CheckError> {
        let path = image.to_string_lossy();
        run("losetup", &["--find", "--show", &path])
            .map(Loop)
            .map_err(|(command, message)| CheckError::Tool { command, message })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = run("losetup", &["-d", &self.0]);
        super::device::wait_released(&self.0);
    }
}

/// The filesystem checker's command for `fs`, read-only.
fn fsck_args(fs: FsKind) -> (&'static str, &'static [&'static str]) {
    match fs {
        FsKind::Ext4 => ("e2fsck", &["-fn"]),
        FsKind::Xfs => ("xfs_repair", &["-n"]),
        FsKind::Btrfs => ("btrfs", &["check", "--readonly"]),
    }
}

/// Unmounts `mnt`, retrying a busy one for up to 5 s.
fn unmount(mnt: &Path) {
    let path = mnt.to_string_lossy();
    for _ in 0..50 {
        if run("umount", &[&path]).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = run("umount", &["-l", &path]);
}

/// The entry holding mark `mark` (of run `run` when one is asked), if any.
fn find_mark(entries: &[Entry], data: &[u8], mark: [u8; 8], run: Option<u64>) -> Option<usize> {
    entries.iter().position(|e| match e.op {
        Op::Mark { len, data_at } => usize::try_from(data_at)
            .ok()
            .and_then(|at| data.get(at..at.checked_add(usize::try_from(len).ok()?)?))
            .is_some_and(|bytes| is_mark(bytes, mark, run)),
        _ => false,
    })
}

/// The part of the log the workload's power cuts fall in: without a run asked, from the
/// first begin mark (the log's start without one) to the log's end; with one, from its begin
/// mark to its end mark (`None` when either is missing: the log does not hold that run).
pub(super) fn workload_span(
    entries: &[Entry],
    data: &[u8],
    run: Option<u64>,
) -> Option<(usize, usize)> {
    let Some(run) = run else {
        let begin = find_mark(entries, data, BEGIN_MARK, None).unwrap_or(0);
        return Some((begin, entries.len()));
    };
    let begin = find_mark(entries, data, BEGIN_MARK, Some(run))?;
    let end = find_mark(&entries[begin..], data, END_MARK, Some(run))?;
    Some((begin, begin + end))
}

/// The acknowledgements of the log, each with its entry's index.
fn acknowledgements(entries: &[Entry], data: &[u8]) -> Vec<(usize, Ack)> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.op {
            Op::Mark { len, data_at } => {
                let at = usize::try_from(data_at).ok()?;
                let bytes = data.get(at..at.checked_add(usize::try_from(len).ok()?)?)?;
                Some((i, Ack::decode(bytes)?))
            }
            _ => None,
        })
        .collect()
}

/// Checks every crash state of the log in `device_dir` (a [`super::Recorder`]'s directory,
/// its device detached), building images in `work` (made if missing; its files are
/// throwaway).
pub fn check(
    device_dir: &Path,
    work: &Path,
    options: &CheckOptions,
) -> Result<CrashReport, CheckError> {
    let plain = |p: &Path| p.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain(&options.dir) {
        return Err(CheckError::BadFile(options.dir.clone()));
    }
    for f in options.files.names() {
        if !plain(Path::new(f)) {
            return Err(CheckError::BadFile(PathBuf::from(f)));
        }
    }
    let log_path = device_dir.join(super::recorder::LOG_FILE);
    let entries = read_entries(&super::mapped::Mapped::open(&log_path)?)?;
    let data_path = device_dir.join(super::recorder::DATA_FILE);
    let data = super::mapped::Mapped::open(&data_path)?;
    let image_path = device_dir.join(super::recorder::IMAGE_FILE);
    let size = std::fs::metadata(&image_path)
        .map_err(io("read", &image_path))?
        .len();
    std::fs::create_dir_all(work).map_err(io("make", work))?;
    let mnt = work.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(io("make", &mnt))?;
    let (begin, end) =
        workload_span(&entries, &data, options.run).ok_or_else(|| CheckError::Damaged {
            path: log_path.clone(),
            why: "it holds no begin and end marks of the run checked".into(),
        })?;
    let mut acks = acknowledgements(&entries[..end], &data);
    acks.retain(|(_, a)| options.run.is_none_or(|run| a.id.run == run));
    let states = plan_states(&entries[..end], begin, &options.plan);
    let mut report = CrashReport {
        cuts: states.iter().map(|s| s.cut).collect::<BTreeSet<_>>().len(),
        states: states.len(),
        acknowledged: acks.len(),
        seed: options.plan.seed,
        ..CrashReport::default()
    };
    // The medium at the last flush before each cut, kept up to date as the cuts advance.
    let ckpt_path = work.join("checkpoint.img");
    let ckpt = sparse_copy_empty(&ckpt_path, size)?;
    let mut ckpt = FileImage { file: ckpt, size };
    let mut ckpt_at = 0;
    let mut bad: [BTreeSet<(u32, u64)>; 3] = Default::default();
    for state in &states {
        replay(&entries, &data, ckpt_at..state.durable, None, &mut ckpt)?;
        ckpt_at = state.durable;
        let state_path = work.join("state.img");
        let file = sparse_copy(&ckpt_path, &state_path, size)?;
        let mut img = FileImage { file, size };
        replay(
            &entries,
            &data,
            state.durable..state.cut,
            Some(state),
            &mut img,
        )?;
        drop(img);
        let failures = check_state(&state_path, &mnt, state, &acks, options)?;
        let _ = std::fs::remove_file(&state_path);
        for failure in failures {
            match &failure {
                Failure::Lost(a) => bad[0].insert((a.id.thread, a.id.seq)),
                Failure::Torn(a) => bad[1].insert((a.id.thread, a.id.seq)),
                Failure::Stale(a) => bad[2].insert((a.id.thread, a.id.seq)),
                Failure::Mount(_) => {
                    report.mount_failures += 1;
                    true
                }
                Failure::Fsck(_) => {
                    report.fsck_failures += 1;
                    true
                }
            };
            let file = match &failure {
                Failure::Lost(a) | Failure::Torn(a) | Failure::Stale(a) => options.files.path(a),
                Failure::Mount(_) | Failure::Fsck(_) => None,
            };
            report.first_failure.get_or_insert(FirstFailure {
                file,
                cut: state.cut,
                subset: state.subset,
                dropped: state.dropped.clone(),
                reordered: state.reversed,
                failure,
            });
        }
    }
    let _ = std::fs::remove_file(&ckpt_path);
    [report.lost, report.torn, report.stale] = [bad[0].len(), bad[1].len(), bad[2].len()];
    Ok(report)
}

/// A new sparse file of `size` bytes reading as zeroes: the medium before the log.
fn sparse_copy_empty(path: &Path, size: u64) -> Result<File, CheckError> {
    let _ = std::fs::remove_file(path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io("create", path))?;
    file.set_len(size).map_err(io("size", path))?;
    Ok(file)
}

/// Mounts one state's image, judges the records acknowledged before its cut, unmounts it
/// and runs the checker: the failures found.
fn check_state(
    image: &Path,
    mnt: &Path,
    state: &CrashState,
    acks: &[(usize, Ack)],
    options: &CheckOptions,
) -> Result<Vec<Failure>, CheckError> {
    let device = Loop::attach(image)?;
    let fs = options.fs.as_str();
    let target = mnt.to_string_lossy();
    if let Err((_, message)) = run("mount", &["-t", fs, &device.0, &target]) {
        return Ok(vec![Failure::Mount(message)]);
    }
    let mut failures = Vec::new();
    for (_, ack) in acks.iter().filter(|(i, _)| *i < state.cut) {
        let bytes = options.files.path(ack).and_then(|name| {
            let file = File::open(mnt.join(&options.dir).join(name)).ok()?;
            let mut buf = vec![0u8; ack.len as usize];
            file.read_exact_at(&mut buf, ack.offset).ok()?;
            Some(buf)
        });
        match classify(ack, bytes.as_deref()) {
            Found::Fine | Found::Superseded => {}
            Found::Lost => failures.push(Failure::Lost(*ack)),
            Found::Torn => failures.push(Failure::Torn(*ack)),
            Found::Stale => failures.push(Failure::Stale(*ack)),
        }
    }
    unmount(mnt);
    let (program, args) = fsck_args(options.fs);
    let mut all: Vec<&str> = args.to_vec();
    all.push(&device.0);
    if let Err((command, message)) = run(program, &all) {
        failures.push(Failure::Fsck(format!("{command}: {message}")));
    }
    Ok(failures)
}
