//! The plan of a worker that writes files of the run directory (fileio, grouplog, append)
//! and the opening of its files with the spec's flags; the plain fileio hot loop is
//! `fileio_worker`.

use std::sync::Arc;

use super::dirfd::DirHandle;
use super::file::Backend;
use super::scratch::{IoSite, io_failure};
use crate::spec::WorkloadSpec;

/// What one worker writes.
#[derive(Clone)]
pub(crate) struct WorkerPlan {
    pub thread: u32,
    /// The run directory the files are in.
    pub dir: Arc<DirHandle>,
    /// File names in block-index order: block b lives in file b / blocks_per_file.
    pub files: Vec<String>,
    /// First block of a sequential pass.
    pub start_block: u64,
    /// Added to every offset the worker writes: 0 for files; its part's first byte on a
    /// bare block device.
    pub base: u64,
    /// On a bare block device: its number (`st_rdev`), which each open is checked against.
    pub device: Option<u64>,
}

/// Opens the files of `plan` with the spec's flags (before the start gate); the error
/// names the file, the flags and the fix.
pub(crate) fn open_plan_files<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    plan: &WorkerPlan,
) -> Result<Vec<B::File>, super::failure::IoFailure> {
    let op = if spec.open_flags().direct {
        "open with O_DIRECT"
    } else {
        "open"
    };
    plan.files
        .iter()
        .map(|name| {
            match plan.device {
                None => backend.open(&plan.dir, name, spec.open_flags(), plan.thread),
                Some(rdev) => {
                    backend.open_device(&plan.dir, name, spec.open_flags(), rdev, plan.thread)
                }
            }
            .map_err(|e| io_failure(plan.site(spec, name), op, None, &e))
        })
        .collect()
}

impl WorkerPlan {
    /// Where an error on file `name` of this plan happened (for its message).
    pub fn site<'a>(&'a self, spec: &WorkloadSpec, name: &'a str) -> IoSite<'a> {
        IoSite {
            kind: spec.kind(),
            dir: &self.dir,
            name,
        }
    }
}
