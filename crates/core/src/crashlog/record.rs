//! What a crash-testing workload writes and acknowledges: each record carries who wrote it,
//! when and where, and a checksum ([`Record`]); each acknowledgement says which record is
//! durable and where it lies ([`Ack`]). The checker reads the place an acknowledgement names
//! in a crash state's filesystem and tells a lost, torn or stale record from a fine one
//! ([`classify`]).

/// Bytes of a record's header; a record is at least this long.
pub const RECORD_HEADER: usize = 64;
/// Bytes of an encoded acknowledgement.
pub const ACK_BYTES: usize = 56;

/// What a crash-testing workload writes to the marks file as it starts: power cuts are
/// planned from there (a cut while the filesystem was being made is no state of it).
pub const BEGIN_MARK: [u8; 8] = *b"FSLBEGIN";
/// What a crash-testing workload writes to the marks file when it has ended: on a lasting
/// recording device (`run --crash-check`) its power cuts are planned up to there.
pub const END_MARK: [u8; 8] = *b"FSLEND00";

/// Mark `mark` ([`BEGIN_MARK`] or [`END_MARK`]) of run `run`: the mark, then the run's
/// number (little-endian).
pub fn run_mark(mark: [u8; 8], run: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mark);
    out[8..].copy_from_slice(&run.to_le_bytes());
    out
}

/// Whether the marks file's bytes `bytes` are mark `mark` — of run `run` when one is asked;
/// without one, of any run (a log kept before marks named their run has the bare mark).
pub fn is_mark(bytes: &[u8], mark: [u8; 8], run: Option<u64>) -> bool {
    match run {
        Some(run) => bytes == run_mark(mark, run),
        None => bytes.len() == 8 && bytes == mark || bytes.len() == 16 && bytes[..8] == mark,
    }
}

const RECORD_MAGIC: [u8; 8] = *b"FSLREC01";
const ACK_MAGIC: [u8; 8] = *b"FSLACK01";

/// A record's identity: the run, the writer and its sequence number, and the version of its
/// place (how many records were written there before it, by this writer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordId {
    /// The run (a random number per crash test).
    pub run: u64,
    /// The writer.
    pub thread: u32,
    /// The writer's record number, from 0.
    pub seq: u64,
    /// Records written before it at the same place (0: the first).
    pub version: u64,
}

/// One acknowledged record: its identity and where it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ack {
    /// The record.
    pub id: RecordId,
    /// Its file (an index the workload and the checker agree on).
    pub file: u32,
    /// Its offset in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u32,
}

/// What the checker found at an acknowledged record's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The record, whole.
    Fine,
    /// A later record of the same place, whole: this one was rewritten after it was
    /// acknowledged (not a loss).
    Superseded,
    /// Nothing of it: zeroes, another run's bytes or no record header (or the file is gone
    /// or too short).
    Lost,
    /// Its header, but the checksum fails: partly written.
    Torn,
    /// An older record of the same place, whole: the acknowledged version did not survive.
    Stale,
}

fn fnv(parts: &[&[u8]]) -> u64 {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

fn half(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Fills `buf` with the record `id`: its header, a payload drawn from its identity, and the
/// checksum over both. False (and `buf` untouched) when `buf` is shorter than a header
/// ([`RECORD_HEADER`]) or longer than 4 GiB.
pub fn fill_record(buf: &mut [u8], id: &RecordId) -> bool {
    if buf.len() < RECORD_HEADER || u32::try_from(buf.len()).is_err() {
        return false;
    }
    buf[0..8].copy_from_slice(&RECORD_MAGIC);
    buf[8..16].copy_from_slice(&id.run.to_le_bytes());
    buf[16..20].copy_from_slice(&id.thread.to_le_bytes());
    let len = buf.len() as u32;
    buf[20..24].copy_from_slice(&len.to_le_bytes());
    buf[24..32].copy_from_slice(&id.seq.to_le_bytes());
    buf[32..40].copy_from_slice(&id.version.to_le_bytes());
    buf[40..56].fill(0);
    let mut x = id.run ^ (u64::from(id.thread) << 40) ^ id.seq.rotate_left(17) ^ id.version;
    for chunk in buf[RECORD_HEADER..].chunks_mut(8) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    let sum = fnv(&[&buf[0..56], &buf[RECORD_HEADER..]]);
    buf[56..64].copy_from_slice(&sum.to_le_bytes());
    true
}

/// The record in `bytes` (its header says its length, which must be `bytes.len()`), or why
/// not: `Err(true)` when the header is there but the checksum fails, `Err(false)` when there
/// is no record.
fn read_record(bytes: &[u8]) -> Result<RecordId, bool> {
    if bytes.len() < RECORD_HEADER || bytes[0..8] != RECORD_MAGIC {
        return Err(false);
    }
    if half(bytes, 20) as usize != bytes.len()
        || word(bytes, 56) != fnv(&[&bytes[0..56], &bytes[RECORD_HEADER..]])
    {
        return Err(true);
    }
    Ok(RecordId {
        run: word(bytes, 8),
        thread: half(bytes, 16),
        seq: word(bytes, 24),
        version: word(bytes, 32),
    })
}

/// What `bytes`, read at `ack`'s place (`None`: the file is missing or shorter), hold of
/// the acknowledged record.
pub fn classify(ack: &Ack, bytes: Option<&[u8]>) -> Found {
    let Some(bytes) = bytes.filter(|b| b.len() == ack.len as usize) else {
        return Found::Lost;
    };
    match read_record(bytes) {
        Err(true) => Found::Torn,
        Err(false) => Found::Lost,
        Ok(id) if id.run != ack.id.run => Found::Lost,
        Ok(id) if id == ack.id => Found::Fine,
        // A place may be rewritten by another writer (grouplog's shared log): the version
        // orders them, whoever wrote them.
        Ok(id) if id.version > ack.id.version => Found::Superseded,
        Ok(id) if id.version < ack.id.version => Found::Stale,
        // The same version with another sequence number: not this writer's record here.
        Ok(_) => Found::Lost,
    }
}

impl Ack {
    /// The acknowledgement's bytes, as the workload writes them to the marks file.
    pub fn encode(&self) -> [u8; ACK_BYTES] {
        let mut out = [0u8; ACK_BYTES];
        out[0..8].copy_from_slice(&ACK_MAGIC);
        out[8..16].copy_from_slice(&self.id.run.to_le_bytes());
        out[16..20].copy_from_slice(&self.id.thread.to_le_bytes());
        out[20..24].copy_from_slice(&self.file.to_le_bytes());
        out[24..32].copy_from_slice(&self.id.seq.to_le_bytes());
        out[32..40].copy_from_slice(&self.id.version.to_le_bytes());
        out[40..48].copy_from_slice(&self.offset.to_le_bytes());
        out[48..52].copy_from_slice(&self.len.to_le_bytes());
        let sum = fnv(&[&out[0..52]]) as u32;
        out[52..56].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// The acknowledgement in `bytes`, or `None` when they are not one.
    pub fn decode(bytes: &[u8]) -> Option<Ack> {
        if bytes.len() != ACK_BYTES
            || bytes[0..8] != ACK_MAGIC
            || half(bytes, 52) != fnv(&[&bytes[0..52]]) as u32
        {
            return None;
        }
        Some(Ack {
            id: RecordId {
                run: word(bytes, 8),
                thread: half(bytes, 16),
                seq: word(bytes, 24),
                version: word(bytes, 32),
            },
            file: half(bytes, 20),
            offset: word(bytes, 40),
            len: half(bytes, 48),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(version: u64) -> (Ack, Vec<u8>) {
        let id = RecordId {
            run: 0xfeed,
            thread: 3,
            seq: 41 + version,
            version,
        };
        let mut buf = vec![0u8; 4096];
        assert!(fill_record(&mut buf, &id));
        assert!(!fill_record(&mut [0u8; 63], &id), "shorter than a header");
        let a = Ack {
            id,
            file: 3,
            offset: 8192,
            len: 4096,
        };
        (a, buf)
    }

    #[test]
    fn marks_name_their_run_and_old_bare_marks_still_match() {
        let m = run_mark(BEGIN_MARK, 7);
        assert!(is_mark(&m, BEGIN_MARK, Some(7)));
        assert!(!is_mark(&m, BEGIN_MARK, Some(8)));
        assert!(!is_mark(&m, END_MARK, Some(7)));
        assert!(is_mark(&m, BEGIN_MARK, None));
        assert!(is_mark(&BEGIN_MARK, BEGIN_MARK, None));
        assert!(!is_mark(&BEGIN_MARK, BEGIN_MARK, Some(7)));
        assert!(!is_mark(&m[..12], BEGIN_MARK, None));
        let ack = ack(0).0.encode();
        assert!(!is_mark(&ack, BEGIN_MARK, None) && Ack::decode(&m).is_none());
    }

    #[test]
    fn an_acknowledgement_round_trips_and_refuses_damage() {
        let (a, _) = ack(2);
        assert_eq!(Ack::decode(&a.encode()), Some(a));
        let mut bad = a.encode();
        bad[30] ^= 4;
        assert_eq!(Ack::decode(&bad), None);
        assert_eq!(Ack::decode(&a.encode()[..40]), None);
    }

    #[test]
    fn the_checker_tells_fine_lost_torn_stale_and_superseded_apart() {
        let (a, whole) = ack(1);
        assert_eq!(classify(&a, Some(&whole)), Found::Fine);
        assert_eq!(classify(&a, None), Found::Lost, "no file");
        assert_eq!(classify(&a, Some(&whole[..100])), Found::Lost, "short");
        assert_eq!(classify(&a, Some(&[0u8; 4096])), Found::Lost, "zeroes");
        let mut flipped = whole.clone();
        flipped[3000] ^= 0x10;
        assert_eq!(
            classify(&a, Some(&flipped)),
            Found::Torn,
            "one byte flipped"
        );
        let mut half_written = whole.clone();
        half_written[2048..].fill(0);
        assert_eq!(classify(&a, Some(&half_written)), Found::Torn);
        let (_, older) = ack(0);
        assert_eq!(classify(&a, Some(&older)), Found::Stale);
        let (_, newer) = ack(2);
        assert_eq!(classify(&a, Some(&newer)), Found::Superseded);
        let mut other_run = whole.clone();
        fill_record(&mut other_run, &RecordId { run: 1, ..a.id });
        assert_eq!(classify(&a, Some(&other_run)), Found::Lost);
        // A shared place: another writer's newer version supersedes, its older one is stale,
        // its record of the same version is not this one.
        let by = |thread, version, seq| {
            let mut b = whole.clone();
            let id = RecordId {
                thread,
                version,
                seq,
                ..a.id
            };
            fill_record(&mut b, &id);
            b
        };
        let v = a.id.version;
        assert_eq!(classify(&a, Some(&by(5, v + 1, 99))), Found::Superseded);
        assert_eq!(classify(&a, Some(&by(5, v - 1, 0))), Found::Stale);
        assert_eq!(classify(&a, Some(&by(5, v, a.id.seq))), Found::Lost);
    }

    #[test]
    fn records_of_different_ids_differ_in_their_payload() {
        let (_, one) = ack(0);
        let (_, two) = ack(1);
        assert_ne!(one[RECORD_HEADER..], two[RECORD_HEADER..]);
    }
}
