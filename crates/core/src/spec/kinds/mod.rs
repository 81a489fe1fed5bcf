//! The parameters of the workload kinds, one file each: `fileio`'s sysbench mode, small-file
//! writers (`smallfiles`), a file-server operation mix (`fileserver`) and group commit on a
//! shared log (`grouplog`). Each kind beyond fileio is a table of the spec (`[smallfiles]`...),
//! read only when the spec's `kind` selects it.

pub mod common;
pub mod def;
pub mod fileio;
pub mod fileserver;
pub mod grouplog;
pub mod smallfiles;

pub use fileio::FileioMode;
pub use fileserver::FileserverSpec;
pub use grouplog::{GrouplogSpec, MAX_DELAY_US, Strategy};
pub use smallfiles::{FileSync, SmallfilesSpec};

pub(super) use fileio::describe as describe_fileio;
pub(super) use fileserver::describe as describe_fileserver;
pub(super) use grouplog::describe as describe_grouplog;
pub(super) use smallfiles::describe as describe_smallfiles;

use super::{SpecError, WorkloadKind, WorkloadSpec};
use def::{KindDef, SettingDef};

/// Every kind fsynclab runs, in the order the front ends list them.
pub static KINDS: &[&KindDef] = &[
    &fileio::DEF,
    &smallfiles::DEF,
    &fileserver::DEF,
    &grouplog::DEF,
];

/// The settings table of `kind` (`None` for `fio`, which is imported, not run).
pub fn kind_def(kind: WorkloadKind) -> Option<&'static KindDef> {
    KINDS.iter().copied().find(|d| d.kind == kind)
}

/// Every workload setting of every kind, each once (by its stored name), in table order.
pub fn all_settings() -> Vec<&'static SettingDef> {
    let mut out: Vec<&'static SettingDef> = Vec::new();
    for def in KINDS.iter().flat_map(|k| k.settings.iter().copied()) {
        if !out.iter().any(|d| d.wire == def.wire) {
            out.push(def);
        }
    }
    out
}

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

#[cfg(test)]
mod tests;
