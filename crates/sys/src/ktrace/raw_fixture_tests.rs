//! The binary reader against the text one on the same events, recorded on this machine
//! (`scripts/record-ktrace-fixtures.sh tests/fixtures/ktrace --raw`: 200 O_DSYNC writes by
//! dd on a loop filesystem; the instance's `trace` text read first, then the same events
//! consumed as pages from each CPU's `trace_pipe_raw`). Both must give the same figures.

use std::sync::Arc;

use super::accum::{Accumulator, LiveKernel, Targets};
use super::decode::{Decoder, decode_page, parse_format};
use super::fixture_tests::ALL;
use super::parse::{Dev, parse_line};
use super::raw::parse_header_page;
use crate::metrics::KernelTrace;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../../../tests/fixtures/ktrace/raw/", $name))
    };
}

const HEADER_PAGE: &[u8] = fixture!("header_page");
const FORMATS: [&[u8]; 10] = [
    fixture!("formats/block_rq_issue.format"),
    fixture!("formats/block_rq_complete.format"),
    fixture!("formats/jbd2_start_commit.format"),
    fixture!("formats/jbd2_end_commit.format"),
    fixture!("formats/jbd2_run_stats.format"),
    fixture!("formats/xfs_log_force.format"),
    fixture!("formats/xlog_iclog_sync.format"),
    fixture!("formats/btrfs_sync_file.format"),
    fixture!("formats/btrfs_transaction_commit.format"),
    fixture!("formats/sched_switch.format"),
];

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("utf-8 fixture")
}

/// dd's thread id, from the text (the task of its first event).
fn dd_pid(trace: &str) -> u32 {
    trace
        .lines()
        .find(|l| l.trim_start().starts_with("dd-"))
        .and_then(parse_line)
        .expect("a dd event")
        .pid
}

fn accumulator(targets: &Targets, dd: u32) -> Accumulator {
    let live = Arc::new(LiveKernel::counting_from(1));
    Accumulator::new(targets.clone(), Box::new(move |tid| tid == dd), live)
}

/// The figures from the text and from the pages of `cpus`.
fn both(trace: &[u8], cpus: &[&[u8]], targets: Targets) -> (KernelTrace, KernelTrace, u64) {
    let trace = text(trace);
    let dd = dd_pid(trace);
    let mut from_text = accumulator(&targets, dd);
    from_text.feed_text(trace);
    let layout = parse_header_page(text(HEADER_PAGE)).expect("header_page");
    let formats: Vec<_> = FORMATS
        .iter()
        .map(|f| parse_format(text(f)).expect("format"))
        .collect();
    let decoder = Decoder::new(&formats).expect("decoder");
    let mut from_raw = accumulator(&targets, dd);
    let mut pending = Vec::new();
    let mut pages = 0;
    for cpu in cpus {
        for page in cpu.chunks(4096) {
            let (_, undecoded) = decode_page(page, &layout, &decoder, &mut pending);
            from_raw.count_unparsed(undecoded);
            pages += 1;
        }
    }
    from_raw.feed_merged(&mut pending, u64::MAX);
    assert!(pending.is_empty());
    (
        from_text.finish(ALL, 200, 0),
        from_raw.finish(ALL, 200, 0),
        pages,
    )
}

/// Counts must be equal; times agree to the text's microsecond rounding.
fn assert_same(text: &KernelTrace, raw: &KernelTrace) {
    assert_eq!(raw.dropped, Some(0), "every record decodes");
    assert_eq!(text.dropped, Some(0));
    assert!(raw.events_read.unwrap() > 200, "{:?}", raw.events_read);
    assert_eq!(raw.events_read, text.events_read);
    assert_eq!(raw.block_flushes, text.block_flushes);
    assert_eq!(raw.fua_writes, text.fua_writes);
    assert_eq!(raw.journal_commits, text.journal_commits);
    assert_eq!(raw.handles_per_commit, text.handles_per_commit);
    assert_eq!(raw.blocks_per_commit, text.blocks_per_commit);
    assert_eq!(raw.log_forces, text.log_forces);
    assert_eq!(raw.log_writes, text.log_writes);
    assert_eq!(raw.log_commits, text.log_commits);
    assert_eq!(raw.transaction_commits, text.transaction_commits);
    let (t, r) = (text.dstate_us.unwrap(), raw.dstate_us.unwrap());
    assert!(
        t > 1000 && t.abs_diff(r) * 100 <= t,
        "D state {t} vs {r} µs"
    );
    let (t, r) = (text.flush_lat_us.unwrap(), raw.flush_lat_us.unwrap());
    assert!((t.p50 - r.p50).abs() <= t.p50 * 0.01 + 1.0, "{t:?} {r:?}");
}

fn on_loop(minor: u32) -> Targets {
    Targets {
        dev: Some(Dev { major: 7, minor }),
        ..Default::default()
    }
}

#[test]
fn ext4_pages_give_the_text_figures() {
    let (t, r, pages) = both(
        fixture!("ext4.txt"),
        &[fixture!("ext4.cpu0.raw"), fixture!("ext4.cpu1.raw")],
        on_loop(0),
    );
    assert!(pages > 10, "{pages}");
    assert_same(&t, &r);
    assert_eq!(r.journal_commits, Some(200));
    assert!(r.block_flushes.unwrap() >= 200, "{:?}", r.block_flushes);
}

#[test]
fn xfs_pages_give_the_text_figures() {
    let (t, r, _) = both(
        fixture!("xfs.txt"),
        &[fixture!("xfs.cpu0.raw"), fixture!("xfs.cpu1.raw")],
        on_loop(1),
    );
    assert_same(&t, &r);
    assert!(r.log_forces.unwrap() >= 200, "{:?}", r.log_forces);
    assert!(r.log_writes.unwrap() >= 200, "{:?}", r.log_writes);
}

#[test]
fn btrfs_pages_give_the_text_figures() {
    let trace = text(fixture!("btrfs.txt"));
    // The filesystem id as the text prints it.
    let fsid = trace
        .lines()
        .find_map(|l| l.split("btrfs_sync_file: ").nth(1))
        .and_then(|body| body.split_once(": "))
        .expect("a btrfs_sync_file line")
        .0
        .to_string();
    let targets = Targets {
        btrfs_fsid: Some(fsid),
        ..on_loop(2)
    };
    let (t, r, _) = both(
        fixture!("btrfs.txt"),
        &[fixture!("btrfs.cpu0.raw"), fixture!("btrfs.cpu1.raw")],
        targets,
    );
    assert_same(&t, &r);
    assert_eq!(r.log_commits, Some(200));
}

#[test]
fn unknown_records_and_cut_pages_count_as_dropped() {
    let layout = parse_header_page(text(HEADER_PAGE)).unwrap();
    let formats: Vec<_> = FORMATS
        .iter()
        .map(|f| parse_format(text(f)).unwrap())
        .collect();
    let page = &fixture!("ext4.cpu0.raw")[..4096];
    let mut whole = Vec::new();
    let decoder = Decoder::new(&formats).unwrap();
    assert_eq!(decode_page(page, &layout, &decoder, &mut whole).1, 0);
    let switches = whole
        .iter()
        .filter(|(_, e)| matches!(e, super::parse::Event::SchedSwitch { .. }))
        .count() as u64;
    assert!(switches > 0 && switches < whole.len() as u64);
    // A decoder that does not know sched_switch counts each as undecoded.
    let without = Decoder::new(&formats[..9]).unwrap();
    let mut some = Vec::new();
    let (_, undecoded) = decode_page(page, &layout, &without, &mut some);
    assert_eq!(
        (undecoded, some.len() + switches as usize),
        (switches, whole.len())
    );
    // A page cut short of its commit gives nothing and counts once.
    let mut none = Vec::new();
    assert_eq!(
        decode_page(&page[..2000], &layout, &decoder, &mut none).1,
        1
    );
    assert!(none.is_empty());
}
