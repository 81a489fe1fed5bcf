//! fio's client/server mode, the pure part: the hosts a fleet runs on, allow-listed, and
//! the argument list of the `fio` client process that drives one of them (`man fio`,
//! "CLIENT / SERVER").
//!
//! A host is hostile input that ends up inside fio's connect string (`ip:HOST,PORT`), so it
//! is parsed, never passed through: a DNS name (letters, digits, `-` and `.`), an IPv4
//! address or a bracketed IPv6 address, then an optional `:PORT` (1–65535, default 8765,
//! fio's). Nothing fio would read differently gets through: no `,` (fio's port separator),
//! no `:` outside brackets, no `/` (fio's `sock:` paths and host-list files), no spaces.

use std::ffi::OsString;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

/// fio's default server port (`fio --server` listens on it).
pub const DEFAULT_PORT: u16 = 8765;

/// The most hosts one fleet run drives (one `fio` client process each).
pub const MAX_HOSTS: usize = 64;

/// The longest DNS name accepted (RFC 1035's 253 characters).
pub const MAX_NAME_LEN: usize = 253;

/// The address part of a host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HostAddr {
    /// A DNS name, lowercased (`db1.lab.example`).
    Name(String),
    /// An IPv4 address.
    V4(Ipv4Addr),
    /// An IPv6 address (written `[::1]`).
    V6(Ipv6Addr),
}

/// One fio server: where it listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FleetHost {
    /// Its address.
    pub addr: HostAddr,
    /// Its port.
    pub port: u16,
}

/// Why a host string was refused; the message quotes it and says what to write.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Nothing was given.
    #[error("no host given; name at least one fio server as HOST or HOST:PORT")]
    NoHosts,
    /// More hosts than [`MAX_HOSTS`].
    #[error("{count} hosts; at most {MAX_HOSTS} in one fleet run (split them into several runs)")]
    TooMany {
        /// How many were given.
        count: usize,
    },
    /// The same server twice.
    #[error("host '{host}' is given twice; name each fio server once")]
    Duplicate {
        /// The server, as `host:port`.
        host: String,
    },
    /// The text is not a host.
    #[error(
        "host '{text}': {problem}; write HOST or HOST:PORT (a DNS name, an IPv4 address or [IPv6])"
    )]
    Invalid {
        /// The text as given (control characters escaped when shown).
        text: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The port is not a number from 1 to 65535.
    #[error(
        "host '{text}': port '{port}' is not a number from 1 to 65535 (fio servers listen on {DEFAULT_PORT} unless started with another)"
    )]
    BadPort {
        /// The text as given.
        text: String,
        /// The port part.
        port: String,
    },
}

impl FleetHost {
    /// Parses `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT` (leading and trailing blanks
    /// are trimmed; anything else outside the allow-list is refused).
    pub fn parse(text: &str) -> Result<FleetHost, HostError> {
        let trimmed = text.trim();
        let invalid = |problem: &str| HostError::Invalid {
            text: trimmed.escape_debug().to_string(),
            problem: problem.to_string(),
        };
        if trimmed.is_empty() {
            return Err(invalid("it is empty"));
        }
        if let Some(c) = trimmed
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')))
        {
            let what = match c {
                ' ' | '\t' => "a space".to_string(),
                ',' => "',' (fio reads it as the port separator)".to_string(),
                '/' => "'/' (fio reads it as a socket path or a host-list file)".to_string(),
                c if c.is_control() => format!("the control character U+{:04X}", u32::from(c)),
                c => format!("'{c}'"),
            };
            return Err(invalid(&format!("it contains {what}")));
        }
        let (addr_text, port_text) = split_port(trimmed).map_err(&invalid)?;
        let port = match port_text {
            None => DEFAULT_PORT,
            Some(p) => parse_port(p).ok_or_else(|| HostError::BadPort {
                text: trimmed.to_string(),
                port: p.to_string(),
            })?,
        };
        let addr = if let Some(inner) = addr_text.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| invalid("'[' without ']'"))?;
            HostAddr::V6(
                inner
                    .parse()
                    .map_err(|_| invalid("the part in brackets is not an IPv6 address"))?,
            )
        } else if let Ok(v4) = addr_text.parse::<Ipv4Addr>() {
            HostAddr::V4(v4)
        } else {
            HostAddr::Name(check_name(addr_text).map_err(|p| invalid(&p))?)
        };
        Ok(FleetHost { addr, port })
    }

    /// The connect string fio's `--client=` takes: `ip:HOST,PORT`, or `ip6:ADDR,PORT` for
    /// an IPv6 address. (With `ip:` fio resolves a name to an IPv4 address.)
    pub fn connect_string(&self) -> String {
        match &self.addr {
            HostAddr::Name(name) => format!("ip:{name},{}", self.port),
            HostAddr::V4(v4) => format!("ip:{v4},{}", self.port),
            HostAddr::V6(v6) => format!("ip6:{v6},{}", self.port),
        }
    }

    /// The address as fio reports it in its JSON (`"hostname"`): the name or the address,
    /// without brackets or port.
    pub fn fio_hostname(&self) -> String {
        match &self.addr {
            HostAddr::Name(name) => name.clone(),
            HostAddr::V4(v4) => v4.to_string(),
            HostAddr::V6(v6) => v6.to_string(),
        }
    }
}

impl fmt::Display for FleetHost {
    /// `host:port`, `[v6]:port`: the host as labels and experiment names show it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.addr {
            HostAddr::V6(v6) => write!(f, "[{v6}]:{}", self.port),
            _ => write!(f, "{}:{}", self.fio_hostname(), self.port),
        }
    }
}

/// Splits `HOST[:PORT]` / `[V6][:PORT]`; the error says what is wrong.
fn split_port(text: &str) -> Result<(&str, Option<&str>), &'static str> {
    if text.starts_with('[') {
        let close = text.find(']').ok_or("'[' without ']'")?;
        let (addr, rest) = text.split_at(close + 1);
        return match rest {
            "" => Ok((addr, None)),
            _ => match rest.strip_prefix(':') {
                Some(port) => Ok((addr, Some(port))),
                None => Err("after ']' only ':PORT' may follow"),
            },
        };
    }
    if text.contains('[') || text.contains(']') {
        return Err("brackets go around an IPv6 address only ([::1]:8765)");
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (addr, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((addr, Some(port)))
        }
        _ => Err("an IPv6 address goes in brackets ([::1]:8765)"),
    }
}

/// A port: 1 to 65535 in plain decimal digits (no sign, no blanks).
fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u16>().ok().filter(|p| *p != 0)
}

/// A DNS name: dot-separated labels of letters, digits and inner `-`, 1–63 characters
/// each, at most [`MAX_NAME_LEN`] in all, the last label not all digits (that would be a
/// malformed IPv4 address, which resolvers read in surprising ways). Lowercased.
fn check_name(name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("the host part is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name is {} characters; a DNS name has at most {MAX_NAME_LEN}",
            name.len()
        ));
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let labels: Vec<&str> = name.split('.').collect();
    for label in &labels {
        if label.is_empty() {
            return Err("the name has an empty label ('..' or a leading '.')".into());
        }
        if label.len() > 63 {
            return Err(format!("the label '{label}' is longer than 63 characters"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!("the label '{label}' starts or ends with '-'"));
        }
    }
    if labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("it is neither an IPv4 address (four numbers 0–255) nor a DNS name".into());
    }
    Ok(name.to_ascii_lowercase())
}

/// Parses every host (see [`FleetHost::parse`]): at least one, at most [`MAX_HOSTS`],
/// none twice (`db1` and `db1:8765` are the same server).
pub fn parse_hosts<S: AsRef<str>>(texts: &[S]) -> Result<Vec<FleetHost>, HostError> {
    if texts.is_empty() {
        return Err(HostError::NoHosts);
    }
    if texts.len() > MAX_HOSTS {
        return Err(HostError::TooMany { count: texts.len() });
    }
    let mut hosts: Vec<FleetHost> = Vec::with_capacity(texts.len());
    for text in texts {
        let host = FleetHost::parse(text.as_ref())?;
        if hosts.contains(&host) {
            return Err(HostError::Duplicate {
                host: host.to_string(),
            });
        }
        hosts.push(host);
    }
    Ok(hosts)
}

/// The arguments (after the program name) of the `fio` client that runs `job_file` on
/// `host` and prints JSON+ on stdout: `--client=ip:H,P --output-format=json+ JOB`. fio
/// takes these two options only in their `--opt=value` form (a separate value is read as a
/// job file); the job file goes last, as fio's client sends the files that follow it.
pub fn client_args(host: &FleetHost, job_file: &Path) -> Vec<OsString> {
    let mut client = OsString::from("--client=");
    client.push(host.connect_string());
    vec![
        client,
        OsString::from("--output-format=json+"),
        job_file.as_os_str().to_os_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> FleetHost {
        FleetHost::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn names_addresses_and_ports_are_read() {
        assert_eq!(host("db1").to_string(), "db1:8765");
        assert_eq!(host("DB1.Lab.example.").to_string(), "db1.lab.example:8765");
        assert_eq!(host(" 10.0.0.7:9000 ").to_string(), "10.0.0.7:9000");
        assert_eq!(host("[::1]").to_string(), "[::1]:8765");
        assert_eq!(host("[fe80::1]:65535").to_string(), "[fe80::1]:65535");
        assert_eq!(host("127.0.0.1:1").port, 1);
        assert_eq!(host("a-b.c").addr, HostAddr::Name("a-b.c".into()));
    }

    #[test]
    fn connect_strings_are_fios() {
        assert_eq!(host("127.0.0.1:8766").connect_string(), "ip:127.0.0.1,8766");
        assert_eq!(host("db1").connect_string(), "ip:db1,8765");
        assert_eq!(host("[::1]:4444").connect_string(), "ip6:::1,4444");
        assert_eq!(host("[::1]:4444").fio_hostname(), "::1");
        let args = client_args(&host("10.1.2.3:7000"), Path::new("/tmp/x/fleet.fio"));
        assert_eq!(
            args,
            [
                "--client=ip:10.1.2.3,7000",
                "--output-format=json+",
                "/tmp/x/fleet.fio"
            ]
            .map(OsString::from)
        );
    }

    #[test]
    fn what_fio_would_misread_is_refused_naming_it() {
        let cases = [
            ("", "empty"),
            ("db1,8766", "port separator"),
            ("sock:/tmp/fio.sock", "socket path"),
            ("host.list", ""), // a name: it is a host, never opened as a file by us
            ("a b", "a space"),
            ("db1:", "port ''"),
            ("db1:0", "port '0'"),
            ("db1:65536", "port '65536'"),
            ("db1:+80", "'+'"),
            ("db1:80:81", "brackets"),
            ("::1", "brackets"),
            ("[::1", "without ']'"),
            ("[::1]x", "only ':PORT'"),
            ("[db1]", "not an IPv6"),
            ("db[1]", "brackets go around"),
            ("-db1", "starts or ends with '-'"),
            ("a..b", "empty label"),
            ("1.2.3", "neither an IPv4"),
            ("256.1.1.1", "neither an IPv4"),
            ("db1\u{1b}[31m", "U+001B"),
            ("ip6:::1,4444", "','"),
            ("$(reboot)", "'$'"),
            ("[fe80::1%eth0]", "'%'"),
        ];
        for (text, says) in cases {
            let result = FleetHost::parse(text);
            if says.is_empty() {
                assert!(result.is_ok(), "{text}: {result:?}");
                continue;
            }
            let e = result.expect_err(text).to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert!(
                e.contains("HOST:PORT") || e.contains("65535"),
                "{text}: {e}"
            );
            assert!(
                !e.contains('\u{1b}'),
                "{text}: raw control character in {e}"
            );
        }
        let long = format!("{}.example", "a".repeat(64));
        assert!(
            FleetHost::parse(&long)
                .unwrap_err()
                .to_string()
                .contains("63")
        );
        let huge = vec!["abcdefgh"; 40].join(".");
        assert!(
            FleetHost::parse(&huge)
                .unwrap_err()
                .to_string()
                .contains("253")
        );
    }

    #[test]
    fn host_lists_are_bounded_and_without_duplicates() {
        assert_eq!(parse_hosts::<&str>(&[]), Err(HostError::NoHosts));
        let e = parse_hosts(&["db1", "DB1:8765"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "host 'db1:8765' is given twice; name each fio server once"
        );
        assert_eq!(parse_hosts(&["db1", "db1:8766"]).map(|h| h.len()), Ok(2));
        let many: Vec<String> = (0..=MAX_HOSTS).map(|i| format!("h{i}")).collect();
        assert_eq!(
            parse_hosts(&many),
            Err(HostError::TooMany {
                count: MAX_HOSTS + 1
            })
        );
    }
}
