//! Typed references to the settings a user can change, so library messages can say which
//! setting to change without naming a front end's control. The library words a setting
//! neutrally (its preset key, `block_size`); the CLI renders it as its flag (`--bs`) and the
//! window as its form label ("Block size"), each from one table of its own.

use std::borrow::Cow;
use std::fmt;

use super::kinds::def::SettingDef;
use super::kinds::{common, fileio, fileserver, grouplog, smallfiles};

/// A setting a message can point the user at: a workload field (its row of a kind's
/// settings table) or a run, scratch, report or database option.
#[derive(Clone, Copy, Debug)]
pub enum Setting {
    /// A workload field: its row of a settings table (`grouplog.record_size`). Two fields are
    /// the same setting when their stored names are ([`SettingDef::wire`]): a kind's own
    /// wording of a shared row (grouplog's "Writers") is still `threads`.
    Field(&'static SettingDef),
    /// Any workload field by its key (`key=value`).
    Set,
    /// A preset's scale factor.
    Scale,
    /// A preset's series of variants.
    Series,
    /// The sweep of a preset's series (`series.sweep`).
    SeriesSweep,
    /// One run per value of a numeric field.
    Sweep,
    /// Runs per configuration.
    Repeat,
    /// The commit advisor's p99 latency budget.
    AdviseBudget,
    /// The configurations of a matrix.
    Matrix,
    /// The directory a run writes its files in.
    Target,
    /// Keep the test files after the run.
    Keep,
    /// Run on a directory other users can write to.
    AllowSharedTarget,
    /// Trace the kernel's side of the run (`auto`, `on`, `off`).
    KernelTrace,
    /// The database file.
    Database,
    /// Replace an existing output file.
    Force,
    /// A scratch filesystem's type.
    ScratchFs,
    /// mkfs options of a scratch filesystem.
    MkfsOpts,
    /// mount options of a scratch filesystem.
    MountOpts,
    /// Where a scratch image lives (disk or ram).
    Backing,
    /// A scratch image's size.
    ScratchSize,
    /// A scratch filesystem's name.
    ScratchName,
    /// A block device to make the scratch filesystem on.
    Device,
    /// The confirmation that repeats the device to wipe.
    DestroyDataOn,
    /// The first byte of a bare-device run's range.
    DeviceOffset,
    /// The length of a bare-device run's range.
    DeviceSize,
    /// Confirms overwriting the filesystem or partition-table signature on a device.
    OverwriteSignature,
    /// `kind`: the workload kind.
    Kind,
}

/// The options that are not workload fields.
const OPTIONS: [Setting; 25] = [
    Setting::Set,
    Setting::Scale,
    Setting::Series,
    Setting::SeriesSweep,
    Setting::Sweep,
    Setting::Repeat,
    Setting::Matrix,
    Setting::Target,
    Setting::Keep,
    Setting::AllowSharedTarget,
    Setting::KernelTrace,
    Setting::Database,
    Setting::Force,
    Setting::ScratchFs,
    Setting::MkfsOpts,
    Setting::MountOpts,
    Setting::Backing,
    Setting::ScratchSize,
    Setting::ScratchName,
    Setting::Device,
    Setting::DestroyDataOn,
    Setting::DeviceOffset,
    Setting::DeviceSize,
    Setting::OverwriteSignature,
    Setting::Kind,
];

/// Shorthands for the rows library messages name most (a kind's own code may as well write
/// `Setting::Field(&RECORD_SIZE)`).
impl Setting {
    /// `threads`.
    pub const THREADS: Setting = Setting::Field(&common::THREADS);
    /// `threads` of a fileserver run: its clients.
    pub const CLIENTS: Setting = Setting::Field(&common::CLIENTS);
    /// `duration_s`.
    pub const DURATION: Setting = Setting::Field(&common::DURATION);
    /// `requests`.
    pub const REQUESTS: Setting = Setting::Field(&common::REQUESTS);
    /// `warmup_s`.
    pub const WARMUP: Setting = Setting::Field(&common::WARMUP);
    /// `interval_ms`.
    pub const INTERVAL_MS: Setting = Setting::Field(&common::INTERVAL);
    /// `settle`.
    pub const SETTLE: Setting = Setting::Field(&common::SETTLE);
    /// `sync`.
    pub const SYNC: Setting = Setting::Field(&common::SYNC);
    /// `sync_every`.
    pub const SYNC_EVERY: Setting = Setting::Field(&common::SYNC_EVERY);
    /// `open_flags`.
    pub const OPEN_FLAGS: Setting = Setting::Field(&common::OPEN_FLAGS);
    /// `prepare`.
    pub const PREPARE: Setting = Setting::Field(&common::PREPARE);
    /// `block_size`.
    pub const BLOCK_SIZE: Setting = Setting::Field(&fileio::BLOCK_SIZE);
    /// `file_size`.
    pub const FILE_SIZE: Setting = Setting::Field(&fileio::FILE_SIZE);
    /// `io_size`.
    pub const IO_SIZE: Setting = Setting::Field(&fileio::IO_SIZE);
    /// `shared_files`.
    pub const SHARED_FILES: Setting = Setting::Field(&fileio::SHARED_FILES);
    /// `pattern`.
    pub const PATTERN: Setting = Setting::Field(&fileio::PATTERN);
    /// `mode`.
    pub const MODE: Setting = Setting::Field(&fileio::MODE);
    /// `ioengine`.
    pub const IO_ENGINE: Setting = Setting::Field(&fileio::IOENGINE);
    /// `iodepth`.
    pub const IO_DEPTH: Setting = Setting::Field(&fileio::IODEPTH);
    /// `link_sync`.
    pub const LINK_SYNC: Setting = Setting::Field(&fileio::LINK_SYNC);
    /// `fixedbufs`.
    pub const FIXED_BUFS: Setting = Setting::Field(&fileio::FIXEDBUFS);
    /// `sync_only`.
    pub const SYNC_ONLY: Setting = Setting::Field(&fileio::SYNC_ONLY);
    /// `final_sync`.
    pub const FINAL_SYNC: Setting = Setting::Field(&fileio::FINAL_SYNC);
    /// `sync_order`.
    pub const SYNC_ORDER: Setting = Setting::Field(&fileio::SYNC_ORDER);
    /// `smallfiles.files_per_thread`.
    pub const SMALLFILES_FILES: Setting = Setting::Field(&smallfiles::FILES);
    /// `smallfiles.file_size`.
    pub const SMALLFILES_FILE_SIZE: Setting = Setting::Field(&smallfiles::FILE_SIZE);
    /// `smallfiles.sync`.
    pub const SMALLFILES_SYNC: Setting = Setting::Field(&smallfiles::SYNC);
    /// `smallfiles.xattr`.
    pub const SMALLFILES_XATTR: Setting = Setting::Field(&smallfiles::XATTR);
    /// `smallfiles.chown`.
    pub const SMALLFILES_CHOWN: Setting = Setting::Field(&smallfiles::CHOWN);
    /// `smallfiles.unlink`.
    pub const SMALLFILES_UNLINK: Setting = Setting::Field(&smallfiles::UNLINK);
    /// `smallfiles.dir_sync`.
    pub const SMALLFILES_DIR_SYNC: Setting = Setting::Field(&smallfiles::DIR_SYNC);
    /// `smallfiles.rename_over`.
    pub const SMALLFILES_RENAME_OVER: Setting = Setting::Field(&smallfiles::RENAME_OVER);
    /// `fileserver.files_per_client`.
    pub const FILES_PER_CLIENT: Setting = Setting::Field(&fileserver::FILES_PER_CLIENT);
    /// `grouplog.record_size`.
    pub const RECORD_SIZE: Setting = Setting::Field(&grouplog::RECORD_SIZE);
    /// `grouplog.log_size`.
    pub const LOG_SIZE: Setting = Setting::Field(&grouplog::LOG_SIZE);
    /// `grouplog.strategy`.
    pub const STRATEGY: Setting = Setting::Field(&grouplog::STRATEGY);
}

impl Setting {
    /// Every setting: the options, then every kind's rows (each once), for the front ends'
    /// table tests.
    pub fn all() -> Vec<Setting> {
        let mut out = OPTIONS.to_vec();
        out.extend(super::all_settings().into_iter().map(Setting::Field));
        out
    }

    /// The neutral name: a workload field's preset key (`block_size`, `grouplog.log_size`),
    /// else a short snake_case name of the option (`target`, `database`).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Field(def) => def.key,
            Setting::SeriesSweep => "series.sweep",
            Setting::ScratchFs => "fs",
            Setting::ScratchSize => "size",
            Setting::ScratchName => "name",
            Setting::DeviceOffset => "offset",
            Setting::DeviceSize => "range",
            other => other.wire(),
        }
    }

    /// The name a stored failure or warning uses (unique per setting).
    pub fn wire(self) -> &'static str {
        match self {
            Setting::Field(def) => def.wire,
            Setting::Set => "set",
            Setting::Scale => "scale",
            Setting::Series => "series",
            Setting::SeriesSweep => "series_sweep",
            Setting::Sweep => "sweep",
            Setting::Repeat => "repeat",
            Setting::AdviseBudget => "budget_p99_us",
            Setting::Matrix => "matrix",
            Setting::Target => "target",
            Setting::Keep => "keep",
            Setting::AllowSharedTarget => "allow_shared_target",
            Setting::KernelTrace => "kernel_trace",
            Setting::Database => "database",
            Setting::Force => "force",
            Setting::ScratchFs => "scratch_fs",
            Setting::MkfsOpts => "mkfs_opts",
            Setting::MountOpts => "mount_opts",
            Setting::Backing => "backing",
            Setting::ScratchSize => "scratch_size",
            Setting::ScratchName => "scratch_name",
            Setting::Device => "device",
            Setting::DestroyDataOn => "destroy_data_on",
            Setting::DeviceOffset => "device_offset",
            Setting::DeviceSize => "device_size",
            Setting::OverwriteSignature => "overwrite_signature",
            Setting::Kind => "kind",
        }
    }

    /// The setting stored under `wire` (see [`Setting::wire`]).
    pub fn from_wire(wire: &str) -> Option<Setting> {
        Setting::all().into_iter().find(|s| s.wire() == wire)
    }

    /// The settings-table row of a workload setting (`None` for the run, scratch, report
    /// and database options).
    pub fn def(self) -> Option<&'static SettingDef> {
        match self {
            Setting::Field(def) => Some(def),
            _ => None,
        }
    }

    /// Whether the setting is a workload field that `key=value` (a preset line) can set.
    pub fn is_workload_field(self) -> bool {
        matches!(self, Setting::Field(_))
    }
}

impl PartialEq for Setting {
    fn eq(&self, other: &Setting) -> bool {
        self.wire() == other.wire()
    }
}

impl Eq for Setting {}

impl std::hash::Hash for Setting {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.wire().hash(state);
    }
}

impl serde::Serialize for Setting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.wire())
    }
}

impl<'de> serde::Deserialize<'de> for Setting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = String::deserialize(d)?;
        Setting::from_wire(&wire)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown setting '{wire}'")))
    }
}

/// How a front end names a setting in a message.
pub trait SettingNames {
    /// The words for `setting`, with `value` when the message proposes one (`Some("4k")`:
    /// "set it to 4k").
    fn name(&self, setting: Setting, value: Option<&str>) -> String;

    /// The setting as the subject of an error ("block_size: 100 bytes is ..."): the preset
    /// key unless the front end says otherwise.
    fn subject(&self, setting: Setting) -> String {
        setting.key().to_string()
    }

    /// Where this front end makes a scratch filesystem (a message proposing one says it):
    /// the command unless the front end has its own place for it.
    fn make_scratch(&self) -> String {
        "fsynclab scratch create".to_string()
    }

    /// Where this front end does `action` (a message proposing one says it): the command
    /// unless the front end has its own place for it.
    fn action(&self, action: Action<'_>) -> String {
        match action {
            Action::Clean => "fsynclab clean".to_string(),
            Action::ListRuns => "`fsynclab list`".to_string(),
            Action::ListScratch => "fsynclab scratch list".to_string(),
            Action::DestroyScratch(name) => format!("fsynclab scratch destroy {name}"),
            Action::CleanAsOwner => "run `fsynclab clean` as its owner".to_string(),
            Action::ExportBundle => "fsynclab export (format bundle)".to_string(),
            Action::Import => "fsynclab import".to_string(),
        }
    }
}

/// Something a library message proposes the user do next, worded by the front end that
/// shows the message ([`SettingNames::action`]): the CLI names its command, the window the
/// control that does it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action<'a> {
    /// Remove stale run directories from a target.
    Clean,
    /// See the stored runs (their ids, labels and experiments).
    ListRuns,
    /// See the scratch filesystems.
    ListScratch,
    /// Destroy the scratch filesystem with this name.
    DestroyScratch(&'a str),
    /// Remove stale run directories as the database's owner (another user's database is
    /// not trusted to name directories to remove).
    CleanAsOwner,
    /// Write selected runs to a bundle file another lab can import.
    ExportBundle,
    /// Import a bundle or fio's JSON output.
    Import,
}

/// The library's own wording: the preset key, with ` = value` when a value is proposed
/// (`block_size = 4k`), as a preset file would say it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Neutral;

impl SettingNames for Neutral {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("{} = {v}", setting.key()),
            None => setting.key().to_string(),
        }
    }
}

/// One piece of a [`Hint`]: text, or a setting (with a proposed value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Words said as they are.
    Text(Cow<'static, str>),
    /// A setting, named by the front end that shows the message.
    Setting(Setting, Option<String>),
}

impl From<&'static str> for Piece {
    fn from(text: &'static str) -> Self {
        Piece::Text(Cow::Borrowed(text))
    }
}

impl From<String> for Piece {
    fn from(text: String) -> Self {
        Piece::Text(Cow::Owned(text))
    }
}

impl From<Setting> for Piece {
    fn from(setting: Setting) -> Self {
        Piece::Setting(setting, None)
    }
}

impl<V: Into<String>> From<(Setting, V)> for Piece {
    fn from((setting, value): (Setting, V)) -> Self {
        Piece::Setting(setting, Some(value.into()))
    }
}

/// A message (usually the fix of an error) that may refer to settings: text and typed
/// setting references, worded by whoever shows it. Build one with [`hint!`](crate::hint).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hint(pub Vec<Piece>);

impl Hint {
    /// The message with every setting named by `names`.
    pub fn render(&self, names: &dyn SettingNames) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Setting(s, value) => out.push_str(&names.name(*s, value.as_deref())),
            }
        }
        out
    }

    /// The settings the message names, in order.
    pub fn settings(&self) -> impl Iterator<Item = Setting> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Setting(s, _) => Some(*s),
            Piece::Text(_) => None,
        })
    }
}

impl From<&'static str> for Hint {
    fn from(text: &'static str) -> Self {
        Hint(vec![text.into()])
    }
}

impl From<String> for Hint {
    fn from(text: String) -> Self {
        Hint(vec![text.into()])
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Neutral))
    }
}

/// Builds a [`Hint`] from pieces: string literals or `String`s (text), a [`Setting`], or a
/// `(Setting, value)` pair: `hint!("use e.g. 4k (", Setting::BlockSize, ")")`.
#[macro_export]
macro_rules! hint {
    ($($piece:expr),* $(,)?) => {
        $crate::spec::Hint(vec![$($crate::spec::Piece::from($piece)),*])
    };
}

/// An error whose message a front end can word with its own names for settings; its
/// `Display` is the neutral wording.
pub trait Worded {
    /// The message with every setting named by `names`.
    fn worded(&self, names: &dyn SettingNames) -> String;

    /// Whether the message already says what its `source` means (an errno turned into
    /// advice), so a front end printing the chain of causes stops here.
    fn explains_cause(&self) -> bool {
        false
    }
}

/// Names settings as `<key>` (`<key value>` with a value), so a test sees exactly which
/// settings a message names and where.
#[cfg(any(test, feature = "test-support"))]
pub struct KeyNames;

#[cfg(any(test, feature = "test-support"))]
impl SettingNames for KeyNames {
    fn name(&self, setting: Setting, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("<{} {v}>", setting.key()),
            None => format!("<{}>", setting.key()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Upper;
    impl SettingNames for Upper {
        fn name(&self, setting: Setting, value: Option<&str>) -> String {
            format!("<{}{}>", setting.key().to_uppercase(), value.unwrap_or(""))
        }
    }

    #[test]
    fn a_hint_names_its_settings_by_the_names_given() {
        let h = hint!(
            "use ",
            (Setting::SYNC, "none"),
            " or lower ",
            Setting::BLOCK_SIZE
        );
        assert_eq!(h.to_string(), "use sync = none or lower block_size");
        assert_eq!(h.render(&Upper), "use <SYNCnone> or lower <BLOCK_SIZE>");
        assert_eq!(
            h.settings().collect::<Vec<_>>(),
            [Setting::SYNC, Setting::BLOCK_SIZE]
        );
    }

    #[test]
    fn keys_are_distinct_but_for_clients_and_threads() {
        let all = Setting::all();
        let mut keys: Vec<_> = all.iter().map(|s| s.key()).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n - 1, "only Clients shares Threads' key");
        assert!(all.iter().all(|s| !s.key().is_empty()));
    }

    /// Every name a stored failure or warning used before the settings tables still reads
    /// back as its setting, and is written the same way.
    #[test]
    fn stored_names_read_back() {
        let stored = [
            "threads",
            "clients",
            "block_size",
            "file_size",
            "io_size",
            "duration",
            "requests",
            "sync",
            "sync_every",
            "shared_files",
            "interval_ms",
            "pattern",
            "mode",
            "open_flags",
            "prepare",
            "smallfiles_files",
            "smallfiles_file_size",
            "smallfiles_sync",
            "smallfiles_xattr",
            "files_per_client",
            "record_size",
            "log_size",
            "strategy",
            "set",
            "scale",
            "series",
            "series_sweep",
            "sweep",
            "repeat",
            "matrix",
            "target",
            "keep",
            "allow_shared_target",
            "kernel_trace",
            "database",
            "force",
            "scratch_fs",
            "mkfs_opts",
            "mount_opts",
            "backing",
            "scratch_size",
            "scratch_name",
            "device",
            "destroy_data_on",
            "kind",
            "settle",
            "warmup",
            "io_engine",
            "io_depth",
            "link_sync",
            "fixed_bufs",
            "sync_order",
        ];
        for name in stored {
            let json = format!("\"{name}\"");
            let s: Setting = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(serde_json::to_string(&s).unwrap(), json);
        }
        assert_eq!(
            serde_json::from_str::<Setting>("\"record_size\"")
                .unwrap()
                .key(),
            "grouplog.record_size"
        );
        assert!(serde_json::from_str::<Setting>("\"no_such\"").is_err());
    }
}
