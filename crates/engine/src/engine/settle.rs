//! The settle step between prepare and the timed part (`spec.settle`): `syncfs` on the
//! target, then sample the device's in-flight counter (and a loop's backing disk's) and the
//! page cache's dirty and writeback pages until [`crate::probe::Settler`] calls them
//! quiet, or the rule's timeout passes (the run then starts anyway, with a warning).

use std::path::Path;

use super::api::{CancelToken, RunContext};
use super::file::{Backend, DirOps, PREPARE_THREAD};
use super::scratch::ScratchDir;
use crate::probe::{SettleRule, SettleVerdict, Settler};

/// How a settle step ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settled {
    /// Samples taken.
    pub samples: u32,
    /// Milliseconds waited (samples × the rule's interval).
    pub waited_ms: u64,
    /// Why the run starts without having settled (a warning), if it does.
    pub warning: Option<String>,
}

/// Settles the target of `scratch` under `rule`.
pub(crate) fn settle<B: Backend>(
    backend: &B,
    ctx: &RunContext,
    scratch: &ScratchDir,
    rule: SettleRule,
    cancel: &CancelToken,
) -> Settled {
    let mut out = Settled {
        samples: 0,
        waited_ms: 0,
        warning: None,
    };
    if let Err(e) = backend.dir_ops(PREPARE_THREAD).syncfs(scratch.dir()) {
        out.warning = Some(format!(
            "settle: syncfs of the target failed ({e}); the timed part may meet the fill's writeback"
        ));
        return out;
    }
    let stat_paths: Vec<&Path> = [&ctx.system.device, &ctx.system.backing_device]
        .into_iter()
        .flatten()
        .map(|d| d.stat_path.as_path())
        .collect();
    let mut settler = Settler::new(rule);
    loop {
        if cancel.is_cancelled() {
            return out;
        }
        let sample = match backend.settle_sample(&stat_paths) {
            Ok(s) => s,
            Err(e) => {
                out.warning = Some(format!(
                    "settle: cannot read the device or page-cache counters ({e}); started after syncfs alone"
                ));
                return out;
            }
        };
        out.samples += 1;
        if settler.observe(&sample) == SettleVerdict::Settled {
            return out;
        }
        if out.waited_ms >= rule.timeout_ms {
            out.warning = Some(format!(
                "settle: the device and page cache were still busy after {:.1} s ({} in flight, \
                 {} KiB dirty, {} KiB under writeback); the run started anyway",
                rule.timeout_ms as f64 / 1000.0,
                sample.in_flight.iter().sum::<u64>(),
                sample.dirty_kib,
                sample.writeback_kib
            ));
            return out;
        }
        backend.settle_pause(rule.interval_ms);
        out.waited_ms += rule.interval_ms;
    }
}
