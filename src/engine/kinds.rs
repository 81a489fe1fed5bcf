//! The registry of workload kinds: picks the [`Kind`] implementation from `spec.kind`
//! and runs it. Adding a kind adds one arm here.

use std::sync::mpsc::Sender;

use super::api::{CancelToken, EngineError, EngineEvent, RunContext};
use super::file::Backend;
use super::fileio::Fileio;
use super::fileserver::Fileserver;
use super::grouplog::Grouplog;
use super::runner::run_in_scratch;
use super::scratch::ScratchDir;
use super::smallfiles::Smallfiles;
use crate::metrics::RunResult;
use crate::spec::{WorkloadKind, WorkloadSpec};

/// Runs `spec` in `scratch` with the implementation of its kind.
pub(crate) fn run_kind<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    ctx: &RunContext,
    scratch: &mut ScratchDir,
    events: &Sender<EngineEvent>,
    cancel: &CancelToken,
) -> Result<RunResult, EngineError> {
    match spec.kind {
        WorkloadKind::Fileio => {
            run_in_scratch::<Fileio, B>(backend, spec, ctx, scratch, events, cancel)
        }
        WorkloadKind::Grouplog => {
            run_in_scratch::<Grouplog, B>(backend, spec, ctx, scratch, events, cancel)
        }
        WorkloadKind::Fileserver => {
            run_in_scratch::<Fileserver, B>(backend, spec, ctx, scratch, events, cancel)
        }
        WorkloadKind::Smallfiles => {
            run_in_scratch::<Smallfiles, B>(backend, spec, ctx, scratch, events, cancel)
        }
    }
}
