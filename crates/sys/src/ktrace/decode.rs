//! Pure decoding of binary trace records: each event's `format` file (its id and field
//! offsets on the running kernel) parsed, and a record's payload turned into the same
//! [`Event`] the text parser gives. Offsets are never assumed: a field that is missing or
//! has an unexpected size makes the event undecodable, and the reader falls back to text.

use std::collections::HashMap;

use super::parse::{Dev, Event, parse_rwbs};
use super::raw::{PageFault, PageLayout, header_field, read_u32, read_u64, walk_page};

/// One field of an event record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Offset in the record (from `common_type`).
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// An event's `format` file: its name, id and fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    /// `block_rq_issue`...
    pub name: String,
    /// The `common_type` its records carry.
    pub id: u16,
    /// Fields by name (`rwbs` for `char rwbs[10]`).
    pub fields: HashMap<String, Field>,
}

/// Parses a `format` file (`name:`, `ID:`, then `field:<decl>;\toffset:<n>;\tsize:<n>;`).
pub fn parse_format(text: &str) -> Option<Format> {
    let mut name = None;
    let mut id = None;
    let mut fields = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(n) = line.strip_prefix("name:") {
            name = Some(n.trim().to_string());
        } else if let Some(n) = line.strip_prefix("ID:") {
            id = n.trim().parse().ok();
        } else if line.starts_with("field:") {
            let (field_name, offset, size) = header_field(line)?;
            fields.insert(field_name.to_string(), Field { offset, size });
        }
    }
    Some(Format {
        name: name?,
        id: id?,
        fields,
    })
}

/// How to turn one event's record into an [`Event`].
#[derive(Clone, Copy, Debug)]
enum Recipe {
    RqIssue {
        dev: Field,
        rwbs: Field,
    },
    RqComplete {
        dev: Field,
        rwbs: Field,
    },
    JbdStart {
        dev: Field,
        tid: Field,
    },
    JbdEnd {
        dev: Field,
        tid: Field,
    },
    JbdRunStats {
        dev: Field,
        handles: Field,
        logged: Field,
    },
    XfsLogForce {
        dev: Field,
    },
    XfsIclogSync {
        dev: Field,
    },
    BtrfsSyncFile {
        fsid: Field,
    },
    BtrfsCommit {
        fsid: Field,
    },
    SchedSwitch {
        prev_pid: Field,
        prev_state: Field,
        next_pid: Field,
    },
}

/// Decodes records by their `common_type`, for the events it was built from.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    recipes: HashMap<u16, Recipe>,
}

impl Decoder {
    /// A decoder for `formats`; `Err` names the first event fsynclab cannot decode on this
    /// kernel (unknown to it, or a field missing or of an unexpected size).
    pub fn new(formats: &[Format]) -> Result<Decoder, String> {
        let mut recipes = HashMap::new();
        for format in formats {
            let recipe = recipe(format).ok_or_else(|| {
                format!(
                    "the binary layout of {} is not one fsynclab reads",
                    format.name
                )
            })?;
            recipes.insert(format.id, recipe);
        }
        Ok(Decoder { recipes })
    }

    /// The event in `record` (a payload from [`super::raw::walk_page`]), `None` when its
    /// type is not one of the decoder's or the record is too short.
    pub fn decode(&self, record: &[u8]) -> Option<Event> {
        let id = u16::from_ne_bytes(record.get(..2)?.try_into().ok()?);
        let dev = |f: Field| read_u32(record, f.offset).map(dev_of);
        let int = |f: Field| match f.size {
            8 => read_u64(record, f.offset),
            _ => read_u32(record, f.offset).map(u64::from),
        };
        let rwbs = |f: Field| {
            let bytes = record.get(f.offset..f.offset.checked_add(f.size)?)?;
            let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Some(parse_rwbs(std::str::from_utf8(&bytes[..len]).ok()?))
        };
        let fsid = |f: Field| {
            let bytes: [u8; 16] = record
                .get(f.offset..f.offset.checked_add(16)?)?
                .try_into()
                .ok()?;
            Some(uuid::Uuid::from_bytes(bytes))
        };
        Some(match *self.recipes.get(&id)? {
            Recipe::RqIssue { dev: d, rwbs: r } => Event::RqIssue {
                dev: dev(d)?,
                rwbs: rwbs(r)?,
            },
            Recipe::RqComplete { dev: d, rwbs: r } => Event::RqComplete {
                dev: dev(d)?,
                rwbs: rwbs(r)?,
            },
            Recipe::JbdStart { dev: d, tid } => Event::JbdStartCommit {
                dev: dev(d)?,
                tid: read_u32(record, tid.offset)?,
            },
            Recipe::JbdEnd { dev: d, tid } => Event::JbdEndCommit {
                dev: dev(d)?,
                tid: read_u32(record, tid.offset)?,
            },
            Recipe::JbdRunStats {
                dev: d,
                handles,
                logged,
            } => Event::JbdRunStats {
                dev: dev(d)?,
                handles: int(handles)?,
                blocks_logged: int(logged)?,
            },
            Recipe::XfsLogForce { dev: d } => Event::XfsLogForce { dev: dev(d)? },
            Recipe::XfsIclogSync { dev: d } => Event::XfsIclogSync { dev: dev(d)? },
            Recipe::BtrfsSyncFile { fsid: f } => Event::BtrfsSyncFile { fsid: fsid(f)? },
            Recipe::BtrfsCommit { fsid: f } => Event::BtrfsTransactionCommit { fsid: fsid(f)? },
            Recipe::SchedSwitch {
                prev_pid,
                prev_state,
                next_pid,
            } => Event::SchedSwitch {
                prev_pid: read_u32(record, prev_pid.offset)?,
                prev_d: int(prev_state)? & TASK_REPORT & TASK_UNINTERRUPTIBLE != 0,
                next_pid: read_u32(record, next_pid.offset)?,
            },
        })
    }
}

/// Decodes the records of one page into `out` as `(timestamp, event)`; returns the newest
/// timestamp seen (0 for none) and the records that did not decode (unknown type, short
/// record, or a fault that ended the page early: counted as one).
pub fn decode_page(
    page: &[u8],
    layout: &PageLayout,
    decoder: &Decoder,
    out: &mut Vec<(u64, Event)>,
) -> (u64, u64) {
    let mut newest = 0;
    let mut undecoded = 0;
    let walked: Result<u64, PageFault> = walk_page(page, layout, |ts, record| {
        newest = newest.max(ts);
        match decoder.decode(record) {
            Some(event) => out.push((ts, event)),
            None => undecoded += 1,
        }
    });
    (newest, undecoded + u64::from(walked.is_err()))
}

/// The task-state bits `sched_switch` reports (below `TASK_REPORT_MAX`, the "preempted"
/// mark), as its print format masks them, and the `D` bit among them.
const TASK_REPORT: u64 = 0xff;
const TASK_UNINTERRUPTIBLE: u64 = 0x2;

/// The kernel's `dev_t` (major << 20 | minor).
fn dev_of(raw: u32) -> Dev {
    Dev {
        major: raw >> 20,
        minor: raw & ((1 << 20) - 1),
    }
}

/// The recipe of a known event whose fields have the sizes fsynclab reads.
fn recipe(format: &Format) -> Option<Recipe> {
    let field = |name: &str, sizes: &[usize]| {
        let f = *format.fields.get(name)?;
        sizes.contains(&f.size).then_some(f)
    };
    let dev = || field("dev", &[4]);
    Some(match format.name.as_str() {
        "block_rq_issue" => Recipe::RqIssue {
            dev: dev()?,
            rwbs: field("rwbs", &[8, 9, 10, 12, 16])?,
        },
        "block_rq_complete" => Recipe::RqComplete {
            dev: dev()?,
            rwbs: field("rwbs", &[8, 9, 10, 12, 16])?,
        },
        "jbd2_start_commit" => Recipe::JbdStart {
            dev: dev()?,
            tid: field("transaction", &[4])?,
        },
        "jbd2_end_commit" => Recipe::JbdEnd {
            dev: dev()?,
            tid: field("transaction", &[4])?,
        },
        "jbd2_run_stats" => Recipe::JbdRunStats {
            dev: dev()?,
            handles: field("handle_count", &[4, 8])?,
            logged: field("blocks_logged", &[4, 8])?,
        },
        "xfs_log_force" => Recipe::XfsLogForce { dev: dev()? },
        "xlog_iclog_sync" => Recipe::XfsIclogSync { dev: dev()? },
        "btrfs_sync_file" => Recipe::BtrfsSyncFile {
            fsid: field("fsid", &[16])?,
        },
        "btrfs_transaction_commit" => Recipe::BtrfsCommit {
            fsid: field("fsid", &[16])?,
        },
        "sched_switch" => Recipe::SchedSwitch {
            prev_pid: field("prev_pid", &[4])?,
            prev_state: field("prev_state", &[4, 8])?,
            next_pid: field("next_pid", &[4])?,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHED_SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
        \tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
        \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
        \tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
        \tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
        print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

    fn switch_record(prev_pid: u32, prev_state: u64, next_pid: u32) -> Vec<u8> {
        let mut record = vec![0u8; 64];
        record[..2].copy_from_slice(&372u16.to_ne_bytes());
        record[24..28].copy_from_slice(&prev_pid.to_ne_bytes());
        record[32..40].copy_from_slice(&prev_state.to_ne_bytes());
        record[56..60].copy_from_slice(&next_pid.to_ne_bytes());
        record
    }

    #[test]
    fn sched_switch_format_and_records() {
        let format = parse_format(SCHED_SWITCH).unwrap();
        assert_eq!(format.id, 372);
        assert_eq!(
            format.fields["prev_comm"],
            Field {
                offset: 8,
                size: 16
            }
        );
        let decoder = Decoder::new(&[format]).unwrap();
        assert_eq!(
            decoder.decode(&switch_record(7, 2, 9)),
            Some(Event::SchedSwitch {
                prev_pid: 7,
                prev_d: true,
                next_pid: 9
            })
        );
        // Preempted (TASK_REPORT_MAX, printed `R+`) and S are not D.
        for state in [0x100, 0x1, 0] {
            let Some(Event::SchedSwitch { prev_d, .. }) =
                decoder.decode(&switch_record(7, state, 9))
            else {
                panic!("not decoded");
            };
            assert!(!prev_d, "{state:#x}");
        }
        // Unknown type, short record.
        let mut other = switch_record(7, 2, 9);
        other[0] = 1;
        assert_eq!(decoder.decode(&other), None);
        assert_eq!(decoder.decode(&switch_record(7, 2, 9)[..50]), None);
        assert_eq!(decoder.decode(&[]), None);
    }

    #[test]
    fn unknown_or_reshaped_events_are_refused() {
        let renamed = SCHED_SWITCH.replace("name: sched_switch", "name: sched_wakeup");
        let err = Decoder::new(&[parse_format(&renamed).unwrap()]).unwrap_err();
        assert!(err.contains("sched_wakeup"), "{err}");
        let resized = SCHED_SWITCH.replace(
            "prev_pid;\toffset:24;\tsize:4",
            "prev_pid;\toffset:24;\tsize:2",
        );
        assert!(Decoder::new(&[parse_format(&resized).unwrap()]).is_err());
        assert_eq!(parse_format("ID: 3\n"), None);
        assert_eq!(parse_format("name: x\nID: nope\n"), None);
    }
}
