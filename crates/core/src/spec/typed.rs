//! The typed [`WorkloadSpec`]: the settings every kind has ([`CommonSpec`]) and the chosen
//! kind's own ([`KindSpec`], one variant per kind of the registry, each holding its kind's
//! `Spec`), so code of one kind cannot read another kind's settings. Serde reads and writes
//! it through its flat form ([`FlatSpec`]): stored rows, presets and bundles keep their JSON,
//! and unknown keys stay refused.

use serde::{Deserialize, Serialize};

use super::flat::FlatSpec;
use super::kinds::{self, def::KindParams};
use super::{DurableOp, NoDurableOp, OpenFlags, SpecError, SyncMethod, WorkloadKind};

/// One workload, complete: everything the engine needs besides the target directory.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "FlatSpec", into = "FlatSpec")]
pub struct WorkloadSpec {
    /// The settings of every kind: workers, the stop rule, the seed and the sampling.
    pub common: CommonSpec,
    /// The chosen kind and its own settings.
    pub kind: KindSpec,
}

/// The settings every kind reads (a kind whose table leaves out the request count or the
/// warm-up refuses them in its checks).
#[derive(Clone, Debug, PartialEq)]
pub struct CommonSpec {
    /// Worker threads (a fileserver's clients, a log's writers).
    pub threads: u32,
    /// Stop after this many seconds (time based).
    pub duration_s: Option<f64>,
    /// Stop after this many writes in total, shared by all threads; in sysbench mode, this
    /// many events (writes + periodic fsyncs), as sysbench `--max-requests`/`--events`.
    pub requests: Option<u64>,
    /// Seconds of warm-up at the start of the timed part (fio `ramp_time`), left out of the
    /// stored figures; the stop rule counts from its end.
    pub warmup_s: Option<f64>,
    /// Seed of every random choice of the run.
    pub seed: u64,
    /// Interval sample length in ms.
    pub interval_ms: u64,
    /// Settle after preparing: `syncfs` the target, then wait until the device and the page
    /// cache are quiet, so the preparation's writeback does not run into the timed part.
    pub settle: bool,
}

impl Default for CommonSpec {
    fn default() -> Self {
        Self::from_flat(&FlatSpec::default())
    }
}

impl CommonSpec {
    fn from_flat(flat: &FlatSpec) -> Self {
        Self {
            threads: flat.threads,
            duration_s: flat.duration_s,
            requests: flat.requests,
            warmup_s: flat.warmup_s,
            seed: flat.seed,
            interval_ms: flat.interval_ms,
            settle: flat.settle,
        }
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.threads = self.threads;
        flat.duration_s = self.duration_s;
        flat.requests = self.requests;
        flat.warmup_s = self.warmup_s;
        flat.seed = self.seed;
        flat.interval_ms = self.interval_ms;
        flat.settle = self.settle;
    }
}

macro_rules! kind_spec {
    ($($variant:ident $module:ident $doc:literal [$($table:ident)?]),* $(,)?) => {
        /// The chosen kind with its own settings: one variant per kind of the registry
        /// ([`for_each_kind!`](crate::for_each_kind)), then `fio`, imported, which keeps
        /// what fio's options translate to in fileio's terms.
        #[derive(Clone, Debug, PartialEq)]
        pub enum KindSpec {
            $(
                #[doc = $doc]
                $variant(kinds::$module::Spec),
            )*
            /// Imported from fio's JSON output: fio measured it, fsynclab does not run it.
            Fio(kinds::fileio::Spec),
        }

        impl KindSpec {
            /// Which kind this is.
            pub fn kind(&self) -> WorkloadKind {
                match self {
                    $(KindSpec::$variant(_) => WorkloadKind::$variant,)*
                    KindSpec::Fio(_) => WorkloadKind::Fio,
                }
            }

            /// The kind's settings as the kind-generic questions see them.
            pub fn params(&self) -> &dyn KindParams {
                match self {
                    $(KindSpec::$variant(k) => k,)*
                    KindSpec::Fio(k) => k,
                }
            }

            /// The kind's settings read from the flat form (the other kinds' are left).
            fn from_flat(flat: &FlatSpec) -> Self {
                match flat.kind {
                    $(WorkloadKind::$variant => {
                        KindSpec::$variant(<kinds::$module::Spec as KindParams>::from_flat(flat))
                    })*
                    WorkloadKind::Fio => {
                        KindSpec::Fio(<kinds::fileio::Spec as KindParams>::from_flat(flat))
                    }
                }
            }

            /// `kind` with each of its settings at its default.
            pub fn default_of(kind: WorkloadKind) -> Self {
                Self::from_flat(&FlatSpec {
                    kind,
                    ..FlatSpec::default()
                })
            }
        }
    };
}
crate::for_each_kind!(kind_spec);

impl Default for KindSpec {
    fn default() -> Self {
        Self::default_of(WorkloadKind::Fileio)
    }
}

impl From<FlatSpec> for WorkloadSpec {
    fn from(flat: FlatSpec) -> Self {
        Self {
            common: CommonSpec::from_flat(&flat),
            kind: KindSpec::from_flat(&flat),
        }
    }
}

impl From<WorkloadSpec> for FlatSpec {
    fn from(spec: WorkloadSpec) -> Self {
        spec.flat()
    }
}

impl FlatSpec {
    /// Every problem of the form's typed spec ([`WorkloadSpec::problems`]).
    pub fn problems(&self) -> Vec<SpecError> {
        self.typed().problems()
    }

    /// Ok when the form's typed spec is valid, else its first problem.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.typed().validate()
    }

    /// The form's typed spec in one line ([`WorkloadSpec::describe`]).
    pub fn describe(&self) -> String {
        self.typed().describe()
    }

    /// The typed spec of this form: its kind's settings and the common ones (the other
    /// kinds' values are left behind).
    pub fn typed(&self) -> WorkloadSpec {
        WorkloadSpec::from(self.clone())
    }
}

impl WorkloadSpec {
    /// A spec of `kind` with every setting at its default.
    pub fn of(kind: WorkloadKind) -> Self {
        Self {
            common: CommonSpec::default(),
            kind: KindSpec::default_of(kind),
        }
    }

    /// The flat form: this kind's settings and the common ones, every other kind's at its
    /// default.
    pub fn flat(&self) -> FlatSpec {
        let mut flat = FlatSpec {
            kind: self.kind(),
            ..FlatSpec::default()
        };
        self.common.write_flat(&mut flat);
        self.kind.params().write_flat(&mut flat);
        flat
    }

    /// Edits the spec through its flat form (a setting by its field, as a form sets it)
    /// and types it again. A setting of another kind would be left behind: debug builds
    /// assert that the edit set none.
    pub fn edit(&mut self, edit: impl FnOnce(&mut FlatSpec)) {
        let mut flat = self.flat();
        edit(&mut flat);
        debug_assert!(
            super::foreign_settings(&flat).is_empty(),
            "an edit of another kind's setting: {:?}",
            super::foreign_settings(&flat)
        );
        *self = flat.typed();
    }

    /// Which kind of workload this is.
    pub fn kind(&self) -> WorkloadKind {
        self.kind.kind()
    }

    /// The fileio settings of a `fileio` run (or of an imported fio run), else `None`.
    pub fn fileio(&self) -> Option<&kinds::fileio::Spec> {
        match &self.kind {
            KindSpec::Fileio(f) | KindSpec::Fio(f) => Some(f),
            _ => None,
        }
    }

    /// Mutable [`WorkloadSpec::fileio`].
    pub fn fileio_mut(&mut self) -> Option<&mut kinds::fileio::Spec> {
        match &mut self.kind {
            KindSpec::Fileio(f) | KindSpec::Fio(f) => Some(f),
            _ => None,
        }
    }

    /// The sync call of the kinds that have one (fileio, grouplog, append), else `None`.
    pub fn sync(&self) -> Option<SyncMethod> {
        self.kind.params().sync()
    }

    /// Writes between two syncs, of the kinds that have the setting (fileio, append).
    pub fn sync_every(&self) -> Option<u32> {
        self.kind.params().sync_every()
    }

    /// Whether each thread's last write goes without its periodic sync: a fileio run that
    /// stops by size syncs when it starts the next write, as fio does, and after the last
    /// there is none (a final sync syncs it).
    pub fn skips_last_periodic_sync(&self) -> bool {
        self.kind.params().skips_last_periodic_sync(&self.common)
    }

    /// The open flags of the kinds that have them (none for the others).
    pub fn open_flags(&self) -> OpenFlags {
        self.kind.params().open_flags()
    }

    /// The whole number at a row's dotted key (`grouplog.record_size`), if it is one.
    pub fn u64_at(&self, key: &str) -> Option<u64> {
        self.flat().u64_at(key)
    }

    /// The spec as JSON with every kind's table (see [`FlatSpec::full_json`]).
    pub fn full_json(&self) -> serde_json::Value {
        self.flat().full_json()
    }

    pub(in crate::spec) fn kind_problems(&self, errs: &mut Vec<SpecError>) {
        self.kind.params().problems(self, errs);
    }

    pub(in crate::spec) fn kind_durable_op(&self) -> Result<DurableOp, NoDurableOp> {
        self.kind.params().durable_op(self)
    }
}
