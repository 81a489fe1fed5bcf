//! Typed references to the settings a user can change, so library messages can say which
//! setting to change without naming a front end's control. The library words a setting
//! neutrally (its preset key, `block_size`); the CLI renders it as its flag (`--bs`) and the
//! window as its form label ("Block size"), each from one table of its own.

use std::borrow::Cow;
use std::fmt;

use super::kinds::def::SettingDef;

/// A setting a message can point the user at: a workload field (by its preset key) or a
/// run, scratch, report or database option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// `threads`: worker threads.
    Threads,
    /// `threads` of a fileserver run: its clients.
    Clients,
    /// `block_size`: bytes per write.
    BlockSize,
    /// `file_size`: size of each fileio test file.
    FileSize,
    /// `io_size`: bytes each thread writes.
    IoSize,
    /// `duration_s`: how long a run lasts.
    Duration,
    /// `requests`: writes (or events) in total.
    Requests,
    /// `sync`: the sync method.
    Sync,
    /// `sync_every`: writes between syncs.
    SyncEvery,
    /// `shared_files`: files shared by all threads.
    SharedFiles,
    /// `interval_ms`: the sampling interval.
    IntervalMs,
    /// `pattern`: block order.
    Pattern,
    /// `mode`: fio or sysbench counting.
    Mode,
    /// `open_flags`: extra open(2) flags.
    OpenFlags,
    /// `prepare`: how files are made ready.
    Prepare,
    /// `smallfiles.files_per_thread`.
    SmallfilesFiles,
    /// `smallfiles.file_size`.
    SmallfilesFileSize,
    /// `smallfiles.sync`: how each small file is made durable.
    SmallfilesSync,
    /// `smallfiles.xattr`: the 64-byte xattr per file.
    SmallfilesXattr,
    /// `fileserver.files_per_client`.
    FilesPerClient,
    /// `grouplog.record_size`.
    RecordSize,
    /// `grouplog.log_size`.
    LogSize,
    /// `grouplog.strategy`.
    Strategy,
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
    /// `kind`: the workload kind.
    Kind,
    /// `settle`: wait for the device and page cache to go quiet after preparing.
    Settle,
    /// `warmup_s`: seconds at the start left out of the figures.
    Warmup,
    /// `ioengine`: synchronous calls or io_uring.
    IoEngine,
    /// `iodepth`: io_uring requests in flight per thread.
    IoDepth,
    /// `link_sync`: each sync linked behind its write.
    LinkSync,
    /// `fixedbufs`: registered write buffers.
    FixedBufs,
    /// `sync_order`: whether an io_uring sync waits for the writes before it.
    SyncOrder,
}

impl Setting {
    /// Every setting, for the front ends' table tests.
    pub const ALL: [Setting; 52] = [
        Setting::Threads,
        Setting::Clients,
        Setting::BlockSize,
        Setting::FileSize,
        Setting::IoSize,
        Setting::Duration,
        Setting::Requests,
        Setting::Sync,
        Setting::SyncEvery,
        Setting::SharedFiles,
        Setting::IntervalMs,
        Setting::Pattern,
        Setting::Mode,
        Setting::OpenFlags,
        Setting::Prepare,
        Setting::SmallfilesFiles,
        Setting::SmallfilesFileSize,
        Setting::SmallfilesSync,
        Setting::SmallfilesXattr,
        Setting::FilesPerClient,
        Setting::RecordSize,
        Setting::LogSize,
        Setting::Strategy,
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
        Setting::Kind,
        Setting::Settle,
        Setting::Warmup,
        Setting::IoEngine,
        Setting::IoDepth,
        Setting::LinkSync,
        Setting::FixedBufs,
        Setting::SyncOrder,
    ];

    /// The neutral name: a workload field's preset key (`block_size`, `grouplog.log_size`),
    /// else a short snake_case name of the option (`target`, `database`).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Threads | Setting::Clients => "threads",
            Setting::BlockSize => "block_size",
            Setting::FileSize => "file_size",
            Setting::IoSize => "io_size",
            Setting::Duration => "duration_s",
            Setting::Requests => "requests",
            Setting::Sync => "sync",
            Setting::SyncEvery => "sync_every",
            Setting::SharedFiles => "shared_files",
            Setting::IntervalMs => "interval_ms",
            Setting::Pattern => "pattern",
            Setting::Mode => "mode",
            Setting::OpenFlags => "open_flags",
            Setting::Prepare => "prepare",
            Setting::SmallfilesFiles => "smallfiles.files_per_thread",
            Setting::SmallfilesFileSize => "smallfiles.file_size",
            Setting::SmallfilesSync => "smallfiles.sync",
            Setting::SmallfilesXattr => "smallfiles.xattr",
            Setting::FilesPerClient => "fileserver.files_per_client",
            Setting::RecordSize => "grouplog.record_size",
            Setting::LogSize => "grouplog.log_size",
            Setting::Strategy => "grouplog.strategy",
            Setting::Set => "set",
            Setting::Scale => "scale",
            Setting::Series => "series",
            Setting::SeriesSweep => "series.sweep",
            Setting::Sweep => "sweep",
            Setting::Repeat => "repeat",
            Setting::Matrix => "matrix",
            Setting::Target => "target",
            Setting::Keep => "keep",
            Setting::AllowSharedTarget => "allow_shared_target",
            Setting::KernelTrace => "kernel_trace",
            Setting::Database => "database",
            Setting::Force => "force",
            Setting::ScratchFs => "fs",
            Setting::MkfsOpts => "mkfs_opts",
            Setting::MountOpts => "mount_opts",
            Setting::Backing => "backing",
            Setting::ScratchSize => "size",
            Setting::ScratchName => "name",
            Setting::Device => "device",
            Setting::DestroyDataOn => "destroy_data_on",
            Setting::Kind => "kind",
            Setting::Settle => "settle",
            Setting::Warmup => "warmup_s",
            Setting::IoEngine => "ioengine",
            Setting::IoDepth => "iodepth",
            Setting::LinkSync => "link_sync",
            Setting::FixedBufs => "fixedbufs",
            Setting::SyncOrder => "sync_order",
        }
    }

    /// The settings-table row of a workload setting (`None` for the run, scratch, report
    /// and database options).
    pub fn def(self) -> Option<&'static SettingDef> {
        use super::kinds::{common, fileio, fileserver, grouplog, smallfiles};
        Some(match self {
            Setting::Threads => &common::THREADS,
            Setting::Clients => &common::CLIENTS,
            Setting::Duration => &common::DURATION,
            Setting::Requests => &common::REQUESTS,
            Setting::Warmup => &common::WARMUP,
            Setting::IntervalMs => &common::INTERVAL,
            Setting::Settle => &common::SETTLE,
            Setting::Sync => &common::SYNC,
            Setting::SyncEvery => &common::SYNC_EVERY,
            Setting::OpenFlags => &common::OPEN_FLAGS,
            Setting::Prepare => &common::PREPARE,
            Setting::BlockSize => &fileio::BLOCK_SIZE,
            Setting::FileSize => &fileio::FILE_SIZE,
            Setting::IoSize => &fileio::IO_SIZE,
            Setting::SharedFiles => &fileio::SHARED_FILES,
            Setting::Pattern => &fileio::PATTERN,
            Setting::Mode => &fileio::MODE,
            Setting::IoEngine => &fileio::IOENGINE,
            Setting::IoDepth => &fileio::IODEPTH,
            Setting::LinkSync => &fileio::LINK_SYNC,
            Setting::FixedBufs => &fileio::FIXEDBUFS,
            Setting::SyncOrder => &fileio::SYNC_ORDER,
            Setting::SmallfilesFiles => &smallfiles::FILES,
            Setting::SmallfilesFileSize => &smallfiles::FILE_SIZE,
            Setting::SmallfilesSync => &smallfiles::SYNC,
            Setting::SmallfilesXattr => &smallfiles::XATTR,
            Setting::FilesPerClient => &fileserver::FILES_PER_CLIENT,
            Setting::RecordSize => &grouplog::RECORD_SIZE,
            Setting::LogSize => &grouplog::LOG_SIZE,
            Setting::Strategy => &grouplog::STRATEGY,
            _ => return None,
        })
    }

    /// Whether the setting is a workload field that `key=value` (a preset line) can set.
    pub fn is_workload_field(self) -> bool {
        !matches!(
            self,
            Setting::Set
                | Setting::Scale
                | Setting::Series
                | Setting::SeriesSweep
                | Setting::Sweep
                | Setting::Repeat
                | Setting::Matrix
                | Setting::Target
                | Setting::Keep
                | Setting::AllowSharedTarget
                | Setting::KernelTrace
                | Setting::Database
                | Setting::Force
                | Setting::ScratchFs
                | Setting::MkfsOpts
                | Setting::MountOpts
                | Setting::Backing
                | Setting::ScratchSize
                | Setting::ScratchName
                | Setting::Device
                | Setting::DestroyDataOn
                // The kind is chosen, not set by `key=value`.
                | Setting::Kind
        )
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
            (Setting::Sync, "none"),
            " or lower ",
            Setting::BlockSize
        );
        assert_eq!(h.to_string(), "use sync = none or lower block_size");
        assert_eq!(h.render(&Upper), "use <SYNCnone> or lower <BLOCK_SIZE>");
        assert_eq!(
            h.settings().collect::<Vec<_>>(),
            [Setting::Sync, Setting::BlockSize]
        );
    }

    #[test]
    fn keys_are_distinct_but_for_clients_and_threads() {
        let mut keys: Vec<_> = Setting::ALL.iter().map(|s| s.key()).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n - 1, "only Clients shares Threads' key");
        let fields = Setting::ALL
            .iter()
            .filter(|s| s.is_workload_field())
            .count();
        assert_eq!(fields, 30, "the spec's settable fields, Clients included");
        assert!(Setting::ALL.iter().all(|s| !s.key().is_empty()));
    }

    #[test]
    fn workload_fields_are_settable_keys() {
        let spec = crate::spec::WorkloadSpec::default();
        for s in Setting::ALL.iter().filter(|s| s.is_workload_field()) {
            let table = toml::Value::try_from(&spec).unwrap();
            let mut slot = Some(&table);
            for part in s.key().split('.') {
                slot = slot.and_then(|t| t.get(part));
            }
            // Optional fields (io_size, duration_s, requests, shared_files) are absent
            // while unset, and the io_uring ones while at their synchronous default; every
            // other key names a value of the spec.
            let optional = matches!(
                s,
                Setting::IoSize
                    | Setting::Duration
                    | Setting::Requests
                    | Setting::SharedFiles
                    | Setting::Warmup
                    | Setting::IoEngine
                    | Setting::IoDepth
                    | Setting::LinkSync
                    | Setting::FixedBufs
                    | Setting::SyncOrder
            );
            assert!(optional || slot.is_some(), "{} is not a spec key", s.key());
        }
    }
}
