//! `/sys/block/<dev>/stat`: the block layer's I/O counters (Documentation/block/stat.rst).
//! Field 16 counts flush requests completed: divided by the fsyncs issued it gives the
//! group-commit ratio, which stays stable while IOPS swing under CPU noise.

use super::{BlockStat, ParseError};

/// Fewest fields a stat file has (kernels before 4.18).
pub const MIN_STAT_FIELDS: usize = 11;

fn parse_error(what: &str, detail: impl Into<String>) -> ParseError {
    ParseError {
        what: what.to_string(),
        detail: detail.into(),
    }
}

/// The counters of a stat file split into `fields`; `what` names the file in errors.
pub fn parse_fields(what: &str, fields: &[&str]) -> Result<BlockStat, ParseError> {
    if fields.len() < MIN_STAT_FIELDS {
        return Err(parse_error(
            what,
            format!(
                "expected 11, 15 or 17 fields, found {} ({:?})",
                fields.len(),
                fields.join(" ")
            ),
        ));
    }
    let mut values = Vec::with_capacity(fields.len());
    for (index, field) in fields.iter().enumerate() {
        let value: u64 = field.parse().map_err(|_| {
            parse_error(
                what,
                format!("field {} {field:?} is not a counter", index + 1),
            )
        })?;
        values.push(value);
    }
    let optional = |index: usize| values.get(index).copied();
    Ok(BlockStat {
        read_ios: values[0],
        read_merges: values[1],
        read_sectors: values[2],
        read_ticks_ms: values[3],
        write_ios: values[4],
        write_merges: values[5],
        write_sectors: values[6],
        write_ticks_ms: values[7],
        in_flight: values[8],
        io_ticks_ms: values[9],
        time_in_queue_ms: values[10],
        discard_ios: optional(11),
        discard_merges: optional(12),
        discard_sectors: optional(13),
        discard_ticks_ms: optional(14),
        flush_ios: optional(15),
        flush_ticks_ms: optional(16),
    })
}

fn option_delta(after: Option<u64>, before: Option<u64>) -> Option<u64> {
    Some(after?.saturating_sub(before?))
}

impl BlockStat {
    /// Parses the content of a stat file: 11, 15 or 17 whitespace-separated counters (older
    /// and newer kernels). Fewer than 11 is an error naming the count; fields beyond 17, which
    /// a future kernel may add, are ignored.
    pub fn parse(text: &str) -> Result<BlockStat, ParseError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        parse_fields("block stat", &fields)
    }

    /// The counters accumulated between `before` and `self` (a later reading of the same
    /// device). Counters that went backwards (device re-created) give 0; `in_flight` is a
    /// gauge and keeps the later value; optional fields are `Some` only when both readings
    /// have them.
    pub fn delta_since(&self, before: &BlockStat) -> BlockStat {
        BlockStat {
            read_ios: self.read_ios.saturating_sub(before.read_ios),
            read_merges: self.read_merges.saturating_sub(before.read_merges),
            read_sectors: self.read_sectors.saturating_sub(before.read_sectors),
            read_ticks_ms: self.read_ticks_ms.saturating_sub(before.read_ticks_ms),
            write_ios: self.write_ios.saturating_sub(before.write_ios),
            write_merges: self.write_merges.saturating_sub(before.write_merges),
            write_sectors: self.write_sectors.saturating_sub(before.write_sectors),
            write_ticks_ms: self.write_ticks_ms.saturating_sub(before.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(before.io_ticks_ms),
            time_in_queue_ms: self
                .time_in_queue_ms
                .saturating_sub(before.time_in_queue_ms),
            discard_ios: option_delta(self.discard_ios, before.discard_ios),
            discard_merges: option_delta(self.discard_merges, before.discard_merges),
            discard_sectors: option_delta(self.discard_sectors, before.discard_sectors),
            discard_ticks_ms: option_delta(self.discard_ticks_ms, before.discard_ticks_ms),
            flush_ios: option_delta(self.flush_ios, before.flush_ios),
            flush_ticks_ms: option_delta(self.flush_ticks_ms, before.flush_ticks_ms),
        }
    }
}

/// Parses a `name counters...` line, as saved by `for d in loop0 vda; do echo $d
/// $(cat /sys/block/$d/stat); done` (the reference `*.blockstat-before-after.txt` files).
pub fn parse_named_stat_line(line: &str) -> Result<(String, BlockStat), ParseError> {
    let mut fields = line.split_whitespace();
    let name = fields
        .next()
        .ok_or_else(|| parse_error("named block stat line", "empty line"))?;
    let counters: Vec<&str> = fields.collect();
    let stat = parse_fields(&format!("block stat line for {name:?}"), &counters)?;
    Ok((name.to_string(), stat))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: [(&str, &str); 8] = [
        (
            "A-btrfs",
            include_str!("../../../../tests/fixtures/probe/A-btrfs.blockstat-before-after.txt"),
        ),
        (
            "A-ext4",
            include_str!("../../../../tests/fixtures/probe/A-ext4.blockstat-before-after.txt"),
        ),
        (
            "B-ext4",
            include_str!("../../../../tests/fixtures/probe/B-ext4.blockstat-before-after.txt"),
        ),
        (
            "C-QD1-ext4",
            include_str!("../../../../tests/fixtures/probe/C-QD1-ext4.blockstat-before-after.txt"),
        ),
        (
            "C-ext4-4",
            include_str!("../../../../tests/fixtures/probe/C-ext4-4.blockstat-before-after.txt"),
        ),
        (
            "C-xfs-16",
            include_str!("../../../../tests/fixtures/probe/C-xfs-16.blockstat-before-after.txt"),
        ),
        (
            "QD1-ext4",
            include_str!("../../../../tests/fixtures/probe/QD1-ext4.blockstat-before-after.txt"),
        ),
        (
            "TMPFS-C-t1-r1",
            include_str!(
                "../../../../tests/fixtures/probe/TMPFS-C-t1-r1.blockstat-before-after.txt"
            ),
        ),
    ];

    /// The (before, after) readings of `device` in a fixture.
    fn readings(fixture: &str, device: &str) -> (BlockStat, BlockStat) {
        let text = FIXTURES
            .iter()
            .find(|(name, _)| *name == fixture)
            .map(|(_, text)| *text)
            .expect("known fixture");
        let stats: Vec<BlockStat> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| parse_named_stat_line(line).expect("fixture line parses"))
            .filter(|(name, _)| name == device)
            .map(|(_, stat)| stat)
            .collect();
        assert_eq!(stats.len(), 2, "{fixture} {device}: before and after");
        (stats[0].clone(), stats[1].clone())
    }

    #[test]
    fn every_fixture_line_has_17_fields() {
        for (fixture, text) in FIXTURES {
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                let (name, stat) = parse_named_stat_line(line).expect(fixture);
                assert!(name == "loop0" || name == "vda", "{fixture}: {name}");
                assert!(stat.flush_ios.is_some() && stat.flush_ticks_ms.is_some());
            }
        }
    }

    #[test]
    fn a_ext4_loop0_reading_is_exact() {
        let (before, after) = readings("A-ext4", "loop0");
        assert_eq!(
            before,
            BlockStat {
                read_ios: 3263,
                read_merges: 1,
                read_sectors: 94971,
                read_ticks_ms: 175,
                write_ios: 608602,
                write_merges: 281893,
                write_sectors: 18812045,
                write_ticks_ms: 525562,
                in_flight: 0,
                io_ticks_ms: 226704,
                time_in_queue_ms: 722893,
                discard_ios: Some(66),
                discard_merges: Some(0),
                discard_sectors: Some(159383688),
                discard_ticks_ms: Some(2),
                flush_ios: Some(149810),
                flush_ticks_ms: Some(197151),
            }
        );
        assert_eq!(after.flush_ios, Some(158069));
    }

    #[test]
    fn flush_deltas_match_the_fixtures() {
        // (fixture, device, flush_ios delta, flush_ticks_ms delta, write_ios delta)
        let expected = [
            (
                "A-ext4",
                "loop0",
                158069 - 149810,
                199846 - 197151,
                633248 - 608602,
            ),
            (
                "A-btrfs",
                "loop0",
                179946 - 173416,
                207718 - 203380,
                741851 - 668087,
            ),
            (
                "A-btrfs",
                "vda",
                266574 - 259986,
                10113 - 9826,
                1523057 - 1493161,
            ),
            (
                "B-ext4",
                "loop0",
                264956 - 264717,
                249917 - 249814,
                1135196 - 1133215,
            ),
            (
                "C-QD1-ext4",
                "loop0",
                337353 - 334349,
                311993 - 302765,
                1292033 - 1286002,
            ),
            (
                "C-ext4-4",
                "loop0",
                298361 - 284965,
                260932 - 253138,
                1192808 - 1166720,
            ),
            (
                "C-xfs-16",
                "loop0",
                331885 - 325201,
                296184 - 286615,
                1281002 - 1253404,
            ),
            (
                "QD1-ext4",
                "loop0",
                334344 - 331904,
                302758 - 296224,
                1285992 - 1281084,
            ),
            ("TMPFS-C-t1-r1", "vda", 0, 0, 0),
        ];
        for (fixture, device, flushes, flush_ms, writes) in expected {
            let (before, after) = readings(fixture, device);
            let delta = after.delta_since(&before);
            assert_eq!(delta.flush_ios, Some(flushes), "{fixture} {device}");
            assert_eq!(delta.flush_ticks_ms, Some(flush_ms), "{fixture} {device}");
            assert_eq!(delta.write_ios, writes, "{fixture} {device}");
        }
        // Spelled out once: A-ext4 loop0 went 149810 -> 158069 flushes.
        let (before, after) = readings("A-ext4", "loop0");
        assert_eq!(after.delta_since(&before).flush_ios, Some(8259));
        // A-btrfs loop0 discards did not move.
        let (before, after) = readings("A-btrfs", "loop0");
        assert_eq!(after.delta_since(&before).discard_sectors, Some(0));
    }

    #[test]
    fn eleven_and_fifteen_field_formats() {
        let eleven = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11\n").expect("11 fields");
        assert_eq!((eleven.read_ios, eleven.time_in_queue_ms), (1, 11));
        assert_eq!((eleven.discard_ios, eleven.flush_ios), (None, None));
        let fifteen = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").expect("15");
        assert_eq!(fifteen.discard_ticks_ms, Some(15));
        assert_eq!(fifteen.flush_ios, None);
        let seventeen =
            BlockStat::parse("    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17  \n").expect("17");
        assert_eq!(
            (seventeen.flush_ios, seventeen.flush_ticks_ms),
            (Some(16), Some(17))
        );
    }

    #[test]
    fn too_few_fields_names_the_count() {
        let error = BlockStat::parse("1 2 3 4 5 6 7 8 9 10").expect_err("10 fields");
        assert!(error.to_string().contains("found 10"), "{error}");
        let error = BlockStat::parse("").expect_err("empty");
        assert!(error.to_string().contains("found 0"), "{error}");
    }

    #[test]
    fn garbage_is_an_error() {
        for text in [
            "a b c d e f g h i j k",
            "1 2 3 4 5 6 7 8 9 10 -11",
            "1 2 3 4 5 6 7 8 9 10 99999999999999999999999",
            "1 2 3 4 5 6 7 8 9 10 1.5",
            "\u{0}\u{FFFD}",
        ] {
            assert!(BlockStat::parse(text).is_err(), "accepted {text:?}");
        }
        for line in ["", "   ", "loop0", "loop0 1 2 3", "1 2 3 4 5 6 7 8 9 10 11"] {
            assert!(parse_named_stat_line(line).is_err(), "accepted {line:?}");
        }
    }

    #[test]
    fn delta_saturates_and_keeps_in_flight() {
        let before = BlockStat::parse("5 0 0 0 9 0 0 0 3 0 0 0 0 0 0 4 4").expect("ok");
        let after = BlockStat::parse("1 0 0 0 10 0 0 0 2 0 0").expect("ok");
        let delta = after.delta_since(&before);
        assert_eq!(
            (delta.read_ios, delta.write_ios, delta.in_flight),
            (0, 1, 2)
        );
        assert_eq!(delta.flush_ios, None);
    }
}
