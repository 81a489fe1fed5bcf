//! The settle step between prepare and the timed part (`spec.common.settle`): `syncfs` on the
//! target, then sample the device's in-flight counter (and a loop's backing disk's) and the
//! page cache's dirty and writeback pages until [`crate::probe::Settler`] calls them
//! quiet, or the rule's timeout passes (the run then starts anyway, with a warning).

use std::path::Path;

use super::api::{CancelToken, RunContext};
use super::dirfd::DirHandle;
use super::file::{Backend, DirOps, PREPARE_THREAD};
use crate::metrics::RunWarning;
use crate::probe::{SettleRule, SettleVerdict, Settler};

/// How a settle step ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settled {
    /// Samples taken.
    pub samples: u32,
    /// Milliseconds waited (samples × the rule's interval).
    pub waited_ms: u64,
    /// Why the run starts without having settled (a warning), if it does.
    pub warning: Option<crate::metrics::RunWarning>,
}

/// Settles the target under `rule`: writes back the filesystem holding `dir` (none on a
/// bare device), then waits for its devices and the page cache to go quiet.
pub(crate) fn settle<B: Backend>(
    backend: &B,
    ctx: &RunContext,
    dir: Option<&DirHandle>,
    rule: SettleRule,
    cancel: &CancelToken,
) -> Settled {
    let mut out = Settled {
        samples: 0,
        waited_ms: 0,
        warning: None,
    };
    if let Some(dir) = dir
        && let Err(e) = backend.dir_ops(PREPARE_THREAD).syncfs(dir)
    {
        out.warning = Some(RunWarning::SettleSyncfsFailed {
            errno: e.raw_os_error(),
        });
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
                out.warning = Some(match e {
                    crate::probe::ProbeError::Read { path, source } => {
                        RunWarning::SettleUnreadable {
                            path: Some(path),
                            errno: source.raw_os_error(),
                        }
                    }
                    crate::probe::ProbeError::Parse { .. } => RunWarning::SettleUnreadable {
                        path: None,
                        errno: None,
                    },
                });
                return out;
            }
        };
        out.samples += 1;
        if settler.observe(&sample) == SettleVerdict::Settled {
            return out;
        }
        if out.waited_ms >= rule.timeout_ms {
            out.warning = Some(RunWarning::SettleTimedOut {
                timeout_ms: rule.timeout_ms,
                in_flight: sample.in_flight.iter().sum::<u64>(),
                dirty_kib: sample.dirty_kib,
                writeback_kib: sample.writeback_kib,
            });
            return out;
        }
        backend.settle_pause(rule.interval_ms);
        out.waited_ms += rule.interval_ms;
    }
}
