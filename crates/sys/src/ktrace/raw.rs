//! Pure parser of the binary trace: the page layout tracefs describes in
//! `events/header_page`, and the records of one ring-buffer page as a read of
//! `per_cpu/cpuN/trace_pipe_raw` returns it. Reading binary pages costs the kernel a page
//! copy where `trace_pipe` formats every event as text inside the reader's `read()`
//! (docs/PERFORMANCE.md, "Kernel tracer overhead").
//!
//! A page: a `u64` timestamp, a `local_t` commit (the data length, with the "missed
//! events" flags in its top bits), then records. A record: a 32-bit header (`type_len`:
//! 5 bits, `time_delta`: 27 bits) then, by `type_len`: 1–28 a data record of `4 × type_len`
//! bytes; 0 a data record whose length is the next `u32`; 29 padding (a discarded record,
//! or the end of the page); 30 a time extend (`delta = u32 << 27 | time_delta`); 31 an
//! absolute time stamp. Host byte order; the format is the kernel's
//! (kernel/trace/ring_buffer.c) and the one trace-cmd's kbuffer reads.

/// Where a page's fields are, from `events/header_page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset of the `commit` word.
    commit_offset: usize,
    /// Its size (8 on 64-bit kernels, 4 on 32-bit).
    commit_size: usize,
    /// Offset of the first record.
    data_offset: usize,
}

/// Parses `events/header_page`: `None` unless the timestamp is a `u64` at 0 and `commit`
/// and `data` are where a reader can find them.
pub fn parse_header_page(text: &str) -> Option<PageLayout> {
    let mut timestamp = None;
    let mut commit = None;
    let mut data = None;
    for line in text.lines() {
        let Some((name, offset, size)) = header_field(line) else {
            continue;
        };
        match name {
            "timestamp" => timestamp = Some((offset, size)),
            "commit" => commit = Some((offset, size)),
            "data" => data = Some(offset),
            _ => {}
        }
    }
    let (commit_offset, commit_size) = commit?;
    let data_offset = data?;
    (timestamp == Some((0, 8))
        && matches!(commit_size, 4 | 8)
        && commit_offset + commit_size <= data_offset)
        .then_some(PageLayout {
            commit_offset,
            commit_size,
            data_offset,
        })
}

/// `field: <type> <name>;\toffset:<n>;\tsize:<n>;...` → (name, offset, size), as
/// `header_page` and the events' `format` files write their fields (`name[10]` → `name`).
pub fn header_field(line: &str) -> Option<(&str, usize, usize)> {
    let rest = line.trim().strip_prefix("field:")?;
    let mut parts = rest.split(';').map(str::trim);
    let declaration = parts.next()?;
    let name = declaration.rsplit(' ').next()?;
    let name = name.split('[').next()?;
    let mut offset = None;
    let mut size = None;
    for part in parts {
        if let Some(n) = part.strip_prefix("offset:") {
            offset = n.parse().ok();
        } else if let Some(n) = part.strip_prefix("size:") {
            size = n.parse().ok();
        }
    }
    Some((name, offset?, size?))
}

/// Why a page could not be walked to its end (the records before the fault were given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFault {
    /// Shorter than its header, or its commit claims more than the bytes read.
    Truncated,
    /// A record's length runs past the page's data.
    BadRecord,
}

/// Type lengths with a meaning other than "data of 4 × type_len bytes".
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// `time_delta` bits in a record header.
const TS_SHIFT: u32 = 27;
/// The "missed events" flags in the top of `commit` (`RB_MISSED_EVENTS`, `_STORED`).
const COMMIT_FLAGS: u64 = 3 << 30;
/// Bits of a timestamp an absolute time stamp record does not carry (kept from the page).
const TS_MSB: u64 = 0xf8 << 56;

/// Walks the records of one page, calling `record(ts_ns, payload)` for each data record
/// (the payload starts with the event's `common_type`). Returns the records given, or the
/// fault that ended the walk early.
pub fn walk_page(
    page: &[u8],
    layout: &PageLayout,
    mut record: impl FnMut(u64, &[u8]),
) -> Result<u64, PageFault> {
    let mut ts = read_u64(page, 0).ok_or(PageFault::Truncated)?;
    let commit = match layout.commit_size {
        8 => read_u64(page, layout.commit_offset),
        _ => read_u32(page, layout.commit_offset).map(u64::from),
    }
    .ok_or(PageFault::Truncated)?;
    let len = usize::try_from(commit & !COMMIT_FLAGS).map_err(|_| PageFault::Truncated)?;
    let end = layout
        .data_offset
        .checked_add(len)
        .filter(|&end| end <= page.len())
        .ok_or(PageFault::Truncated)?;
    let mut at = layout.data_offset;
    let mut given = 0;
    while at + 4 <= end {
        let header = read_u32(page, at).ok_or(PageFault::BadRecord)?;
        let type_len = header & 0x1f;
        let delta = u64::from(header >> 5);
        let array0 = || read_u32(page, at + 4).filter(|_| at + 8 <= end);
        match type_len {
            TYPE_PADDING => {
                // A discarded record (its delta still counts, as trace-cmd reads it), or
                // with no delta and no room for a length the end of the page's data.
                let Some(length) = array0() else {
                    break;
                };
                ts = ts.wrapping_add(delta);
                at = advance(at, 4 + length as usize, end)?;
            }
            TYPE_TIME_EXTEND => {
                let high = array0().ok_or(PageFault::BadRecord)?;
                ts = ts.wrapping_add((u64::from(high) << TS_SHIFT) + delta);
                at += 8;
            }
            TYPE_TIME_STAMP => {
                let high = array0().ok_or(PageFault::BadRecord)?;
                ts = ((u64::from(high) << TS_SHIFT) | delta) | (ts & TS_MSB);
                at += 8;
            }
            0 => {
                let length = array0().ok_or(PageFault::BadRecord)? as usize;
                ts = ts.wrapping_add(delta);
                let payload = length.checked_sub(4).ok_or(PageFault::BadRecord)?;
                let next = advance(at, 8 + payload, end)?;
                record(ts, &page[at + 8..at + 8 + payload]);
                given += 1;
                at = next;
            }
            words => {
                ts = ts.wrapping_add(delta);
                let payload = 4 * words as usize;
                let next = advance(at, 4 + payload, end)?;
                record(ts, &page[at + 4..at + 4 + payload]);
                given += 1;
                at = next;
            }
        }
    }
    Ok(given)
}

/// `at + length`, rounded up to the ring buffer's 4-byte alignment, when it stays in the
/// page's data.
fn advance(at: usize, length: usize, end: usize) -> Result<usize, PageFault> {
    let next = at
        .checked_add(length.checked_add(3).ok_or(PageFault::BadRecord)? & !3)
        .ok_or(PageFault::BadRecord)?;
    if next > end {
        return Err(PageFault::BadRecord);
    }
    Ok(next)
}

/// A host-order `u32` at `at`.
pub fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// A host-order `u64` at `at`.
pub fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
        \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
        \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    fn layout() -> PageLayout {
        parse_header_page(HEADER_PAGE).unwrap()
    }

    /// A page of `records` (already encoded) starting at `ts`, with `flags` in the commit.
    fn page(ts: u64, records: &[u32], flags: u64) -> Vec<u8> {
        let mut page = ts.to_ne_bytes().to_vec();
        page.extend_from_slice(&((records.len() as u64 * 4) | flags).to_ne_bytes());
        for word in records {
            page.extend_from_slice(&word.to_ne_bytes());
        }
        page.resize(4096, 0);
        page
    }

    fn header(type_len: u32, delta: u32) -> u32 {
        (delta << 5) | type_len
    }

    /// Records seen: (timestamp, payload words).
    type Seen = Vec<(u64, Vec<u32>)>;

    fn walk(page: &[u8]) -> (Seen, Result<u64, PageFault>) {
        let mut seen = Vec::new();
        let result = walk_page(page, &layout(), |ts, payload| {
            let words = payload
                .chunks(4)
                .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
                .collect();
            seen.push((ts, words));
        });
        (seen, result)
    }

    #[test]
    fn header_page_of_this_machine_and_refusals() {
        assert_eq!(
            layout(),
            PageLayout {
                commit_offset: 8,
                commit_size: 8,
                data_offset: 16
            }
        );
        assert_eq!(parse_header_page(""), None);
        let moved = HEADER_PAGE.replace("timestamp;\toffset:0", "timestamp;\toffset:4");
        assert_eq!(parse_header_page(&moved), None);
        let overlapping = HEADER_PAGE.replace("data;\toffset:16", "data;\toffset:12");
        assert_eq!(parse_header_page(&overlapping), None);
    }

    #[test]
    fn data_records_deltas_extends_and_padding() {
        let records = [
            header(2, 5),
            11,
            12, // 8 bytes of data at +5
            header(TYPE_TIME_EXTEND, 3),
            1, // + (1 << 27) + 3
            header(0, 7),
            12, // length word: 8 bytes of payload, at +7
            21,
            22,
            header(TYPE_PADDING, 2),
            8, // a discarded record: length word + 4 bytes, +2
            99,
            header(1, 1),
            31,
        ];
        let (seen, result) = walk(&page(1000, &records, 0));
        assert_eq!(result, Ok(3));
        let extended = 1005 + (1 << 27) + 3 + 7;
        assert_eq!(
            seen,
            vec![
                (1005, vec![11, 12]),
                (extended, vec![21, 22]),
                (extended + 3, vec![31])
            ]
        );
    }

    #[test]
    fn absolute_stamps_missed_flags_and_the_end_of_data() {
        let records = [header(TYPE_TIME_STAMP, 9), 2, header(1, 1), 5];
        let top = 3u64 << 59;
        let (seen, result) = walk(&page(top | 77, &records, 1 << 31));
        assert_eq!(result, Ok(1));
        assert_eq!(seen, vec![((top | (2 << 27) | 9) + 1, vec![5])]);
        // A padding header with no room for a length ends the data.
        let (seen, result) = walk(&page(0, &[header(1, 1), 5, header(TYPE_PADDING, 0)], 0));
        assert_eq!((seen.len(), result), (1, Ok(1)));
    }

    #[test]
    fn hostile_pages_end_the_walk_without_panicking() {
        // A commit longer than the bytes read.
        let mut short = page(0, &[header(1, 1), 5], 0);
        short.truncate(20);
        assert_eq!(walk(&short).1, Err(PageFault::Truncated));
        assert_eq!(walk(&[0u8; 10]).1, Err(PageFault::Truncated));
        // A record longer than the data.
        let (seen, result) = walk(&page(0, &[header(1, 1), 5, header(28, 1), 6], 0));
        assert_eq!((seen.len(), result), (1, Err(PageFault::BadRecord)));
        // A zero length word.
        assert_eq!(
            walk(&page(0, &[header(0, 1), 0, 0], 0)).1,
            Err(PageFault::BadRecord)
        );
        // Every header word, at every position: never a panic.
        for type_len in 0..32 {
            for word in [0, 1, 4, 0xffff_ffff] {
                let _ = walk(&page(u64::MAX, &[header(type_len, 0x7ff_ffff), word, 0], 0));
            }
        }
    }
}
