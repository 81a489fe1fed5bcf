//! The workload kinds, one file each: `fileio` (with sysbench mode), small-file writers
//! (`smallfiles`), a file-server operation mix (`fileserver`) and group commit on a shared log
//! (`grouplog`). Each file holds the kind's settings table (one [`def::SettingDef`] row per
//! setting, `common.rs` for the shared ones) and its [`def::KindDef`]: its rows, its checks,
//! its one-line description, its durable operation and what its failures advise. Each kind
//! beyond fileio is a table of the spec (`[smallfiles]`...), read only when the spec's `kind`
//! selects it.

pub mod common;
pub mod def;

pub use fileio::FileioMode;
pub use fileserver::FileserverSpec;
pub use grouplog::{GrouplogSpec, MAX_DELAY_US, Strategy};
pub use smallfiles::{FileSync, SmallfilesSpec};

use super::FlatSpec;
use super::WorkloadKind;
use def::{KindDef, SettingDef};

/// The registry of the kinds fsynclab runs, one line each, in the order the front ends list
/// them: `Variant module "what it runs" [its table of the spec, if it has one]`. It calls
/// `$then!` with the list; from it come [`WorkloadKind`](super::WorkloadKind)'s variants and
/// names, [`KINDS`], the kinds' tables in [`WorkloadSpec`] and, in the engine, each kind's
/// `mod` line and its arm of `run_kind`. A kind's module `spec/kinds/<module>.rs` has its
/// `DEF` (and `Table`, when it has one); the engine's `engine/<module>.rs` has `impl Kind for
/// <Variant>`.
#[macro_export]
macro_rules! for_each_kind {
    ($then:ident) => {
        $then! {
            Fileio fileio "N threads pwrite a file (or shared files) and sync every N writes: fio / sysbench fileio." [],
            Smallfiles smallfiles "Each thread creates small files in its own directory and syncs them: fs_mark." [smallfiles],
            Fileserver fileserver "N clients replay a file-server operation mix in their own trees: dbench-like." [fileserver],
            Grouplog grouplog "N writers append records to one shared log with a group-commit strategy." [grouplog],
            Append append "Each writer appends records to its own log and syncs every N: a write-ahead log." [append],
        }
    };
}

macro_rules! kinds_list {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        $(pub mod $module;)*

        /// Every kind fsynclab runs, in the order the front ends list them.
        pub static KINDS: &[&KindDef] = &[$(&$module::DEF),*];
    };
}
crate::for_each_kind!(kinds_list);

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

/// The kinds whose table has the setting with this key, by name.
pub fn kinds_with(key: &str) -> Vec<&'static str> {
    KINDS
        .iter()
        .filter(|k| k.setting(key).is_some())
        .map(|k| k.kind.as_str())
        .collect()
}

/// The settings of other kinds that `spec` holds away from their defaults: values its kind
/// never reads (a preset's `[workload.grouplog]` on a fileio run). Settings at their
/// defaults are not counted: every stored spec carries the first kinds' tables.
pub fn foreign_settings(spec: &FlatSpec) -> Vec<&'static SettingDef> {
    let Some(table) = kind_def(spec.kind) else {
        return Vec::new();
    };
    let (json, default) = (spec.full_json(), FlatSpec::default().full_json());
    all_settings()
        .into_iter()
        .filter(|d| table.setting(d.key).is_none())
        .filter(|d| {
            let pointer = format!("/{}", d.key.replace('.', "/"));
            json.pointer(&pointer) != default.pointer(&pointer)
        })
        .collect()
}

#[cfg(test)]
mod tests;
