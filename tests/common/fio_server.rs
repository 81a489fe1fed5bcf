//! A real `fio --server` for tests (`tests/fleet.rs`, `tests/gui_fleet.rs`): on 127.0.0.1
//! at a free port, in its own process group, killed with every process it forked when
//! dropped (even when the test panics).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `fio --server` on 127.0.0.1 at a free port; killed and reaped on drop.
pub struct FioServer {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl FioServer {
    /// Starts one and waits until it listens.
    pub fn start() -> FioServer {
        // A port the kernel just handed out and released: free unless something grabs it
        // in the next instant.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("fio")
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start fio --server");
        let server = FioServer { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "fio --server on port {port} did not start listening"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The live processes this server forked (per connection, per job), by pid: those
    /// whose command line names this server's unique port, zombies and the server aside.
    pub fn forks(&self) -> Vec<i32> {
        let needle = format!("--server=ip:127.0.0.1,{}", self.port);
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if pid == self.child.id() as i32 {
                continue;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z'));
            if !zombie && String::from_utf8_lossy(&cmdline).contains(&needle) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Waits up to `limit` for the server's job processes to end; the ones left.
    pub fn forks_after(&self, limit: Duration) -> Vec<i32> {
        let started = Instant::now();
        loop {
            let forks = self.forks();
            if forks.is_empty() || started.elapsed() > limit {
                return forks;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for FioServer {
    fn drop(&mut self) {
        // The server, its process group, then any fork that left the group (fio's job
        // processes start sessions of their own), each by pid.
        let pgid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
        for pid in self.forks() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Whether fio is installed; outside CI a missing fio skips the test (saying so), with
/// CI=true it fails it.
pub fn fio_present(test: &str) -> bool {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: fio is not installed (CI must have it)"
        );
        eprintln!("{test}: skipped: fio is not installed");
    }
    found
}
