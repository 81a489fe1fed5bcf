//! Pure parsers of tracefs text: one line of `trace_pipe` (the header and the events
//! fsynclab enables) and a CPU's `stats` file. Fed by fixture strings recorded on this
//! machine (tests/fixtures/ktrace/, scripts/record-ktrace-fixtures.sh) and by the reader.

/// A block device number as tracepoints print it (`7,1` or `7:1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dev {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl Dev {
    /// Parses `7,1` (block, jbd2) or `7:1` (xfs), or sysfs's `dev` file (`7:1\n`).
    pub fn parse(text: &str) -> Option<Dev> {
        let (major, minor) = text.trim().split_once([',', ':'])?;
        Some(Dev {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }

    /// The kernel's internal `dev_t` (major << 20 | minor), the value event filters compare.
    pub fn kernel_dev_t(self) -> u64 {
        (u64::from(self.major) << 20) | u64::from(self.minor)
    }
}

/// One line of trace text: who, when, which event, and its printed fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLine<'a> {
    /// Thread id of the task the event fired in.
    pub pid: u32,
    /// Timestamp in ns (the instance's clock: `mono` as fsynclab sets it).
    pub ts_ns: u64,
    /// Event name without its system (`block_rq_issue`).
    pub event: &'a str,
    /// The printed fields after `event: `.
    pub body: &'a str,
}

/// Parses `<comm>-<pid> [<cpu>] <flags> <secs>.<frac>: <event>: <body>`. The command
/// name may hold spaces and dashes (`opt cgu.01-27207`), so the header is found from the
/// timestamp, the first `<number>.<number>: ` followed by an event name and `: `.
pub fn parse_line(line: &str) -> Option<TraceLine<'_>> {
    let line = line.trim_end_matches(['\n', '\r']);
    for (at, _) in line.match_indices(": ") {
        let head = &line[..at];
        let stamp = head.rsplit(' ').next()?;
        let Some(ts_ns) = parse_timestamp(stamp) else {
            continue;
        };
        let rest = &line[at + 2..];
        let (event, body) = match rest.split_once(": ") {
            Some((event, body)) => (event, body),
            None => (rest.strip_suffix(':')?, ""),
        };
        if event.is_empty()
            || !event
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            continue;
        }
        let task = head[..head.len() - stamp.len()].trim_end();
        let task = &task[..task.rfind(" [")?];
        let pid = task.trim().rsplit_once('-')?.1.parse().ok()?;
        return Some(TraceLine {
            pid,
            ts_ns,
            event,
            body,
        });
    }
    None
}

/// `1001.424510` (µs, the default) or `1001.424510123` (ns) → ns.
fn parse_timestamp(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || frac.len() > 9 {
        return None;
    }
    if !secs.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    let secs: u64 = secs.parse().ok()?;
    let frac: u64 = frac.parse().ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
}

/// What a block request's `rwbs` says about flushing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rwbs {
    /// The request is a flush (operation `F`: `F` alone or `FF`, a flush with PREFLUSH,
    /// as the block layer's flush machinery issues it).
    pub flush: bool,
    /// A write with the FUA bit (`WF...`).
    pub fua: bool,
}

/// Parses the block layer's `rwbs` field: an optional leading `F` (PREFLUSH), the
/// operation letter (`W`, `R`, `D`, `F`, `N`...), then modifiers (`F` FUA, `S`, `M`, `A`).
pub fn parse_rwbs(rwbs: &str) -> Rwbs {
    let bytes = rwbs.as_bytes();
    let op_at = if bytes.len() >= 2 && bytes[0] == b'F' && b"WRDFN".contains(&bytes[1]) {
        1
    } else {
        0
    };
    let Some(&op) = bytes.get(op_at) else {
        return Rwbs::default();
    };
    Rwbs {
        flush: op == b'F',
        fua: op == b'W' && bytes[op_at + 1..].contains(&b'F'),
    }
}

/// The events fsynclab uses, with the fields it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `block_rq_issue`.
    RqIssue {
        /// Device.
        dev: Dev,
        /// Flush or FUA.
        rwbs: Rwbs,
    },
    /// `block_rq_complete`.
    RqComplete {
        /// Device.
        dev: Dev,
        /// Flush or FUA.
        rwbs: Rwbs,
    },
    /// `jbd2_start_commit`.
    JbdStartCommit {
        /// Journal's device.
        dev: Dev,
        /// Transaction id.
        tid: u32,
    },
    /// `jbd2_end_commit`.
    JbdEndCommit {
        /// Journal's device.
        dev: Dev,
        /// Transaction id.
        tid: u32,
    },
    /// `jbd2_run_stats`.
    JbdRunStats {
        /// Journal's device.
        dev: Dev,
        /// Handles in the transaction.
        handles: u64,
        /// Blocks logged.
        blocks_logged: u64,
    },
    /// `xfs_log_force`.
    XfsLogForce {
        /// Filesystem's device.
        dev: Dev,
    },
    /// `xlog_iclog_sync`: one in-core log buffer written.
    XfsIclogSync {
        /// Filesystem's device.
        dev: Dev,
    },
    /// `btrfs_sync_file`.
    BtrfsSyncFile {
        /// Filesystem id (printed `af55f504-...`; 16 bytes in the binary record).
        fsid: uuid::Uuid,
    },
    /// `btrfs_transaction_commit`.
    BtrfsTransactionCommit {
        /// Filesystem id.
        fsid: uuid::Uuid,
    },
    /// `sched_switch`.
    SchedSwitch {
        /// Task switched out.
        prev_pid: u32,
        /// Whether it went to sleep uninterruptibly (`D`).
        prev_d: bool,
        /// Task switched in.
        next_pid: u32,
    },
}

/// The event of `line`, when it is one fsynclab uses and its fields parse.
pub fn parse_event(line: &TraceLine<'_>) -> Option<Event> {
    let body = line.body;
    let mut words = body.split_ascii_whitespace();
    Some(match line.event {
        "block_rq_issue" | "block_rq_complete" => {
            let dev = Dev::parse(words.next()?)?;
            let rwbs = parse_rwbs(words.next()?);
            if line.event == "block_rq_issue" {
                Event::RqIssue { dev, rwbs }
            } else {
                Event::RqComplete { dev, rwbs }
            }
        }
        "jbd2_start_commit" | "jbd2_end_commit" => {
            let dev = Dev::parse(field(body, "dev")?)?;
            let tid = field(body, "transaction")?.parse().ok()?;
            if line.event == "jbd2_start_commit" {
                Event::JbdStartCommit { dev, tid }
            } else {
                Event::JbdEndCommit { dev, tid }
            }
        }
        "jbd2_run_stats" => Event::JbdRunStats {
            dev: Dev::parse(field(body, "dev")?)?,
            handles: field(body, "handle_count")?.parse().ok()?,
            blocks_logged: field(body, "blocks_logged")?.parse().ok()?,
        },
        "xfs_log_force" => Event::XfsLogForce {
            dev: Dev::parse(field(body, "dev")?)?,
        },
        "xlog_iclog_sync" => Event::XfsIclogSync {
            dev: Dev::parse(field(body, "dev")?)?,
        },
        "btrfs_sync_file" => Event::BtrfsSyncFile {
            fsid: uuid::Uuid::try_parse(body.split_once(": ")?.0).ok()?,
        },
        "btrfs_transaction_commit" => Event::BtrfsTransactionCommit {
            fsid: uuid::Uuid::try_parse(body.split_once(": ")?.0).ok()?,
        },
        "sched_switch" => {
            let prev_state = eq_field(body, "prev_state")?;
            Event::SchedSwitch {
                prev_pid: eq_field(body, "prev_pid")?.parse().ok()?,
                prev_d: prev_state
                    .trim_end_matches('+')
                    .split('|')
                    .any(|flag| flag == "D"),
                next_pid: eq_field(body, "next_pid")?.parse().ok()?,
            }
        }
        _ => return None,
    })
}

/// The word after `name` in `name value name value ...` text.
fn field<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let mut words = body.split_ascii_whitespace();
    while let Some(word) = words.next() {
        if word == name {
            return words.next();
        }
    }
    None
}

/// The value of `name=value` in sched_switch's text. Values of `*_comm` may hold spaces,
/// so only the numeric and state fields are looked up, by their `name=` prefix after a
/// space.
fn eq_field<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=");
    let at = body.find(&key)? + key.len();
    body[at..].split_ascii_whitespace().next()
}

/// Events a CPU's ring buffer lost: `overrun` (overwritten before read) plus `dropped
/// events` (refused while full), from `per_cpu/cpuN/stats`.
pub fn parse_cpu_stats(text: &str) -> Option<u64> {
    let mut lost = None::<u64>;
    for line in text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if matches!(name.trim(), "overrun" | "dropped events") {
            let n: u64 = value.trim().parse().ok()?;
            lost = Some(lost.unwrap_or(0) + n);
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_with_spaces_and_dashes_in_the_command_name() {
        let line = "      opt cgu.01-27207   [001] .Ns..  1001.448071: block_rq_complete: \
                    7,1 WSM () 524352 + 8 be,0,3 [0]";
        let parsed = parse_line(line).unwrap();
        assert_eq!(parsed.pid, 27207);
        assert_eq!(parsed.ts_ns, 1_001_448_071_000);
        assert_eq!(parsed.event, "block_rq_complete");
        assert!(parsed.body.starts_with("7,1 WSM"));
        let line = "    jbd2/loop1-8-27211   [001] ...1.  1001.452646: jbd2_run_stats: dev 7,1 \
                    tid 2 wait 0 request_delay 0 running 4 locked 0 flushing 0 logging 16 \
                    handle_count 4 blocks 6 blocks_logged 8";
        let parsed = parse_line(line).unwrap();
        assert_eq!(parsed.pid, 27211);
        assert_eq!(
            parse_event(&parsed),
            Some(Event::JbdRunStats {
                dev: Dev { major: 7, minor: 1 },
                handles: 4,
                blocks_logged: 8
            })
        );
    }

    #[test]
    fn nanosecond_timestamps_and_garbage() {
        let line = "dd-1 [000] ..... 5.000000001: xfs_log_force: dev 7:2 lsn 0x1 caller x";
        assert_eq!(parse_line(line).unwrap().ts_ns, 5_000_000_001);
        for bad in [
            "",
            "CPU:1 [LOST 42 EVENTS]",
            "dd-1 [000] ..... 5.0000000001: x: y",
            "no header at all: x: y",
            "dd-x [000] ..... 5.0: ev: body",
        ] {
            assert_eq!(parse_line(bad), None, "{bad}");
        }
    }

    #[test]
    fn rwbs_flush_and_fua() {
        assert!(parse_rwbs("F").flush);
        assert!(parse_rwbs("FF").flush);
        assert!(!parse_rwbs("FF").fua);
        let preflush_write = parse_rwbs("FWS");
        assert!(!preflush_write.flush && !preflush_write.fua);
        assert!(parse_rwbs("WFS").fua);
        assert!(parse_rwbs("FWFSM").fua);
        assert_eq!(parse_rwbs("WSM"), Rwbs::default());
        assert_eq!(parse_rwbs(""), Rwbs::default());
    }

    #[test]
    fn sched_switch_d_state() {
        let line = "dd-27219 [001] d..2.  1001.424510: sched_switch: prev_comm=dd prev_pid=27219 \
                    prev_prio=120 prev_state=D ==> next_comm=memfd:sealed-91 next_pid=14397 \
                    next_prio=120";
        let parsed = parse_line(line).unwrap();
        assert_eq!(
            parse_event(&parsed),
            Some(Event::SchedSwitch {
                prev_pid: 27219,
                prev_d: true,
                next_pid: 14397
            })
        );
        let line = line.replace("prev_state=D", "prev_state=R+");
        let Some(Event::SchedSwitch { prev_d, .. }) = parse_event(&parse_line(&line).unwrap())
        else {
            panic!("not parsed");
        };
        assert!(!prev_d);
    }

    #[test]
    fn cpu_stats_lost_events() {
        let text = "entries: 3645\noverrun: 7\ncommit overrun: 0\nbytes: 1\n\
                    oldest event ts:  1001.4\nnow ts:  1003.0\ndropped events: 5\nread events: 0\n";
        assert_eq!(parse_cpu_stats(text), Some(12));
        assert_eq!(parse_cpu_stats("entries: 1\n"), None);
        assert_eq!(parse_cpu_stats("overrun: x\n"), None);
    }

    #[test]
    fn dev_numbers() {
        assert_eq!(Dev::parse("7:1\n"), Some(Dev { major: 7, minor: 1 }));
        assert_eq!(Dev::parse("253,0").unwrap().kernel_dev_t(), 253 << 20);
        assert_eq!(Dev::parse("7"), None);
    }
}
