//! The general checks of a [`WorkloadSpec`] (sizes, threads, the stop rule, syncing); the
//! kind-specific ones are in `kinds.rs`.

use super::*;

/// Problems with the threads and the sizes.
pub(super) fn size_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if spec.threads == 0 || spec.threads > MAX_THREADS {
        // Named as the kind names its workers (a fileserver's clients, dbench's count).
        let workers =
            super::kind_def(spec.kind).map_or(&super::kinds::common::THREADS, |t| t.workers);
        let (what, option) = (workers.unit, Setting::Field(workers));
        errs.push(spec_error(
            Setting::THREADS,
            format!("{} {what}", spec.threads),
            crate::hint!(format!("use 1 to {MAX_THREADS} ("), option, ")"),
        ));
    }
    // Buffered writes may be any size from 512 bytes (etcd's disk check writes 2300-byte
    // WAL entries); O_DIRECT needs whole sectors.
    if spec.block_size < 512
        || (spec.open_flags.direct && !spec.block_size.is_multiple_of(512))
        || spec.block_size > MAX_BLOCK_SIZE
    {
        errs.push(spec_error(
            Setting::BLOCK_SIZE,
            if spec.block_size < 512 || spec.block_size > MAX_BLOCK_SIZE {
                format!(
                    "{} bytes is not a multiple of 512 between 512 and 64M",
                    spec.block_size
                )
            } else {
                format!(
                    "{} bytes is not a multiple of 512, which O_DIRECT needs",
                    spec.block_size
                )
            },
            crate::hint!("use e.g. 4k, 8k or 512 (", Setting::BLOCK_SIZE, ")"),
        ));
    }
    if spec.file_size < spec.block_size || spec.file_size > MAX_FILE_SIZE {
        errs.push(spec_error(
            Setting::FILE_SIZE,
            format!(
                "{} is smaller than one block ({}) or larger than 64T",
                format_size(spec.file_size),
                format_size(spec.block_size)
            ),
            crate::hint!(
                "make the file at least one block long (",
                Setting::FILE_SIZE,
                ")"
            ),
        ));
    }
    if let Some(io) = spec.io_size
        && (io < spec.block_size || io > MAX_FILE_SIZE)
    {
        errs.push(spec_error(
            Setting::IO_SIZE,
            format!(
                "{} is less than one block or more than 64T",
                format_size(io)
            ),
            crate::hint!(
                "use at least one block and at most 64T per thread (",
                Setting::IO_SIZE,
                ")"
            ),
        ));
    }
}

/// Problems with the stop rule, syncing, shared files and the sampling interval.
pub(super) fn stop_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if let Some(d) = spec.duration_s
        && !(MIN_DURATION_S..=MAX_DURATION_S).contains(&d)
    {
        // {:.3e}: a typo such as 1e308 or 5e-324 must not print a 300-digit number.
        let shown = if d.is_finite() && (d == 0.0 || (1e-3..1e7).contains(&d.abs())) {
            format!("{d} s")
        } else {
            format!("{d:.3e} s")
        };
        errs.push(spec_error(
            Setting::DURATION,
            shown,
            crate::hint!(
                "use a duration of at least 0.001 s and at most 7 days (",
                Setting::DURATION,
                ")"
            ),
        ));
    }
    warmup_problems(spec, errs);
    if spec.duration_s.is_some() && spec.requests.is_some() {
        errs.push(spec_error(
            Setting::REQUESTS,
            "both a duration and a request count are set",
            crate::hint!(
                "choose one stop rule: ",
                Setting::DURATION,
                " or ",
                Setting::REQUESTS
            ),
        ));
    }
    if let Some(n) = spec.requests
        && (n == 0 || n > MAX_REQUESTS)
    {
        errs.push(spec_error(
            Setting::REQUESTS,
            format!("{n} requests"),
            crate::hint!(format!("use 1 to {MAX_REQUESTS} ("), Setting::REQUESTS, ")"),
        ));
    }
    if spec.sync != SyncMethod::None && spec.sync_every == 0 {
        errs.push(spec_error(
            Setting::SYNC_EVERY,
            "0 writes between syncs",
            crate::hint!(
                "use 1 or more, or ",
                (Setting::SYNC, "none"),
                " to never sync (",
                Setting::SYNC_EVERY,
                ")"
            ),
        ));
    }
    if let Some(n) = spec.shared_files
        && (n == 0 || n > MAX_THREADS)
    {
        errs.push(spec_error(
            Setting::SHARED_FILES,
            format!("{n} shared files"),
            crate::hint!(
                format!("use 1 to {MAX_THREADS} ("),
                Setting::SHARED_FILES,
                ")"
            ),
        ));
    }
    if !(10..=60_000).contains(&spec.interval_ms) {
        errs.push(spec_error(
            Setting::INTERVAL_MS,
            format!("{} ms", spec.interval_ms),
            crate::hint!("use 10 to 60000 ms (", (Setting::INTERVAL_MS, "100"), ")"),
        ));
    }
}

/// Problems with the warm-up: its range, and the kinds that have one.
fn warmup_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    let Some(w) = spec.warmup_s else { return };
    if !(w.is_finite() && w > 0.0 && w <= MAX_WARMUP_S) {
        let shown = if w.is_finite() && (w == 0.0 || (1e-3..1e7).contains(&w.abs())) {
            format!("{w} s of warm-up")
        } else {
            format!("{w:.3e} s of warm-up")
        };
        errs.push(spec_error(
            Setting::WARMUP,
            shown,
            crate::hint!(
                format!("use more than 0 and at most {MAX_WARMUP_S} s, or leave out "),
                Setting::WARMUP,
                " for none"
            ),
        ));
    }
    // Kinds whose table has no warm-up row have none.
    if super::kind_def(spec.kind).is_some_and(|t| t.setting("warmup_s").is_none()) {
        let with: Vec<&str> = super::KINDS
            .iter()
            .filter(|t| t.setting("warmup_s").is_some())
            .map(|t| t.kind.as_str())
            .collect();
        errs.push(spec_error(
            Setting::WARMUP,
            format!("a warm-up for this {} run", spec.kind.as_str()),
            crate::hint!(
                format!(
                    "a warm-up applies to {} runs only; leave out ",
                    with.join(" and ")
                ),
                Setting::WARMUP
            ),
        ));
    }
}
