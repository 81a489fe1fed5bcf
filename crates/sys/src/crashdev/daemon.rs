//! The recording device's daemon runs in a process of its own (`fsynclab crash-device`,
//! started by [`super::CrashDevice`]): a crash test killed while its workload waits on the
//! device then cannot take the device's service down with it — the waiting threads get their
//! answers and exit, the daemon sees its parent's end of the pipe close and exits too, which
//! aborts the FUSE connection (any later request fails instead of hanging), and `clean`
//! removes what is left. The daemon locks its memory and is an I/O flusher: it serves a block
//! device, so memory reclaim must never wait on it.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::fs::{RecordingFs, mount};
use super::recorder::Recorder;
use super::tool::{DaemonField, DeviceError};

/// The `fsynclab` subcommand that serves a recording device (hidden: fsynclab starts it).
pub const DAEMON_COMMAND: &str = "crash-device";
/// The smallest and largest image the daemon serves.
pub const DAEMON_SIZES: (u64, u64) = (1 << 20, 64 << 30);
/// A lasting daemon's messages, in its directory.
pub const DAEMON_LOG: &str = "daemon.log";
/// What the daemon prints when its device is mounted.
const READY: &str = "ready";
/// `prctl(PR_SET_IO_FLUSHER)` (linux/prctl.h).
const PR_SET_IO_FLUSHER: libc::c_int = 57;

/// The program that serves recording devices: an `fsynclab` binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonProgram {
    program: PathBuf,
}

impl DaemonProgram {
    /// The `fsynclab` binary at `program` (front ends pass their own executable; tests the
    /// one cargo built).
    pub fn fsynclab(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }
}

/// A running daemon: its process, and the pipe whose closing tells it to finish.
pub(crate) struct Daemon {
    child: Child,
    stdin: Option<ChildStdin>,
    /// A lasting daemon's FUSE mount: unmounting it is what ends the daemon.
    lasting_mnt: Option<PathBuf>,
}

impl Daemon {
    /// Starts `program` serving an image of `size` bytes in `base` (its `dev/` made, its
    /// `mnt/` mounted) and waits until the device is mounted. A `lasting` daemon serves until
    /// its mount is unmounted, in a session of its own, its messages in `base/daemon.log`;
    /// otherwise until this process closes its pipe (or ends).
    pub(crate) fn start(
        program: &DaemonProgram,
        base: &Path,
        size: u64,
        lasting: bool,
    ) -> Result<Daemon, DeviceError> {
        use std::os::unix::process::CommandExt;
        let command = format!(
            "{} {DAEMON_COMMAND} serving {}",
            program.program.display(),
            base.display()
        );
        let tool = |message: String| DeviceError::Tool {
            command: command.clone(),
            message,
        };
        let mut cmd = Command::new(&program.program);
        cmd.arg(DAEMON_COMMAND)
            .arg("--base")
            .arg(base)
            .arg("--size")
            .arg(size.to_string())
            .stdout(Stdio::piped());
        if lasting {
            let log_path = base.join(DAEMON_LOG);
            let log = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(&log_path)
                .map_err(|source| DeviceError::Io {
                    action: "create",
                    path: log_path,
                    source,
                })?;
            cmd.arg("--lasting").stdin(Stdio::null()).stderr(log);
            // SAFETY: setsid is async-signal-safe; the closure touches nothing else. Its own
            // session: the terminal's hang-up or ^C never reaches a device meant to last.
            unsafe {
                cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(Into::into));
            }
        } else {
            // Its own process group: the terminal's ^C reaches the crash test, which then
            // tears the device down in order, not the daemon under it.
            cmd.stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| tool(e.to_string()))?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let lasting_mnt = lasting.then(|| base.join("mnt"));
        let mut daemon = Daemon {
            child,
            stdin,
            lasting_mnt,
        };
        if line.trim() != READY {
            let mut said = daemon.stop_and_say();
            if lasting {
                said = std::fs::read_to_string(base.join(DAEMON_LOG)).unwrap_or(said);
            }
            return Err(tool(said));
        }
        // Its later messages (errors it logs while serving) go to the log.
        if let Some(err) = daemon.child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    log::warn!("crash-test device: {line}");
                }
            });
        }
        Ok(daemon)
    }

    /// The daemon's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets the daemon go on serving after this handle is gone (a lasting one).
    pub(crate) fn keep(mut self) {
        self.stdin.take();
        self.lasting_mnt.take();
    }

    /// Ends the service: closes the pipe, or unmounts a lasting daemon's mount.
    fn end(&mut self) {
        self.stdin.take();
        if let Some(mnt) = self.lasting_mnt.take() {
            let _ = super::tool::run("umount", &["-l", &mnt.to_string_lossy()]);
        }
    }

    /// Ends the service, waits for the daemon to exit; its exit status and message when it
    /// did not succeed.
    fn stop_and_say(&mut self) -> String {
        self.end();
        let mut said = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut said);
        }
        match self.wait(Duration::from_secs(30)) {
            Some(status) => format!("{status}: {}", said.trim()),
            None => format!("did not exit in 30 s: {}", said.trim()),
        }
    }

    /// Tells the daemon to finish (unmount its device, write out its log) and waits.
    pub(crate) fn stop(mut self) -> Result<(), String> {
        self.end();
        match self.wait(Duration::from_secs(30)) {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(format!("the daemon exited with {status}")),
            None => Err("the daemon did not exit in 30 s; killed".into()),
        }
    }

    /// Waits up to `limit` for the daemon to exit, else kills it.
    fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.stdin.is_some() || self.lasting_mnt.is_some() {
            self.end();
            let _ = self.wait(Duration::from_secs(10));
        }
    }
}

/// Why the daemon refused to serve `base` (or a directory in it).
fn refuse(base: &Path, why: impl std::fmt::Display) -> DeviceError {
    DeviceError::Refused {
        field: DaemonField::Base,
        value: base.display().to_string(),
        why: why.to_string(),
    }
}

/// Checks that `base` is a crash test's directory made by root: absolute, no link on the way,
/// `crash-…`, owned by root and closed to others, with an empty `mnt/` of root's and no
/// `dev/` yet.
fn check_base(base: &Path) -> Result<(), DeviceError> {
    let name_ok = base
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("crash-"));
    if !base.is_absolute() || !name_ok {
        return Err(refuse(base, "must be an absolute crash-… directory"));
    }
    let canonical = std::fs::canonicalize(base).map_err(|e| refuse(base, e))?;
    if canonical != base {
        return Err(refuse(base, "must not pass through a symbolic link"));
    }
    for dir in [base.to_path_buf(), base.join("mnt")] {
        let meta = std::fs::symlink_metadata(&dir).map_err(|e| refuse(&dir, e))?;
        if !meta.is_dir() || meta.uid() != 0 || meta.permissions().mode() & 0o077 != 0 {
            return Err(refuse(&dir, "must be a directory of root's, mode 0700"));
        }
    }
    let empty = std::fs::read_dir(base.join("mnt"))
        .map_err(|e| refuse(base, e))?
        .next()
        .is_none();
    if !empty {
        return Err(refuse(&base.join("mnt"), "must be empty"));
    }
    if std::fs::symlink_metadata(base.join("dev")).is_ok() {
        return Err(refuse(&base.join("dev"), "already exists"));
    }
    Ok(())
}

/// The daemon itself: serves an image of `size` bytes recorded in `base/dev`, mounted at
/// `base/mnt`; says so on `ready`, serves until `until` ends (its parent closed the pipe, or
/// died), then unmounts, writing out the log. Root only.
pub fn serve(
    base: &Path,
    size: u64,
    mut ready: impl Write,
    mut until: impl Read,
) -> Result<(), DeviceError> {
    let (session, mnt) = start_serving(base, size)?;
    let said = writeln!(ready, "{READY}").and_then(|()| ready.flush());
    if said.is_ok() {
        let mut sink = [0u8; 64];
        while matches!(until.read(&mut sink), Ok(n) if n > 0) {}
    }
    session.umount_and_join().map_err(|source| DeviceError::Io {
        action: "unmount the recording device at",
        path: mnt,
        source,
    })
}

/// [`serve`] for a lasting device (`crash-fs create`): serves until its FUSE mount is
/// unmounted (`crash-fs destroy`), whoever started it; the log is written out then, and at
/// every cache flush and fsync of the marks file before.
pub fn serve_lasting(base: &Path, size: u64, mut ready: impl Write) -> Result<(), DeviceError> {
    let (session, mnt) = start_serving(base, size)?;
    let _ = writeln!(ready, "{READY}").and_then(|()| ready.flush());
    drop(ready);
    session.join().map_err(|source| DeviceError::Io {
        action: "serve the recording device at",
        path: mnt,
        source,
    })
}

/// Refuses an image size the daemon does not serve.
fn check_size(size: u64) -> Result<(), DeviceError> {
    let (min, max) = DAEMON_SIZES;
    if !(min..=max).contains(&size) || !size.is_multiple_of(4096) {
        return Err(DeviceError::Refused {
            field: DaemonField::Size,
            value: size.to_string(),
            why: format!("use a multiple of 4096 from {min} to {max}"),
        });
    }
    Ok(())
}

/// Checks the request, locks the daemon's memory, makes it an I/O flusher and mounts the
/// recording device: its session and mount point.
fn start_serving(
    base: &Path,
    size: u64,
) -> Result<(fuser::BackgroundSession, PathBuf), DeviceError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(refuse(base, "only root serves a recording device"));
    }
    check_size(size)?;
    check_base(base)?;
    use nix::sys::mman::{MlockAllFlags, mlockall};
    if let Err(e) = mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE) {
        log::debug!("crash-test device: mlockall refused: {e}");
    }
    // SAFETY: prctl with integer arguments only; it changes this thread's flags, which the
    // service thread started below inherits. A container's root may lack CAP_SYS_RESOURCE.
    if unsafe { libc::prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) } != 0 {
        log::debug!(
            "crash-test device: PR_SET_IO_FLUSHER refused: {}",
            std::io::Error::last_os_error()
        );
    }
    let recorder = Recorder::create(&base.join("dev"), size)?;
    let mnt = base.join("mnt");
    let session = mount(RecordingFs::new(recorder), &mnt).map_err(|source| DeviceError::Io {
        action: "mount the recording device at",
        path: mnt.clone(),
        source,
    })?;
    Ok((session, mnt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_that_is_not_a_crash_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let said = |base: &Path| check_base(base).unwrap_err().to_string();
        assert!(said(Path::new("crash-1-a")).contains("absolute crash-"));
        assert!(said(dir.path()).contains("absolute crash-"));
        let base = dir.path().join("crash-1-a");
        assert!(said(&base).contains("No such file"));
        std::fs::create_dir(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(base.join("mnt")).unwrap();
        let link = dir.path().join("crash-2-b");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        assert!(said(&link).contains("symbolic link"));
        if nix::unistd::geteuid().is_root() {
            assert!(said(&base).contains("mode 0700"), "{}", said(&base));
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::fs::set_permissions(base.join("mnt"), std::fs::Permissions::from_mode(0o700))
                .unwrap();
            assert!(check_base(&base).is_ok());
            std::fs::write(base.join("mnt/x"), b"").unwrap();
            assert!(said(&base).contains("must be empty"));
            std::fs::remove_file(base.join("mnt/x")).unwrap();
            std::fs::create_dir(base.join("dev")).unwrap();
            assert!(said(&base).contains("already exists"));
        } else {
            assert!(said(&base).contains("root's"));
        }
    }

    #[test]
    fn a_size_out_of_range_is_refused_before_anything_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("crash-1-a");
        for size in [0, 4095, (64 << 30) + 4096, (1 << 20) + 1] {
            let e = serve(&base, size, Vec::new(), &b""[..]).unwrap_err();
            let size_refused = matches!(
                &e,
                DeviceError::Refused {
                    field: DaemonField::Size,
                    ..
                }
            );
            assert!(size_refused || e.to_string().contains("only root"), "{e}");
        }
        assert!(!base.exists());
    }
}
