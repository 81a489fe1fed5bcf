//! The general checks of a [`WorkloadSpec`] (sizes, threads, the stop rule, syncing); the
//! kind-specific ones are in `kinds.rs`.

use super::*;

/// Problems with the threads.
pub(super) fn thread_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if spec.common.threads == 0 || spec.common.threads > MAX_THREADS {
        // Named as the kind names its workers (a fileserver's clients, dbench's count).
        let workers =
            super::kind_def(spec.kind()).map_or(&super::kinds::common::THREADS, |t| t.workers);
        let (what, option) = (workers.unit, Setting::Field(workers));
        errs.push(spec_error(
            Setting::THREADS,
            format!("{} {what}", spec.common.threads),
            crate::hint!(format!("use 1 to {MAX_THREADS} ("), option, ")"),
        ));
    }
}

/// Problems with the stop rule and the sampling interval.
pub(super) fn stop_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    if let Some(d) = spec.common.duration_s
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
    if spec.common.duration_s.is_some() && spec.common.requests.is_some() {
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
    if let Some(n) = spec.common.requests
        && (n == 0 || n > MAX_REQUESTS)
    {
        errs.push(spec_error(
            Setting::REQUESTS,
            format!("{n} requests"),
            crate::hint!(format!("use 1 to {MAX_REQUESTS} ("), Setting::REQUESTS, ")"),
        ));
    }
    if !(10..=60_000).contains(&spec.common.interval_ms) {
        errs.push(spec_error(
            Setting::INTERVAL_MS,
            format!("{} ms", spec.common.interval_ms),
            crate::hint!("use 10 to 60000 ms (", (Setting::INTERVAL_MS, "100"), ")"),
        ));
    }
}

/// Problems with the warm-up: its range, and the kinds that have one.
fn warmup_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    let Some(w) = spec.common.warmup_s else {
        return;
    };
    // 0 is none, as fio's ramp_time=0 (a flag or form unsets it; a preset may write it).
    if w == 0.0 {
        return;
    }
    if !(w.is_finite() && w > 0.0 && w <= MAX_WARMUP_S) {
        let shown = if w.is_finite() && (1e-3..1e7).contains(&w.abs()) {
            format!("{w} s of warm-up")
        } else {
            format!("{w:.3e} s of warm-up")
        };
        errs.push(spec_error(
            Setting::WARMUP,
            shown,
            crate::hint!(
                format!("use more than 0 and at most {MAX_WARMUP_S} s, or "),
                (Setting::WARMUP, "0"),
                " for none"
            ),
        ));
    }
    // Kinds whose table has no warm-up row have none.
    if super::kind_def(spec.kind()).is_some_and(|t| t.setting("warmup_s").is_none()) {
        let with: Vec<&str> = super::KINDS
            .iter()
            .filter(|t| t.setting("warmup_s").is_some())
            .map(|t| t.kind.as_str())
            .collect();
        errs.push(spec_error(
            Setting::WARMUP,
            format!("a warm-up for this {} run", spec.kind().as_str()),
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
