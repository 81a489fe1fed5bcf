//! `fileserver`: a file-server operation mix (dbench's NetBench profile): its parameters
//! and checks.

use serde::{Deserialize, Serialize};

use super::super::NoDurableOp;
use super::super::{Setting, SpecError, WorkloadKind, WorkloadSpec, spec_error};
use super::common;
use super::super::FlatSpec;
use super::super::{DurableOp, SyncMethod};
use super::def::{KindDef, KindParams, Section, SettingDef, Ty};

/// `fileserver`: N clients, each in its own directory tree, replay a file-server operation
/// mix for a set duration (modelled on the NetBench profile dbench uses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileserverSpec {
    /// Files in each client's working set (spread over its subdirectories).
    pub files_per_client: u32,
}

/// The kind's table of the spec (`[workload.fileserver]`).
pub type Table = FileserverSpec;

impl super::def::KindTable for FileserverSpec {
    /// Always written: stored specs have had it from the start.
    fn omitted(&self) -> bool {
        false
    }
}

impl Default for FileserverSpec {
    fn default() -> Self {
        Self {
            files_per_client: 64,
        }
    }
}

/// Problems of a fileserver spec.
fn problems(spec: &WorkloadSpec, s: &Spec, errs: &mut Vec<SpecError>) {
    if spec.common.duration_s.is_none() {
        errs.push(spec_error(
            Setting::DURATION,
            "a fileserver run without a duration",
            crate::hint!(
                "fileserver clients run for a set time, as dbench -t: give ",
                (Setting::DURATION, "30")
            ),
        ));
    }
    if spec.common.requests.is_some() {
        errs.push(spec_error(
            Setting::REQUESTS,
            "a request count on a fileserver run",
            crate::hint!(
                "fileserver runs for ",
                Setting::DURATION,
                "; drop ",
                Setting::REQUESTS
            ),
        ));
    }
    let f = s.files_per_client;
    if f == 0 || f > 100_000 {
        errs.push(spec_error(
            Setting::FILES_PER_CLIENT,
            format!("{f} files per client"),
            crate::hint!("use 1 to 100000 (", (Setting::FILES_PER_CLIENT, "64"), ")"),
        ));
    }
}

/// A fileserver spec in one line ([`WorkloadSpec::describe`]).
fn describe(spec: &WorkloadSpec, s: &Spec) -> String {
    format!(
        "fileserver {} clients, {} files each, {}",
        spec.common.threads,
        s.files_per_client,
        spec.describe_stop()
    )
}

/// `fileserver.files_per_client`: files in each client's working set.
pub const FILES_PER_CLIENT: SettingDef = SettingDef {
    key: "fileserver.files_per_client",
    wire: "files_per_client",
    ty: Ty::Count {
        min: 1,
        max: 100_000,
    },
    default: "64",
    unit: "files per client",
    help: "fileserver: files in each client's working set.",
    flag: None,
    label: "Files per client",
    heading: "fileserver",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// fileserver: its settings, in the window's order.
pub const DEF: KindDef = KindDef {
    kind: WorkloadKind::Fileserver,
    blurb: "N clients replay a file-server operation mix in their own trees (dbench)",
    settings: &[
        &common::CLIENTS,
        &FILES_PER_CLIENT,
        &common::DURATION,
        &common::WARMUP,
        &common::SEED,
        &common::INTERVAL,
        &common::SETTLE,
    ],
    own_stop: None,
    workers: &common::CLIENTS,
    fills_disk: (&[&common::CLIENTS], Some(&FILES_PER_CLIENT)),
    makes_inodes: Some((&[&common::CLIENTS], Some(&FILES_PER_CLIENT))),
    open_files: &[&common::CLIENTS],
    write_unit: None,
    series_metric: "ops_per_sec",
    instead: &[],
};

/// fileserver's part of the typed spec: its table.
pub type Spec = FileserverSpec;

impl KindParams for FileserverSpec {
    fn from_flat(flat: &FlatSpec) -> Self {
        flat.fileserver.clone()
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.fileserver = self.clone();
    }

    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
        problems(spec, self, errs);
    }

    fn describe(&self, spec: &WorkloadSpec) -> String {
        describe(spec, self)
    }

    fn durable_op(&self, _: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
        Err(NoDurableOp::Mix)
    }

    // Its mix's flushes (dbench's Flush) are fsyncs.
    fn sync(&self) -> Option<SyncMethod> {
        Some(SyncMethod::Fsync)
    }
}
