//! The `fio` client process of a fleet run (the reachability check is `fleet_probe`): the
//! job file in a private directory, the child started with an argument list (never a shell) in its own
//! process group, its output captured with a size cap, stopped on cancel or timeout.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::engine::CancelToken;

/// The most stdout kept from one fio client (its JSON+; a long multi-job run's is a few MB).
pub const MAX_STDOUT_BYTES: usize = 64 << 20;
/// The most stderr kept (the end is what explains a failure).
const MAX_STDERR_BYTES: usize = 64 << 10;
/// How long fio gets to stop its servers' jobs after SIGINT before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often the child is polled for exit, cancel and timeout.
const POLL: Duration = Duration::from_millis(50);
/// The job file's name inside the private directory.
const JOB_FILE: &str = "fleet.fio";

/// A private directory (mode 0700, a fresh name made with `mkdir`, never an existing one)
/// holding the job file (mode 0600, `O_CREAT|O_EXCL|O_NOFOLLOW`); removed on drop. fio
/// runs with it as its working directory, so no file another user planted can be read as
/// a host list or a job file.
#[derive(Debug)]
pub struct JobDir {
    dir: PathBuf,
}

impl JobDir {
    /// Makes the directory in `parent` (the system's temporary directory in use) and
    /// writes `job_text` into it.
    pub fn create(parent: &Path, job_text: &str) -> io::Result<JobDir> {
        check_parent(parent)?;
        sweep_stale(parent, STALE_AFTER);
        let mut attempt = 0u32;
        let dir = loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let candidate = parent.join(format!(
                "fsynclab-fleet-{}-{nanos:09}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let job_dir = JobDir { dir };
        // mkdir honours the umask: make sure of 0700 through the new directory itself.
        std::fs::set_permissions(&job_dir.dir, std::fs::Permissions::from_mode(0o700))?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(job_dir.job_file())?;
        file.write_all(job_text.as_bytes())?;
        file.sync_all()?;
        Ok(job_dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The job file in it.
    pub fn job_file(&self) -> PathBuf {
        self.dir.join(JOB_FILE)
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.job_file());
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The job directory's parent must be one nobody else can rename entries in: owned by root
/// or this user, and not writable by group or others unless sticky (as /tmp). Otherwise
/// another user could move the job directory away and put one of theirs in its place
/// between its creation and fio reading it, and root's fio client would send their job to
/// the servers.
fn check_parent(parent: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(parent)?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let owner_ok = meta.uid() == 0 || meta.uid() == uid;
    if !meta.is_dir() || !owner_ok || crate::engine::shared_writable(meta.mode()) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} (owner uid {}, mode {:04o}) lets another user rename entries in it; set \
                 TMPDIR to a directory owned by you or root that only you can write, or a \
                 sticky one like /tmp",
                parent.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// How old a job directory of a process that is gone must be before it is removed.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Removes the job directories that fsynclab processes killed outright (SIGKILL, a crash:
/// no `Drop`) left in `parent`: `fsynclab-fleet-PID-...` directories of this user, mode
/// 0700, whose process no longer exists and that are older than `min_age` (a process in
/// another PID namespace sharing the directory is not seen by `kill`; it has long read its
/// job file by then). Only the job file and the then-empty directory are removed, never
/// followed through a link; anything else in it keeps the directory. Errors are ignored.
pub fn sweep_stale(parent: &Path, min_age: Duration) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fsynclab-fleet-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        let dir = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        let old_enough = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= min_age);
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o777 != 0o700 || !old_enough {
            continue;
        }
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(dir.join(JOB_FILE));
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// How one fio client process ended.
#[derive(Debug)]
pub enum ClientEnd {
    /// It exited by itself.
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// Its stdout (at most [`MAX_STDOUT_BYTES`]; `truncated` says when more came).
        stdout: String,
        /// Whether stdout went over the cap.
        truncated: bool,
        /// The end of its stderr.
        stderr: String,
    },
    /// Cancel was asked: it was stopped (SIGINT, then SIGKILL after a grace period).
    Cancelled,
    /// It ran past the timeout and was stopped.
    TimedOut {
        /// The end of its stderr.
        stderr: String,
    },
}

/// Runs `fio args...` in `cwd` until it exits, `cancel` is set or `timeout` passes.
/// stdin is closed; stdout and stderr are read on their own threads (so a chatty child
/// never blocks on a full pipe). The child gets its own process group: a Ctrl-C at the
/// terminal reaches fsynclab, which decides, and never half-stops fio.
pub fn run_client(
    fio: &Path,
    args: &[OsString],
    cwd: &Path,
    timeout: Duration,
    cancel: &CancelToken,
) -> io::Result<ClientEnd> {
    let mut command = Command::new(fio);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // The CLI blocks SIGINT, SIGTERM and SIGHUP in its threads (they are waited for by one
    // thread), and a child inherits the mask: unblocked, fio's client answers the SIGINT
    // that stops it by stopping the job on its server; blocked, it would be killed after
    // the grace period and the server would run the job to its end. And should fsynclab
    // end without stopping it (a second signal exits at once, the window closes, a crash),
    // the kernel sends it that SIGINT: PR_SET_PDEATHSIG fires when the thread that started
    // it ends, and that thread waits for it here.
    // SAFETY: between fork and exec only sigprocmask, signal and prctl run, all
    // async-signal-safe system calls.
    unsafe {
        command.pre_exec(|| {
            let empty = nix::sys::signal::SigSet::empty();
            empty.thread_set_mask().map_err(io::Error::from)?;
            // An ignored SIGINT is inherited through exec (a shell's background job): make
            // it the default again, whatever fio then installs.
            if libc::signal(libc::SIGINT, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .map(|s| read_capped(s, MAX_STDOUT_BYTES));
    let stderr = child
        .stderr
        .take()
        .map(|s| read_capped(s, MAX_STDERR_BYTES));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if cancel.is_cancelled() {
            stop(&mut child);
            break None;
        }
        if started.elapsed() >= timeout {
            stop(&mut child);
            let (stderr, _) = collect(stderr);
            return Ok(ClientEnd::TimedOut { stderr });
        }
        std::thread::sleep(POLL);
    };
    let Some(status) = status else {
        let _ = collect(stdout);
        let _ = collect(stderr);
        return Ok(ClientEnd::Cancelled);
    };
    let (stdout, truncated) = collect(stdout);
    let (stderr, _) = collect(stderr);
    Ok(ClientEnd::Exited {
        status,
        stdout,
        truncated,
        stderr,
    })
}

/// SIGINT (fio's client then tells its server to stop the job), SIGKILL after
/// [`STOP_GRACE`]; reaps the child.
fn stop(child: &mut Child) {
    // The child leads its own process group (`process_group(0)`): signal all of it.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGINT);
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(POLL);
    }
    // Everything in the group, not only the child: a process it started would keep the
    // output pipes open.
    let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
}

/// A reader thread's answer: the bytes kept (the first `cap`) and whether more came.
type Captured = mpsc::Receiver<(Vec<u8>, bool)>;

/// Reads `source` to its end on a thread, keeping the first `cap` bytes.
fn read_capped(mut source: impl Read + Send + 'static, cap: usize) -> Captured {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("fsynclab-fio-output".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut truncated = false;
            let mut buf = [0u8; 64 << 10];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = cap.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                        truncated |= n > room;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send((kept, truncated));
        });
    if spawned.is_err() {
        let (tx, rx) = mpsc::channel();
        let _ = tx.send((b"(could not read this output: no thread)".to_vec(), false));
        return rx;
    }
    rx
}

/// The text a reader thread kept (invalid UTF-8 replaced), and whether it was cut.
fn collect(captured: Option<Captured>) -> (String, bool) {
    match captured.and_then(|rx| rx.recv().ok()) {
        Some((bytes, truncated)) => (String::from_utf8_lossy(&bytes).into_owned(), truncated),
        None => (String::new(), false),
    }
}

/// The longest line [`tail`] keeps (characters; the rest is cut with `…`).
pub const MAX_TAIL_LINE_CHARS: usize = 300;

/// The end of `text`: its last `max_lines` non-empty lines (for error messages), each cut
/// at [`MAX_TAIL_LINE_CHARS`] and with control, bidi and invisible characters escaped:
/// fio's client prints what a server sends as it comes, and a server is not trusted to
/// write to the terminal.
pub fn tail(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(max_lines)..]
        .iter()
        .map(|line| {
            let line = line.trim_end_matches('\r');
            let cut = match line.char_indices().nth(MAX_TAIL_LINE_CHARS) {
                Some((at, _)) => format!("{}…", &line[..at]),
                None => line.to_string(),
            };
            crate::spec::escape_control(&cut).into_owned()
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_dir_is_private_fresh_and_removed() {
        let parent = std::env::temp_dir();
        let dir = JobDir::create(&parent, "[w]\nrw=write\n").unwrap();
        let meta = std::fs::symlink_metadata(dir.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        let file = std::fs::symlink_metadata(dir.job_file()).unwrap();
        assert_eq!(file.permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_to_string(dir.job_file()).unwrap(),
            "[w]\nrw=write\n"
        );
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn a_parent_others_can_rename_entries_in_is_refused() {
        let parent = tempfile::tempdir().unwrap();
        std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = JobDir::create(parent.path(), "[w]\n").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("set TMPDIR"), "{e}");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
        // Sticky, as /tmp: fine.
        std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        drop(JobDir::create(parent.path(), "[w]\n").unwrap());
    }

    #[test]
    fn output_is_capped_and_a_slow_child_is_stopped() {
        let cancel = CancelToken::new();
        let sh = Path::new("/bin/sh");
        let args: Vec<OsString> = ["-c", "head -c 100000 /dev/zero; echo oops >&2; exit 3"]
            .map(OsString::from)
            .to_vec();
        // The cap is far above 100000: everything is kept.
        match run_client(sh, &args, Path::new("/"), Duration::from_secs(20), &cancel).unwrap() {
            ClientEnd::Exited {
                status,
                stdout,
                truncated,
                stderr,
            } => {
                assert_eq!(status.code(), Some(3));
                assert_eq!(stdout.len(), 100_000);
                assert!(!truncated);
                assert_eq!(stderr.trim(), "oops");
            }
            other => panic!("{other:?}"),
        }
        let args: Vec<OsString> = ["-c", "sleep 30"].map(OsString::from).to_vec();
        let started = Instant::now();
        let end = run_client(
            sh,
            &args,
            Path::new("/"),
            Duration::from_millis(200),
            &cancel,
        );
        assert!(matches!(end.unwrap(), ClientEnd::TimedOut { .. }));
        assert!(started.elapsed() < Duration::from_secs(10));
        cancel.cancel();
        let end = run_client(sh, &args, Path::new("/"), Duration::from_secs(60), &cancel);
        assert!(matches!(end.unwrap(), ClientEnd::Cancelled));
    }

    #[test]
    fn job_dirs_of_killed_processes_are_swept_and_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let make = |name: &str, mode: u32| {
            let dir = parent.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join(JOB_FILE), "[w]\n").unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            dir
        };
        let stale = make(&format!("fsynclab-fleet-{dead}-123-0"), 0o700);
        let live = make(
            &format!("fsynclab-fleet-{}-123-0", std::process::id()),
            0o700,
        );
        let open = make(&format!("fsynclab-fleet-{dead}-456-0"), 0o755);
        let other = make(&format!("other-{dead}"), 0o700);
        // Too young: kept.
        sweep_stale(parent.path(), Duration::from_secs(3600));
        assert!(stale.exists());
        sweep_stale(parent.path(), Duration::ZERO);
        assert!(!stale.exists(), "a killed run's job dir is left");
        assert!(live.join(JOB_FILE).exists() && open.exists() && other.exists());
        // A new job dir sweeps nothing of its own and is removed as before.
        let dir = JobDir::create(parent.path(), "[w]\n").unwrap();
        assert!(dir.job_file().exists() && live.exists());
    }

    #[test]
    fn tails_keep_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), "b / c");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn tails_never_carry_terminal_escapes_or_huge_lines() {
        // fio's client prints what a server sends (`<host> ...` text) as it comes: a hostile
        // server must not reach the terminal with escape sequences through an error message.
        let text = "ok\n<h> \u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}x\r\n";
        let t = tail(text, 4);
        assert!(!t.chars().any(crate::spec::is_unsafe_char), "{t:?}");
        assert!(t.contains("\\u001b"), "{t:?}");
        let long = "y".repeat(1 << 20);
        let t = tail(&long, 4);
        assert!(t.len() <= MAX_TAIL_LINE_CHARS + 4, "{}", t.len());
        assert!(t.ends_with('…'), "{}", &t[t.len() - 8..]);
    }
}
