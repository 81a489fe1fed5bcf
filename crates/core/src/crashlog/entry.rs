//! One entry of a crash-test log and its encoding: 48 bytes, little-endian, checksummed,
//! so a log written by a recorder that was killed reads up to its last whole entry.

/// Bytes of one encoded entry.
pub const ENTRY_BYTES: usize = 48;

const MAGIC: [u8; 4] = *b"FCL1";

/// What the device (or the workload) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `len` bytes written at `offset`; the bytes are at `data_at` of the data file.
    Write {
        /// Byte offset on the device.
        offset: u64,
        /// Bytes written.
        len: u64,
        /// Where the bytes are in the data file.
        data_at: u64,
    },
    /// A cache flush: every write before it is on the medium.
    Flush,
    /// A discard (fallocate punch-hole): the range reads as zeroes.
    Punch {
        /// Byte offset on the device.
        offset: u64,
        /// Bytes discarded.
        len: u64,
    },
    /// A zeroing (fallocate zero-range).
    Zero {
        /// Byte offset on the device.
        offset: u64,
        /// Bytes zeroed.
        len: u64,
    },
    /// The workload's acknowledgement: it treated a record as durable here. Its `len` bytes
    /// (which record) are at `data_at` of the data file.
    Mark {
        /// Bytes of the mark.
        len: u64,
        /// Where the mark's bytes are in the data file.
        data_at: u64,
    },
}

impl Op {
    /// Whether it changes the device's contents (a write, discard or zeroing): what a power
    /// cut may lose when no flush followed it.
    pub fn changes_medium(&self) -> bool {
        matches!(self, Op::Write { .. } | Op::Punch { .. } | Op::Zero { .. })
    }
}

/// One entry: its place in the log and what happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Sequence number, from 0, one more each entry.
    pub seq: u64,
    /// What happened.
    pub op: Op,
}

/// Why a log cannot be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// An entry in the middle of the log is not one (a later entry is whole): the log was
    /// changed, not merely cut short.
    #[error("entry {index} of the log is damaged")]
    Damaged {
        /// Its index.
        index: usize,
    },
    /// Entries out of sequence.
    #[error("entry {index} has sequence number {seq}, expected {index}")]
    OutOfSequence {
        /// Its index.
        index: usize,
        /// Its sequence number.
        seq: u64,
    },
}

impl Entry {
    /// The entry's 48 bytes.
    pub fn encode(&self) -> [u8; ENTRY_BYTES] {
        let (kind, a, b, c) = match self.op {
            Op::Write {
                offset,
                len,
                data_at,
            } => (1u8, offset, len, data_at),
            Op::Flush => (2, 0, 0, 0),
            Op::Punch { offset, len } => (3, offset, len, 0),
            Op::Zero { offset, len } => (4, offset, len, 0),
            Op::Mark { len, data_at } => (5, 0, len, data_at),
        };
        let mut out = [0u8; ENTRY_BYTES];
        out[0..4].copy_from_slice(&MAGIC);
        out[4] = kind;
        out[8..16].copy_from_slice(&self.seq.to_le_bytes());
        out[16..24].copy_from_slice(&a.to_le_bytes());
        out[24..32].copy_from_slice(&b.to_le_bytes());
        out[32..40].copy_from_slice(&c.to_le_bytes());
        let sum = checksum(&out[0..40]);
        out[40..48].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// The entry of 48 bytes, or `None` when they are not one (a torn or foreign record).
    pub fn decode(bytes: &[u8]) -> Option<Entry> {
        if bytes.len() != ENTRY_BYTES || bytes[0..4] != MAGIC {
            return None;
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(w)
        };
        if word(40) != checksum(&bytes[0..40]) || bytes[5..8] != [0, 0, 0] {
            return None;
        }
        let (a, b, c) = (word(16), word(24), word(32));
        let op = match bytes[4] {
            1 => Op::Write {
                offset: a,
                len: b,
                data_at: c,
            },
            2 => Op::Flush,
            3 => Op::Punch { offset: a, len: b },
            4 => Op::Zero { offset: a, len: b },
            5 => Op::Mark { len: b, data_at: c },
            _ => return None,
        };
        Some(Entry { seq: word(8), op })
    }
}

/// FNV-1a, 64 bits: enough to tell a torn or foreign record from a whole one (not a defence
/// against someone forging a log: the log lives in root's 0700 state directory).
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The entries of a log file's bytes, in order. A log cut short mid-entry (its recorder
/// killed while writing) reads up to its last whole entry; anything else that is not a whole
/// entry in sequence — a damaged entry before the last one, more than one entry's worth of
/// bytes after the last whole one (a log padded with zeroes), entries out of sequence — is an
/// error. Memory: the entries decoded, nothing of the bytes copied.
pub fn read_entries(bytes: &[u8]) -> Result<Vec<Entry>, EntryError> {
    let mut out = Vec::new();
    for (index, chunk) in bytes.chunks(ENTRY_BYTES).enumerate() {
        match Entry::decode(chunk) {
            Some(e) if e.seq == index as u64 => out.push(e),
            Some(e) => return Err(EntryError::OutOfSequence { index, seq: e.seq }),
            None => {
                // Only the last piece may be torn: a cut-short log.
                if (index + 1) * ENTRY_BYTES < bytes.len() {
                    return Err(EntryError::Damaged { index });
                }
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(ops: &[Op]) -> Vec<u8> {
        ops.iter()
            .enumerate()
            .flat_map(|(i, op)| {
                Entry {
                    seq: i as u64,
                    op: *op,
                }
                .encode()
            })
            .collect()
    }

    const OPS: [Op; 5] = [
        Op::Write {
            offset: 4096,
            len: 512,
            data_at: 0,
        },
        Op::Flush,
        Op::Punch {
            offset: 0,
            len: 1 << 20,
        },
        Op::Zero {
            offset: 8192,
            len: 4096,
        },
        Op::Mark {
            len: 32,
            data_at: 512,
        },
    ];

    #[test]
    fn every_op_round_trips() {
        let bytes = log(&OPS);
        let back = read_entries(&bytes).unwrap();
        assert_eq!(back.iter().map(|e| e.op).collect::<Vec<_>>(), OPS);
        assert_eq!(back[4].seq, 4);
    }

    #[test]
    fn a_log_cut_mid_entry_reads_to_its_last_whole_entry() {
        let bytes = log(&OPS);
        for cut in [
            bytes.len() - 1,
            bytes.len() - ENTRY_BYTES + 3,
            3 * ENTRY_BYTES,
        ] {
            let back = read_entries(&bytes[..cut]).unwrap();
            assert_eq!(back.len(), cut / ENTRY_BYTES, "cut at {cut}");
        }
        assert_eq!(read_entries(&[]).unwrap(), vec![]);
    }

    #[test]
    fn damage_and_disorder_are_refused_not_read_past() {
        let mut bytes = log(&OPS);
        bytes[ENTRY_BYTES + 20] ^= 1; // entry 1 damaged, entries 2.. whole
        assert_eq!(read_entries(&bytes), Err(EntryError::Damaged { index: 1 }));
        let mut swapped = log(&OPS);
        swapped.swap(8, ENTRY_BYTES + 8); // sequence numbers 0 and 1 exchanged...
        // ...which breaks both checksums: damage, not disorder.
        assert!(read_entries(&swapped).is_err());
        let mut twice = log(&OPS[..2]);
        twice.extend_from_slice(
            &Entry {
                seq: 7,
                op: Op::Flush,
            }
            .encode(),
        );
        assert_eq!(
            read_entries(&twice),
            Err(EntryError::OutOfSequence { index: 2, seq: 7 })
        );
        // Zeroes after the last entry: padding is damage, only a last piece may be torn.
        let mut padded = log(&OPS);
        padded.extend_from_slice(&[0u8; 3 * ENTRY_BYTES]);
        assert_eq!(read_entries(&padded), Err(EntryError::Damaged { index: 5 }));
        let mut torn = log(&OPS);
        torn.extend_from_slice(&[0u8; ENTRY_BYTES]);
        assert_eq!(
            read_entries(&torn).unwrap().len(),
            OPS.len(),
            "one torn piece"
        );
    }

    #[test]
    fn only_writes_discards_and_zeroings_change_the_medium() {
        let changes: Vec<bool> = OPS.iter().map(Op::changes_medium).collect();
        assert_eq!(changes, [true, false, true, true, false]);
    }
}
