//! The parameters of the workload kinds, one file each: `fileio`'s sysbench mode, small-file
//! writers (`smallfiles`), a file-server operation mix (`fileserver`) and group commit on a
//! shared log (`grouplog`). Each kind beyond fileio is a table of the spec (`[smallfiles]`...),
//! read only when the spec's `kind` selects it.

mod fileio;
mod fileserver;
mod grouplog;
mod smallfiles;

pub use fileio::FileioMode;
pub use fileserver::FileserverSpec;
pub use grouplog::{GrouplogSpec, MAX_DELAY_US, Strategy};
pub use smallfiles::{FileSync, SmallfilesSpec};

pub(super) use fileio::describe as describe_fileio;
pub(super) use fileserver::describe as describe_fileserver;
pub(super) use grouplog::describe as describe_grouplog;
pub(super) use smallfiles::describe as describe_smallfiles;

use super::{SpecError, WorkloadKind, WorkloadSpec};

/// Problems of the kind-specific parts of `spec`.
pub(in crate::spec) fn kind_problems(spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
    match spec.kind {
        WorkloadKind::Fileio => fileio::problems(spec, errs),
        WorkloadKind::Smallfiles => smallfiles::problems(spec, errs),
        WorkloadKind::Fileserver => fileserver::problems(spec, errs),
        WorkloadKind::Grouplog => grouplog::problems(spec, errs),
        // Refused whole by `WorkloadSpec::problems` before this is reached.
        WorkloadKind::Fio => {}
    }
}
