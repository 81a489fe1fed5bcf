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
    /// Starts one and waits until it listens (on another free port if the one picked was
    /// taken in between).
    pub fn start() -> FioServer {
        for _ in 0..5 {
            // A port the kernel just handed out and released: free unless something grabs
            // it in the next instant, in which case fio exits and another is tried.
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
            let mut server = FioServer { child, port };
            let started = Instant::now();
            loop {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return server;
                }
                if server.child.try_wait().ok().flatten().is_some() {
                    break; // it could not bind: try another port
                }
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "fio --server on port {port} did not start listening"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("fio --server did not start on any of five free ports");
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
    found || super::skip_or_fail(test, "needs fio (apt-get install fio)")
}

/// A port that refuses connections and that nothing else can take while this lives: a TCP
/// socket bound to it on 127.0.0.1 and not listening (a port merely released by a listener
/// may be taken by another test or process at once).
pub struct ClosedPort {
    _socket: std::os::fd::OwnedFd,
    /// The port.
    pub port: u16,
}

impl ClosedPort {
    pub fn new() -> ClosedPort {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // SAFETY: plain socket calls on a new descriptor owned here; the address structures
        // are zero-initialised plain data of the sizes passed.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let socket = OwnedFd::from_raw_fd(fd);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let bound = libc::bind(socket.as_raw_fd(), (&raw const addr).cast(), len);
            assert_eq!(bound, 0, "bind: {}", std::io::Error::last_os_error());
            let mut got: libc::sockaddr_in = std::mem::zeroed();
            let mut got_len = len;
            let named = libc::getsockname(socket.as_raw_fd(), (&raw mut got).cast(), &mut got_len);
            assert_eq!(named, 0, "getsockname: {}", std::io::Error::last_os_error());
            ClosedPort {
                _socket: socket,
                port: u16::from_be(got.sin_port),
            }
        }
    }
}
