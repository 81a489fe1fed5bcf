//! The reachability check of a fleet run: which addresses fio's client would try for a
//! host, whether two hosts are one server under two names, and whether a fio server
//! answers (a TCP connect within a timeout).

use std::io;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::fio::client::{FleetHost, HostAddr};

/// The socket addresses fio's client would try for `host` (names resolved to IPv4, as its
/// `ip:` form does), or why there are none.
fn addresses(host: &FleetHost) -> Result<Vec<SocketAddr>, String> {
    Ok(match &host.addr {
        HostAddr::V4(v4) => vec![SocketAddr::from((*v4, host.port))],
        HostAddr::V6(v6) => vec![SocketAddr::from((*v6, host.port))],
        HostAddr::Name(name) => {
            let resolved = (name.as_str(), host.port).to_socket_addrs().map_err(|e| {
                format!("cannot resolve '{name}': {e}; check the name or give its address")
            })?;
            let v4: Vec<SocketAddr> = resolved.filter(SocketAddr::is_ipv4).collect();
            if v4.is_empty() {
                return Err(format!(
                    "'{name}' has no IPv4 address (fio's client resolves names to IPv4); \
                     give its IPv6 address in brackets"
                ));
            }
            v4
        }
    })
}

/// Two hosts that are one fio server under two names (`localhost` and `127.0.0.1`, a name
/// and its address): the first address each resolves to (the one fio connects to) is the
/// same. Both clients would run the job on that one server at once. Hosts that do not
/// resolve are left to the reachability check.
pub fn same_server(hosts: &[FleetHost]) -> Option<(FleetHost, FleetHost, SocketAddr)> {
    let mut seen: Vec<(SocketAddr, &FleetHost)> = Vec::new();
    for host in hosts {
        let Some(addr) = addresses(host).ok().and_then(|a| a.first().copied()) else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(a, _)| *a == addr) {
            return Some(((*first).clone(), host.clone(), addr));
        }
        seen.push((addr, host));
    }
    None
}

/// Whether a fio server answers at `host`: a TCP connect within `timeout` (names are
/// resolved to IPv4 addresses, as fio's `ip:` form does). The time to connect, or why not.
pub fn probe_host(host: &FleetHost, timeout: Duration) -> Result<Duration, String> {
    let addrs = addresses(host)?;
    let started = Instant::now();
    let mut last = String::new();
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                drop(stream);
                return Ok(started.elapsed());
            }
            Err(e)
                if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock =>
            {
                last = format!(
                    "no answer from {addr} within {:.1} s (host down, or a firewall drops port {})",
                    timeout.as_secs_f64(),
                    host.port
                );
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                last = format!(
                    "{addr} refused the connection: no fio server listens on port {} there \
                     (start fio in server mode on that port: see docs/FLEET.md)",
                    host.port
                );
            }
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    Err(last)
}

/// A port that refuses connections and that nothing else can take meanwhile: a TCP socket
/// bound to it on 127.0.0.1 and not listening (a connect gets a reset: refused). A port
/// merely released by a listener may be taken by another test or process at once.
#[cfg(test)]
pub(super) fn closed_port() -> (std::os::fd::OwnedFd, u16) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a new descriptor this function owns; the address
    // structures are zero-initialised plain data of the sizes passed.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let bound = libc::bind(raw, (&raw const addr).cast(), len);
        assert_eq!(bound, 0, "bind: {}", io::Error::last_os_error());
        let mut got: libc::sockaddr_in = std::mem::zeroed();
        let mut got_len = len;
        let named = libc::getsockname(raw, (&raw mut got).cast(), &mut got_len);
        assert_eq!(named, 0, "getsockname: {}", io::Error::last_os_error());
        (fd, u16::from_be(got.sin_port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_port_is_refused_and_said_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let host = FleetHost::parse(&format!("127.0.0.1:{port}")).unwrap();
        assert!(probe_host(&host, Duration::from_secs(2)).is_ok());
        let (_held, port) = closed_port();
        let host = FleetHost::parse(&format!("127.0.0.1:{port}")).unwrap();
        let e = probe_host(&host, Duration::from_secs(2)).unwrap_err();
        assert!(
            e.contains("refused") && e.contains(&port.to_string()),
            "{e}"
        );
    }

    #[test]
    fn one_server_under_two_names_is_found() {
        let hosts = |list: &[&str]| -> Vec<FleetHost> {
            list.iter().map(|h| FleetHost::parse(h).unwrap()).collect()
        };
        let (first, second, addr) =
            same_server(&hosts(&["localhost:18999", "10.9.9.9", "127.0.0.1:18999"])).unwrap();
        assert_eq!(first.to_string(), "localhost:18999");
        assert_eq!(second.to_string(), "127.0.0.1:18999");
        assert_eq!(addr.to_string(), "127.0.0.1:18999");
        assert!(
            same_server(&hosts(&[
                "127.0.0.1:18999",
                "127.0.0.1:18998",
                "[::1]:18999"
            ]))
            .is_none()
        );
    }
}
