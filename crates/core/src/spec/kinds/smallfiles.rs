//! `smallfiles`: each thread creates files in its own directory (fs_mark's shape): its
//! parameters and checks.

use serde::{Deserialize, Serialize};

use super::super::{DurableOp, NoDurableOp};
use super::super::{
    MAX_BLOCK_SIZE, Setting, SpecError, WorkloadKind, WorkloadSpec, format_size, size, spec_error,
};
use super::common;
use super::super::FlatSpec;
use super::def::{KindDef, KindParams, Section, SettingDef, Ty};

/// How a small-file writer makes each file durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSync {
    /// fsync(2) before close (fs_mark `-S 1`).
    #[default]
    Fsync,
    /// fdatasync(2) before close.
    Fdatasync,
    /// Open with O_SYNC: the write is durable when it returns.
    OSync,
    /// No sync: buffered creates (fs_mark `-S 0`).
    None,
    /// No per-file sync; one syncfs(2) per thread after its last file (timed as a sync).
    Syncfs,
}

impl FileSync {
    /// The name used on the command line and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            FileSync::Fsync => "fsync",
            FileSync::Fdatasync => "fdatasync",
            FileSync::OSync => "o_sync",
            FileSync::None => "none",
            FileSync::Syncfs => "syncfs",
        }
    }
}

impl std::str::FromStr for FileSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        super::super::parse_name(s, "fsync, fdatasync, o_sync, none, syncfs")
    }
}

/// `smallfiles`: each thread creates files in its own directory (fs_mark; the synchronous
/// writers of "jbd: transaction batching for multi-threaded synchronous writers").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmallfilesSpec {
    /// Files each thread creates (the create phase stops earlier when `duration_s` is set).
    pub files_per_thread: u64,
    /// Bytes written into each file with one write call; 0 creates empty files.
    #[serde(with = "size::serde_size")]
    pub file_size: u64,
    /// How each file is made durable.
    pub sync: FileSync,
    /// Set a 64-byte extended attribute (`user.fsynclab`) on each file after writing it.
    pub xattr: bool,
    /// After creating, a separate timed phase that chowns every file (fs_mark-style).
    pub chown: bool,
    /// After that, a separate timed phase that unlinks every file.
    pub unlink: bool,
    /// fsync the thread's directory after each file is made durable (and renamed), so its
    /// name is durable too.
    pub dir_sync: bool,
    /// Write each file under its own name, then rename it over the thread's `current` file
    /// (the atomic-replace idiom: write, sync, rename).
    pub rename_over: bool,
}

/// The kind's table of the spec (`[workload.smallfiles]`).
pub type Table = SmallfilesSpec;

impl super::def::KindTable for SmallfilesSpec {
    /// Always written: stored specs have had it from the start.
    fn omitted(&self) -> bool {
        false
    }
}

impl Default for SmallfilesSpec {
    fn default() -> Self {
        Self {
            files_per_thread: 1000,
            file_size: 4096,
            sync: FileSync::Fsync,
            xattr: false,
            chown: false,
            unlink: false,
            dir_sync: false,
            rename_over: false,
        }
    }
}

/// Problems of a smallfiles spec.
fn problems(spec: &WorkloadSpec, s: &Spec, errs: &mut Vec<SpecError>) {
    if s.files_per_thread == 0 || s.files_per_thread > 100_000_000 {
        errs.push(spec_error(
            Setting::SMALLFILES_FILES,
            format!("{} files per thread", s.files_per_thread),
            crate::hint!("use 1 to 100000000 (", Setting::SMALLFILES_FILES, ")"),
        ));
    }
    if s.file_size > super::super::MAX_BLOCK_SIZE {
        errs.push(spec_error(
            Setting::SMALLFILES_FILE_SIZE,
            format!("{} per file", format_size(s.file_size)),
            crate::hint!(
                "small files are written with one call: use 0 to 64M (",
                Setting::SMALLFILES_FILE_SIZE,
                ")"
            ),
        ));
    }
    if s.rename_over && (s.chown || s.unlink) {
        errs.push(spec_error(
            Setting::SMALLFILES_RENAME_OVER,
            "rename-over with a chown or unlink phase",
            crate::hint!(
                "renamed files replace each other, so no files are left to walk: drop ",
                Setting::SMALLFILES_CHOWN,
                " and ",
                Setting::SMALLFILES_UNLINK,
                ", or ",
                Setting::SMALLFILES_RENAME_OVER
            ),
        ));
    }
    if spec.common.requests.is_some() {
        errs.push(spec_error(
            Setting::REQUESTS,
            "a request count on a smallfiles run",
            crate::hint!(
                "smallfiles stops after ",
                Setting::SMALLFILES_FILES,
                " per thread (or ",
                Setting::DURATION,
                "); drop ",
                Setting::REQUESTS
            ),
        ));
    }
}

/// A smallfiles spec in one line ([`WorkloadSpec::describe`]).
fn describe(spec: &WorkloadSpec, s: &Spec) -> String {
    let mut extras = Vec::new();
    if s.rename_over {
        extras.push("renamed over current");
    }
    if s.dir_sync {
        extras.push("directory fsync");
    }
    if s.xattr {
        extras.push("64-byte xattr");
    }
    if s.chown {
        extras.push("chown phase");
    }
    if s.unlink {
        extras.push("unlink phase");
    }
    let limit = match spec.common.duration_s {
        Some(d) => format!("up to {} files/thread or {d:.1} s", s.files_per_thread),
        None => format!("{} files/thread", s.files_per_thread),
    };
    format!(
        "smallfiles {} threads, {}, {}, sync {}{}{}",
        spec.common.threads,
        limit,
        if s.file_size == 0 {
            "empty files".to_string()
        } else {
            format!("{} each", format_size(s.file_size))
        },
        s.sync.as_str(),
        if extras.is_empty() { "" } else { ", " },
        extras.join(", ")
    )
}

/// smallfiles: a file made durable by its own sync (or O_SYNC).
fn durable_op(s: &Spec) -> Result<DurableOp, NoDurableOp> {
    match s.sync {
        FileSync::Fsync | FileSync::Fdatasync | FileSync::OSync => Ok(DurableOp::File),
        FileSync::None => Err(NoDurableOp::NoSync),
        FileSync::Syncfs => Err(NoDurableOp::Syncfs),
    }
}

/// `smallfiles.files_per_thread`: files each thread creates.
pub const FILES: SettingDef = SettingDef {
    key: "smallfiles.files_per_thread",
    wire: "smallfiles_files",
    ty: Ty::Count {
        min: 1,
        max: 100_000_000,
    },
    default: "1000",
    unit: "files per thread",
    help: "smallfiles: files each thread creates.",
    flag: Some("files"),
    label: "Files per thread",
    heading: "smallfiles",
    section: Section::Kind,
    scale: true,
    fio: None,
};

/// `smallfiles.file_size`: bytes per small file.
pub const FILE_SIZE: SettingDef = SettingDef {
    key: "smallfiles.file_size",
    wire: "smallfiles_file_size",
    ty: Ty::Size {
        min: 0,
        max: MAX_BLOCK_SIZE,
    },
    default: "4k",
    unit: "",
    help: "Size of each test file: 64M, 1G... (smallfiles: bytes per small file, 0 for \
           empty)",
    flag: Some("file-size"),
    label: "File size",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.sync`: how each small file is made durable.
pub const SYNC: SettingDef = SettingDef {
    key: "smallfiles.sync",
    wire: "smallfiles_sync",
    ty: Ty::Choice(&["fsync", "fdatasync", "o_sync", "none", "syncfs"]),
    default: "fsync",
    unit: "",
    help: "smallfiles: how each file is made durable: fsync, fdatasync, o_sync, none or \
           syncfs.",
    flag: Some("file-sync"),
    label: "File sync",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.xattr`: the 64-byte xattr per file.
pub const XATTR: SettingDef = SettingDef {
    key: "smallfiles.xattr",
    wire: "smallfiles_xattr",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "smallfiles: set a 64-byte extended attribute on each file.",
    flag: Some("xattr"),
    label: "64-byte xattr",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.chown`: a timed chown phase.
pub const CHOWN: SettingDef = SettingDef {
    key: "smallfiles.chown",
    wire: "smallfiles.chown",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "smallfiles: a timed chown phase over every file after the create phase.",
    flag: Some("chown"),
    label: "chown phase",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.unlink`: a timed unlink phase.
pub const UNLINK: SettingDef = SettingDef {
    key: "smallfiles.unlink",
    wire: "smallfiles.unlink",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "smallfiles: a timed unlink phase over every file at the end.",
    flag: Some("unlink"),
    label: "unlink phase",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.dir_sync`: fsync the directory after each file.
pub const DIR_SYNC: SettingDef = SettingDef {
    key: "smallfiles.dir_sync",
    wire: "smallfiles.dir_sync",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "smallfiles: fsync the thread's directory after each file (and its rename), so \
           the file's name is durable too.",
    flag: Some("dir-sync"),
    label: "fsync directory",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// `smallfiles.rename_over`: the atomic-replace idiom.
pub const RENAME_OVER: SettingDef = SettingDef {
    key: "smallfiles.rename_over",
    wire: "smallfiles.rename_over",
    ty: Ty::Flag,
    default: "false",
    unit: "",
    help: "smallfiles: after each file is synced, rename it over the thread's `current` \
           file (write, sync, rename: the atomic-replace idiom).",
    flag: Some("rename-over"),
    label: "rename over current",
    heading: "smallfiles",
    section: Section::Kind,
    scale: false,
    fio: None,
};

/// smallfiles: its settings, in the window's order.
pub const DEF: KindDef = KindDef {
    kind: WorkloadKind::Smallfiles,
    blurb: "each thread creates small files in its own directory and syncs each (fs_mark)",
    settings: &[
        &THREADS,
        &FILES,
        &FILE_SIZE,
        &SYNC,
        &XATTR,
        &RENAME_OVER,
        &DIR_SYNC,
        &CHOWN,
        &UNLINK,
        &common::DURATION,
        &common::SEED,
        &common::INTERVAL,
        &common::SETTLE,
    ],
    own_stop: Some("by file count"),
    workers: &THREADS,
    fills_disk: (&[&FILES, &FILE_SIZE], Some(&common::THREADS)),
    makes_inodes: Some((&[&FILES], Some(&common::THREADS))),
    open_files: &[&common::THREADS],
    write_unit: None,
    series_metric: "files_per_sec",
    instead: &[("open_flags", &SYNC, "o_sync"), ("sync", &SYNC, "fsync")],
};

/// smallfiles' part of the typed spec: its table.
pub type Spec = SmallfilesSpec;

impl KindParams for SmallfilesSpec {
    fn from_flat(flat: &FlatSpec) -> Self {
        flat.smallfiles.clone()
    }

    fn write_flat(&self, flat: &mut FlatSpec) {
        flat.smallfiles = self.clone();
    }

    fn problems(&self, spec: &WorkloadSpec, errs: &mut Vec<SpecError>) {
        problems(spec, self, errs);
    }

    fn describe(&self, spec: &WorkloadSpec) -> String {
        describe(spec, self)
    }

    fn durable_op(&self, _: &WorkloadSpec) -> Result<DurableOp, NoDurableOp> {
        durable_op(self)
    }

    /// Each file is a record (a whole file, acknowledged once it is durable: after its
    /// sync, rename and directory sync as asked; with `syncfs`, every file of the thread
    /// after it; with `none`, the control, after its close); renamed files are versions of
    /// their thread's `current` file.
    fn acknowledged_files(
        &self,
        spec: &WorkloadSpec,
    ) -> Result<crate::crashlog::AckedFiles, super::def::NoAcks> {
        if self.file_size < crate::crashlog::RECORD_HEADER as u64 {
            return Err(super::def::NoAcks::setting(
                Setting::SMALLFILES_FILE_SIZE,
                "a small file must hold a record header: 64 bytes or more",
            ));
        }
        if self.unlink {
            return Err(super::def::NoAcks::setting(
                Setting::SMALLFILES_UNLINK,
                "the unlink phase removes the files whose survival the crash test checks",
            ));
        }
        let dirs = (0..spec.common.threads).map(|t| format!("thread-{t}"));
        Ok(if self.rename_over {
            crate::crashlog::AckedFiles::Listed(dirs.map(|d| format!("{d}/{CURRENT}")).collect())
        } else {
            crate::crashlog::AckedFiles::PerRecord {
                dirs: dirs.collect(),
                prefix: NAME_PREFIX,
                digits: NAME_DIGITS,
            }
        })
    }
}

/// What a thread's file names start with: `f`, then the file's number in
/// [`NAME_DIGITS`] zero-padded digits (`f0000000042`).
pub const NAME_PREFIX: &str = "f";
/// Digits of a file's number in its name: enough for the largest `files_per_thread`.
pub const NAME_DIGITS: usize = 10;

/// The file each thread renames its files over with `rename_over`.
pub const CURRENT: &str = "current";

/// A smallfiles run's threads, in the kind's own rows.
const THREADS: SettingDef = SettingDef {
    section: Section::Kind,
    ..common::THREADS
};
