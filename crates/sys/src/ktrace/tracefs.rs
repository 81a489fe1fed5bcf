//! tracefs control: the cross-process lock, instance creation and removal, and the sweep
//! of instances whose owner died.
//!
//! Every control operation (mkdir, event enable/filter writes, disable, rmdir, the sweep)
//! runs under an exclusive `flock` on a root-owned file in /run, so concurrent fsynclab
//! processes never race instance creation and removal in the kernel. No instance is ever
//! removed while a reader of it may be open: the reader thread is joined first (see
//! `super::reader`), and the sweep removes only instances whose owning process is gone
//! (the kernel closed its descriptors when it exited).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::TraceError;
use super::events::EventChoice;
use crate::metrics::TraceNote;

/// Where tracefs is (mounted there by fsynclab when nothing is).
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The lock serializing tracefs control across fsynclab processes.
pub const LOCK_PATH: &str = "/run/fsynclab-tracefs.lock";
/// Prefix of fsynclab's instance names: `fsynclab-<pid>-<start ticks>-<run id>.<n>` (n
/// counts this process's sessions: runs of two databases may share a run id).
pub const INSTANCE_PREFIX: &str = "fsynclab-";
/// Ring buffer per CPU, KiB: room for about a second of a fast run's events.
const BUFFER_KB: u32 = 4096;

fn io(what: &'static str, path: &Path, source: std::io::Error) -> TraceError {
    TraceError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The exclusive lock on tracefs control, held while the guard lives.
pub struct ControlLock {
    _locked: nix::fcntl::Flock<File>,
}

impl ControlLock {
    /// Takes the lock (waits for another process's short control step). The file is
    /// opened without following a symlink and must be a regular file owned by root.
    pub fn take() -> Result<Self, TraceError> {
        let path = Path::new(LOCK_PATH);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| io("open the tracefs lock", path, e))?;
        let meta = file
            .metadata()
            .map_err(|e| io("check the tracefs lock", path, e))?;
        if !meta.is_file() || meta.uid() != 0 || meta.mode() & 0o022 != 0 {
            return Err(TraceError::UnsafeLock {
                path: path.to_path_buf(),
            });
        }
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map(|locked| ControlLock { _locked: locked })
            .map_err(|(_, errno)| io("lock", path, errno.into()))
    }
}

/// The owner lock of instance `name`: held (flock) by the session for its whole life, so
/// the sweep knows a live owner whatever PID namespace it runs in (a process in
/// `unshare --pid` names its instances with a pid the host does not see).
pub fn owner_lock_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/run/{name}.lock"))
}

/// Creates and locks the owner lock of instance `name` (a new root-owned file, never
/// following a symlink); held until the returned guard drops.
pub fn hold_owner_lock(name: &str) -> Result<nix::fcntl::Flock<File>, TraceError> {
    let path = owner_lock_path(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| io("create the trace owner lock", &path, e))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, errno)| io("lock", &path, errno.into()))
}

/// Whether the owner of instance `name` is alive: its owner lock is held, or (no lock
/// file: an instance of an older build) its pid and start time still run.
fn owner_alive(name: &str, pid: i64, start: i64) -> bool {
    let path = owner_lock_path(name);
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path);
    match file {
        // Taken (and dropped, so unlocked, at once): nobody holds it, the owner is gone.
        Ok(file) => {
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).is_err()
        }
        Err(_) => crate::owner::owner_alive(Some(pid), Some(start)),
    }
}

/// Writes `text` to a tracefs control file.
fn write_control(path: &Path, text: &str) -> Result<(), TraceError> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| io("open", path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| io("write", path, e))
}

/// Replaces the filter of an enabled event of a live instance (`events/<system>/<name>/filter`),
/// under the control lock.
pub fn set_filter(path: &Path, filter: &str) -> Result<(), TraceError> {
    let _lock = ControlLock::take()?;
    write_control(path, filter)
}

/// A new instance name for run `run_id` of this process.
pub fn instance_name(run_id: i64) -> String {
    static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (pid, start) = crate::owner::current_owner();
    format!("{INSTANCE_PREFIX}{pid}-{}-{run_id}.{n}", start.unwrap_or(0))
}

/// The owner (pid, start ticks) an instance name records, when it is one of fsynclab's.
pub fn instance_owner(name: &str) -> Option<(i64, i64)> {
    let mut parts = name.strip_prefix(INSTANCE_PREFIX)?.splitn(3, '-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let (run, n) = parts.next()?.split_once('.')?;
    run.parse::<i64>().ok()?;
    n.parse::<u64>().ok()?;
    Some((pid, start))
}

/// Creates instance `name` with `events` enabled (their filters first), the `mono` clock
/// (so timestamps compare with the engine's CLOCK_MONOTONIC) and [`BUFFER_KB`] per CPU;
/// under the control lock. On failure what was made is removed again.
pub fn create(root: &Path, name: &str, events: &[EventChoice]) -> Result<PathBuf, TraceError> {
    let _lock = ControlLock::take()?;
    let dir = root.join("instances").join(name);
    std::fs::create_dir(&dir).map_err(|e| io("create the trace instance", &dir, e))?;
    let setup = || -> Result<(), TraceError> {
        write_control(&dir.join("tracing_on"), "0")?;
        write_control(&dir.join("trace_clock"), "mono")?;
        write_control(&dir.join("buffer_size_kb"), &BUFFER_KB.to_string())?;
        for event in events {
            let event_dir = dir.join("events").join(event.system).join(event.name);
            if let Some(filter) = &event.filter {
                write_control(&event_dir.join("filter"), filter)?;
            }
            write_control(&event_dir.join("enable"), "1")?;
        }
        write_control(&dir.join("tracing_on"), "1")
    };
    if let Err(e) = setup() {
        let _ = disable_and_remove(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// Disables and removes an instance whose readers are all closed (the caller joined its
/// reader), under the control lock.
pub fn remove(dir: &Path) -> Result<(), TraceError> {
    let _lock = ControlLock::take()?;
    disable_and_remove(dir)
}

fn disable_and_remove(dir: &Path) -> Result<(), TraceError> {
    // Best effort: rmdir below disables whatever is left, and says if it cannot.
    let _ = write_control(&dir.join("tracing_on"), "0");
    let _ = write_control(&dir.join("events").join("enable"), "0");
    match std::fs::remove_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io("remove the trace instance", dir, e))
        }
        _ => Ok(()),
    }
}

/// Removes the instances of fsynclab processes that are gone (killed, crashed): never one
/// whose owner runs (same pid and start time). Returns the names removed.
pub fn sweep(root: &Path) -> Result<Vec<String>, TraceError> {
    let instances = root.join("instances");
    if !instances.is_dir() {
        return Ok(Vec::new());
    }
    let _lock = ControlLock::take()?;
    let entries =
        std::fs::read_dir(&instances).map_err(|e| io("list trace instances", &instances, e))?;
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = instance_owner(&name) else {
            continue;
        };
        if owner_alive(&name, pid, start) {
            continue;
        }
        disable_and_remove(&entry.path())?;
        let _ = std::fs::remove_file(owner_lock_path(&name));
        removed.push(name);
    }
    Ok(removed)
}

/// Makes tracefs available at [`TRACEFS`]: already mounted, or mounted there now when the
/// directory is empty and no other filesystem sits on it.
pub fn ensure_mounted() -> Result<PathBuf, TraceError> {
    let root = PathBuf::from(TRACEFS);
    if root.join("instances").is_dir() {
        return Ok(root);
    }
    let mounts = crate::probe::list_mounts().map_err(|e| {
        TraceError::Unavailable(TraceNote::NoMountTable {
            errno: crate::probe::probe_errno(&e),
        })
    })?;
    if let Some(m) = mounts.iter().find(|m| Path::new(&m.mount_point) == root) {
        return Err(TraceError::Unavailable(TraceNote::WrongMount {
            fs_type: m.fs_type.clone(),
        }));
    }
    let empty = std::fs::read_dir(&root)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty {
        return Err(TraceError::Unavailable(TraceNote::MountPointUnusable));
    }
    nix::mount::mount(
        Some("tracefs"),
        &root,
        Some("tracefs"),
        nix::mount::MsFlags::MS_NOSUID
            | nix::mount::MsFlags::MS_NODEV
            | nix::mount::MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|errno| {
        TraceError::Unavailable(TraceNote::MountFailed {
            errno: Some(errno as i32),
        })
    })?;
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_record_their_owner() {
        assert_eq!(instance_owner("fsynclab-123-456-7.0"), Some((123, 456)));
        assert_eq!(instance_owner("fsynclab-123-456-7"), None);
        assert_eq!(instance_owner("fsynclab-fixture-1"), None);
        assert_eq!(instance_owner("fsynclab-1-2"), None);
        assert_eq!(instance_owner("other-1-2-3"), None);
        let mine = instance_name(9);
        let (pid, _) = instance_owner(&mine).unwrap();
        assert_eq!(pid, i64::from(std::process::id()));
        assert_ne!(
            instance_name(9),
            mine,
            "two sessions of one run id get two instances"
        );
    }
}
