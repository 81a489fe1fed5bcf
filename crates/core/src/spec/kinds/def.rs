//! The shape of a settings table: one [`SettingDef`] per workload setting (its key, type and
//! range, default, help, flag, window label, report word...) and one [`KindDef`] per kind.
//! The front ends build their flags, form rows and names from these rows, so a kind's
//! settings are written once, beside the kind (fio's ioengines own their options the same
//! way).

use super::super::FlatSpec;
use super::super::{
    DurableOp, NoDurableOp, OpenFlags, SpecError, SyncMethod, WorkloadKind, WorkloadSpec,
};

/// One workload setting: everything a front end or a generic consumer (`--set`, `--sweep`,
/// `--scale`, messages) needs to know about it.
#[derive(Debug)]
pub struct SettingDef {
    /// The preset / `--set` / `--sweep` key, dotted for a kind's table:
    /// `grouplog.record_size`.
    pub key: &'static str,
    /// The name a stored failure or warning uses for the setting (snake_case, unique; the
    /// key for settings added since names were stored, `clients` for a fileserver's
    /// threads).
    pub wire: &'static str,
    /// The value's type and accepted range.
    pub ty: Ty,
    /// The default, as a preset writes it (`4k`, `leader`, `false`; empty: unset).
    pub default: &'static str,
    /// The unit a count or duration is in (`ms`, `s`, `files per thread`); empty for sizes
    /// (bytes), names and flags.
    pub unit: &'static str,
    /// What it does, one sentence: `--help` text.
    pub help: &'static str,
    /// The command-line flag without dashes (`bs`); `None`: only `--set key=value`.
    pub flag: Option<&'static str>,
    /// The window's label of the row that sets it ("Block size").
    pub label: &'static str,
    /// The `run --help` heading of its flag (`Workload`, `fileio`, `grouplog`...).
    pub heading: &'static str,
    /// The window section its row belongs to.
    pub section: Section,
    /// Whether a preset's `--scale` multiplies it.
    pub scale: bool,
    /// The fio option(s) it is read from in a fio job file (`bs`), if any.
    pub fio: Option<&'static str>,
}

/// A setting's type and range: what a flag parses, what a window widget edits and what a
/// range check accepts.
#[derive(Debug)]
pub enum Ty {
    /// A whole number in `min..=max`.
    Count {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A size in bytes (`64M`, `4k`, `2300`) in `min..=max`.
    Size {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// Seconds (a decimal) in `min..=max`.
    Seconds {
        /// Smallest accepted.
        min: f64,
        /// Largest accepted.
        max: f64,
    },
    /// The inner type, or unset (the default).
    Optional(&'static Ty),
    /// On or off (a flag without a value on the command line).
    Flag,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// Any set of these names, comma-separated (each a boolean of the setting's table).
    FlagSet(&'static [&'static str]),
    /// Text read by its own parser (`delay:500`, a hex seed).
    Text(fn(&str) -> Result<(), String>),
}

impl Ty {
    /// The type with `Optional` taken off.
    pub fn inner(&self) -> &Ty {
        match self {
            Ty::Optional(inner) => inner.inner(),
            other => other,
        }
    }

    /// Whether a `--sweep` can step through it: a count, size or duration.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self.inner(),
            Ty::Count { .. } | Ty::Size { .. } | Ty::Seconds { .. }
        )
    }

    /// The value name in `--help` (`<N>`, `<SIZE>`, `<S>`...).
    pub fn value_name(&self) -> &'static str {
        match self.inner() {
            Ty::Count { .. } => "N",
            Ty::Size { .. } => "SIZE",
            Ty::Seconds { .. } => "S",
            Ty::Choice(_) | Ty::Text(_) => "NAME",
            Ty::FlagSet(_) => "LIST",
            Ty::Flag | Ty::Optional(_) => "",
        }
    }
}

/// The section of the window's Setup form a row is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The kind's own rows, right under the kind chooser.
    Kind,
    /// The shape of a fileio run: sizes, block order, files.
    Shape,
    /// How writes are made durable: sync call, open flags.
    Durability,
    /// The I/O engine and its queue.
    Engine,
    /// When the run stops, and its warm-up.
    Stop,
    /// Seed, sampling interval and settling.
    Sampling,
}

/// One workload kind: its settings table and the words its front ends use for it.
#[derive(Debug)]
pub struct KindDef {
    /// The kind.
    pub kind: WorkloadKind,
    /// What it runs, one sentence (the kind chooser's hover, `--kind` help).
    pub blurb: &'static str,
    /// Its settings, common ones included, in form order.
    pub settings: &'static [&'static SettingDef],
    /// How a run of this kind ends when neither a duration nor a request count is set, as
    /// the window offers it ("by bytes"); `None`: it needs one of them.
    pub own_stop: Option<&'static str>,
    /// Its workers' row (`threads` by the kind's name for them: clients, writers); its
    /// `unit` is the word for them.
    pub workers: &'static SettingDef,
    /// What to lower when the target fills up, and what else would do.
    pub fills_disk: (&'static [&'static SettingDef], Option<&'static SettingDef>),
    /// What to lower when the target runs out of inodes (`None`: it makes a fixed few).
    pub makes_inodes: Option<(&'static [&'static SettingDef], Option<&'static SettingDef>)>,
    /// What to lower when a worker runs out of file descriptors.
    pub open_files: &'static [&'static SettingDef],
    /// The size of one write: what O_DIRECT needs aligned to the device's logical block.
    pub write_unit: Option<&'static SettingDef>,
    /// The figure a series of runs of this kind is summarised by (`commits_per_sec`).
    pub series_metric: &'static str,
    /// Other kinds' settings this kind has its own of: (their key, its row, a value to
    /// suggest), for the refusal of the other kind's setting to point at it (smallfiles
    /// opens each file itself: `open_flags` is its `smallfiles.sync = o_sync`).
    pub instead: &'static [(&'static str, &'static SettingDef, &'static str)],
}

impl KindDef {
    /// The kind's setting with this key (its own wording of a shared one).
    pub fn setting(&self, key: &str) -> Option<&'static SettingDef> {
        self.settings.iter().copied().find(|d| d.key == key)
    }

    /// The kind's setting set by this flag (without dashes).
    pub fn by_flag(&self, flag: &str) -> Option<&'static SettingDef> {
        self.settings.iter().copied().find(|d| d.flag == Some(flag))
    }
}

/// A kind's table of the spec (`[workload.<kind>]`), as the registry puts it in
/// [`WorkloadSpec`].
pub trait KindTable: Default + PartialEq {
    /// Whether the stored JSON leaves the table out: at its defaults, for kinds added since
    /// specs were first stored, so every spec stored before reads and prints as it did (the
    /// first kinds' tables are always written: queries read `$.smallfiles.sync`).
    fn omitted(&self) -> bool {
        *self == Self::default()
    }
}

/// A kind's own settings, the typed part of a [`WorkloadSpec`] ([`KindSpec`](super::super::KindSpec)
/// holds one per kind): read from and written to the flat form, checked, described, and
/// asked the questions code of every kind asks (a sync call, open flags).
pub trait KindParams: std::fmt::Debug {
    /// The kind's settings read from the flat form.
    fn from_flat(flat: &FlatSpec) -> Self
    where
        Self: Sized;

    /// Writes the kind's settings into the flat form (its table and the shared fields it
    /// has).
    fn write_flat(&self, flat: &mut FlatSpec);

    /// Its checks: each setting's range and the cross-field rules (the common settings'
    /// checks are `WorkloadSpec::problems`').
    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>);

    /// The spec in one line ([`WorkloadSpec::describe`]).
    fn describe(&self, spec: &WorkloadSpec) -> String;

    /// What one durable operation of a run is, or why it has none.
    fn durable_op(&self, spec: &WorkloadSpec) -> Result<DurableOp, NoDurableOp>;

    /// The sync call, for the kinds that have one.
    fn sync(&self) -> Option<SyncMethod> {
        None
    }

    /// Writes between two syncs, for the kinds that have the setting.
    fn sync_every(&self) -> Option<u32> {
        None
    }

    /// Whether each sync follows no write (fileio's `sync_only`: an empty fsync's cost).
    fn syncs_unchanged_files(&self) -> bool {
        false
    }

    /// Whether each thread's last write goes without its periodic sync (fileio's fio rule
    /// for a run that stops by size; see its implementation).
    fn skips_last_periodic_sync(&self, _common: &crate::spec::CommonSpec) -> bool {
        false
    }

    /// The open flags of the test files (none for kinds without the setting).
    fn open_flags(&self) -> OpenFlags {
        OpenFlags::default()
    }

    /// Start times one file of a worker may hold before a sync covers them, for the kinds
    /// whose durable operation is a write and the sync after it (0 for the others).
    fn pending_starts(&self) -> u64 {
        0
    }

    /// The setting that asks for io_uring, when the spec needs it (the `io_uring` engine,
    /// grouplog's `uring` strategy).
    fn io_uring_setting(&self) -> Option<super::super::Setting> {
        None
    }

    /// Bytes each thread writes when neither a duration nor a request count is set, for
    /// kinds that stop by bytes (fileio).
    fn bytes_per_thread(&self) -> Option<u64> {
        None
    }

    /// A crash test's files (issue 33): the run directory's files that the kind's
    /// acknowledgements number, in order, or why these settings do not acknowledge yet.
    fn acknowledged_files(
        &self,
        _spec: &WorkloadSpec,
    ) -> Result<crate::crashlog::AckedFiles, NoAcks> {
        Err(NoAcks::because(
            "this kind does not acknowledge its records yet",
        ))
    }
}

/// Why a workload cannot be crash-tested: its records are not acknowledged (and the setting
/// that decides it, when one does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoAcks {
    /// Why, in a few words.
    pub why: &'static str,
    /// The setting to change, when changing one would make it crash-testable.
    pub setting: Option<super::super::Setting>,
}

impl NoAcks {
    /// A refusal no single setting lifts.
    pub const fn because(why: &'static str) -> NoAcks {
        NoAcks { why, setting: None }
    }

    /// A refusal `setting` decides.
    pub const fn setting(setting: super::super::Setting, why: &'static str) -> NoAcks {
        NoAcks {
            why,
            setting: Some(setting),
        }
    }
}

impl std::fmt::Display for NoAcks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.why)
    }
}
