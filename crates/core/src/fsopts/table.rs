//! The allow-lists themselves: per filesystem, the mkfs flags and mount options fsynclab
//! accepts and how their values are checked, and the reasons given for the options it
//! refuses by name. Read with mke2fs(8), mkfs.xfs(8), mkfs.btrfs(8), ext4(5), xfs(5),
//! btrfs(5) and mount(8); docs/SCRATCH.md explains each choice.

use crate::sysinfo::FsKind;

/// How a flag's or a sub-option's value is checked.
#[derive(Clone, Copy, Debug)]
pub(super) enum Value {
    /// No value: a flag on its own.
    Flag,
    /// No value, or a value passing the inner rule (`lazy_itable_init[=0|1]`, `compress[=zstd]`).
    Maybe(&'static Value),
    /// Decimal digits, at most 12.
    Count,
    /// A signed count: an optional `-` and at most 12 digits.
    SignedCount,
    /// A size: at most 15 digits and one unit letter (`k m g t p e`, either case, or xfs's
    /// `s` sectors and `b` blocks), e.g. `4096`, `64m`, `32k`, `8s`.
    Size,
    /// A percentage such as `0`, `5` or `0.5`.
    Percent,
    /// A label: 1 to 64 of `A-Z a-z 0-9 space _ . + : @ -`, not starting with `-`.
    Label,
    /// A UUID or one of the words mkfs takes instead (`random`, `time`, `clear`...): 1 to
    /// 36 of `0-9 a-z A-Z -`.
    Uuid,
    /// One of a fixed set of words.
    OneOf(&'static [&'static str]),
    /// A comma-separated feature list, each name 1 to 40 of `a-z 0-9 _ -`, optionally
    /// prefixed by `^` (turn off).
    Features,
    /// A colon-separated list of words of `a-z` (ext4's `quotatype=usrquota:grpquota`).
    Words,
    /// btrfs `compress=`: an algorithm, optionally `:level`.
    Compress,
    /// Comma-separated `key[=value]` sub-options, each from this table.
    Sub(&'static [(&'static str, Value)]),
}

/// Why a word that names a path or a device is refused.
pub const OUTSIDE_REASON: &str = "it names a path or a device outside the filesystem being \
     made; fsynclab makes filesystems only on its own image or the device it was given (with \
     its typed confirmation), and logs and journals stay internal";

/// An mkfs flag: its spellings (the first is shown in messages) and its value rule.
#[derive(Clone, Copy, Debug)]
pub(super) struct MkfsFlag {
    pub names: &'static [&'static str],
    pub value: Value,
}

const fn flag(names: &'static [&'static str], value: Value) -> MkfsFlag {
    MkfsFlag { names, value }
}

const BOOL: Value = Value::OneOf(&["0", "1"]);
const MAYBE_BOOL: Value = Value::Maybe(&BOOL);

const EXT4_EXTENDED: &[(&str, Value)] = &[
    ("stride", Value::Count),
    ("stripe_width", Value::Count),
    ("stripe-width", Value::Count),
    ("resize", Value::Count),
    ("lazy_itable_init", MAYBE_BOOL),
    ("lazy_journal_init", MAYBE_BOOL),
    ("assume_storage_prezeroed", MAYBE_BOOL),
    ("packed_meta_blocks", MAYBE_BOOL),
    ("num_backup_sb", Value::OneOf(&["0", "1", "2"])),
    ("test_fs", Value::Flag),
    ("discard", Value::Flag),
    ("nodiscard", Value::Flag),
    ("quotatype", Value::Words),
    ("encoding", Value::OneOf(&["utf8", "utf8-12.1"])),
    ("encoding_flags", Value::OneOf(&["strict"])),
    ("orphan_file_size", Value::Size),
    ("mmp_update_interval", Value::Count),
];

const EXT4_JOURNAL: &[(&str, Value)] = &[
    ("size", Value::Count),
    ("fast_commit_size", Value::Count),
    ("location", Value::Size),
];

const EXT4_MKFS: &[MkfsFlag] = &[
    flag(&["-b"], Value::Size),
    flag(&["-C"], Value::Size),
    flag(&["-D"], Value::Flag),
    // `panic` is left out: a shared preset must not be able to turn an I/O error on a
    // scratch image into a kernel panic of the whole machine.
    flag(&["-e"], Value::OneOf(&["continue", "remount-ro"])),
    flag(&["-E"], Value::Sub(EXT4_EXTENDED)),
    flag(&["-g"], Value::Count),
    flag(&["-G"], Value::Count),
    flag(&["-i"], Value::Size),
    flag(&["-I"], Value::Count),
    flag(&["-j"], Value::Flag),
    flag(&["-J"], Value::Sub(EXT4_JOURNAL)),
    flag(&["-K"], Value::Flag),
    flag(&["-L"], Value::Label),
    flag(&["-m"], Value::Percent),
    flag(&["-N"], Value::Count),
    flag(
        &["-o"],
        Value::OneOf(&["linux", "hurd", "gnu", "freebsd", "lites"]),
    ),
    flag(&["-O"], Value::Features),
    flag(&["-q"], Value::Flag),
    flag(&["-r"], BOOL),
    flag(&["-T"], Value::Features),
    flag(&["-U"], Value::Uuid),
    flag(&["-v"], Value::Flag),
];

const XFS_BLOCK: &[(&str, Value)] = &[("size", Value::Size)];
const XFS_META: &[(&str, Value)] = &[
    ("crc", MAYBE_BOOL),
    ("finobt", MAYBE_BOOL),
    ("uuid", Value::Uuid),
    ("rmapbt", MAYBE_BOOL),
    ("reflink", MAYBE_BOOL),
    ("inobtcount", MAYBE_BOOL),
    ("bigtime", MAYBE_BOOL),
];
const XFS_DATA: &[(&str, Value)] = &[
    ("agcount", Value::Count),
    ("agsize", Value::Size),
    ("size", Value::Size),
    ("sunit", Value::Count),
    ("su", Value::Size),
    ("swidth", Value::Count),
    ("sw", Value::Count),
    ("noalign", Value::Flag),
    ("cowextsize", Value::Count),
    ("extszinherit", Value::Count),
    ("projinherit", Value::Count),
    ("rtinherit", MAYBE_BOOL),
    ("daxinherit", MAYBE_BOOL),
    ("concurrency", Value::Count),
];
const XFS_INODE: &[(&str, Value)] = &[
    ("size", Value::Size),
    ("perblock", Value::Count),
    ("maxpct", Value::Count),
    ("align", MAYBE_BOOL),
    ("attr", Value::OneOf(&["1", "2"])),
    ("projid32bit", MAYBE_BOOL),
    ("sparse", MAYBE_BOOL),
    ("nrext64", MAYBE_BOOL),
];
const XFS_LOG: &[(&str, Value)] = &[
    ("internal", Value::Maybe(&Value::OneOf(&["1"]))),
    ("size", Value::Size),
    ("version", Value::OneOf(&["1", "2"])),
    ("sunit", Value::Count),
    ("su", Value::Size),
    ("lazy-count", MAYBE_BOOL),
    ("agnum", Value::Count),
    ("concurrency", Value::Count),
];
const XFS_NAMING: &[(&str, Value)] = &[
    ("size", Value::Size),
    ("version", Value::OneOf(&["2", "ci"])),
    ("ftype", MAYBE_BOOL),
    ("parent", MAYBE_BOOL),
];
const XFS_REALTIME: &[(&str, Value)] = &[("extsize", Value::Size), ("noalign", Value::Flag)];
const XFS_SECTOR: &[(&str, Value)] = &[("size", Value::Size)];

const XFS_MKFS: &[MkfsFlag] = &[
    flag(&["-b"], Value::Sub(XFS_BLOCK)),
    flag(&["-m"], Value::Sub(XFS_META)),
    flag(&["-d"], Value::Sub(XFS_DATA)),
    flag(&["-i"], Value::Sub(XFS_INODE)),
    flag(&["-l"], Value::Sub(XFS_LOG)),
    flag(&["-n"], Value::Sub(XFS_NAMING)),
    flag(&["-r"], Value::Sub(XFS_REALTIME)),
    flag(&["-s"], Value::Sub(XFS_SECTOR)),
    flag(&["-L"], Value::Label),
    flag(&["-q"], Value::Flag),
    flag(&["-K"], Value::Flag),
];

const BTRFS_MKFS: &[MkfsFlag] = &[
    flag(&["-b", "--byte-count"], Value::Size),
    flag(
        &["--csum", "--checksum"],
        Value::OneOf(&[
            "crc32c", "xxhash", "xxhash64", "sha256", "blake2", "blake2b",
        ]),
    ),
    flag(&["-d", "--data"], Value::OneOf(&["single", "dup"])),
    flag(&["-m", "--metadata"], Value::OneOf(&["single", "dup"])),
    flag(&["-M", "--mixed"], Value::Flag),
    flag(&["-n", "--nodesize"], Value::Size),
    flag(&["-s", "--sectorsize"], Value::Size),
    flag(&["-L", "--label"], Value::Label),
    flag(&["-K", "--nodiscard"], Value::Flag),
    flag(&["-O", "--features"], Value::Features),
    flag(&["-R", "--runtime-features"], Value::Features),
    flag(&["-q", "--quiet"], Value::Flag),
    flag(&["-U", "--uuid"], Value::Uuid),
    flag(&["--device-uuid"], Value::Uuid),
    flag(&["-v", "--verbose"], Value::Flag),
];

/// The mkfs flags accepted for `fs`.
pub(super) fn mkfs_flags(fs: FsKind) -> &'static [MkfsFlag] {
    match fs {
        FsKind::Ext4 => EXT4_MKFS,
        FsKind::Xfs => XFS_MKFS,
        FsKind::Btrfs => BTRFS_MKFS,
    }
}

/// Why an mkfs flag (`sub_key` `None`) or a sub-option `sub_key` of `flag` is refused by
/// name, when it is one fsynclab knows to be dangerous or useless here.
pub(super) fn refused_mkfs_reason(fs: FsKind, flag: &str, sub_key: Option<&str>) -> Option<String> {
    if let Some(key) = sub_key {
        return match key {
            "logdev" | "rtdev" | "device" | "file" | "name" | "journal_dev" | "journal_path" => {
                Some(format!(
                    "`{key}=` {}",
                    OUTSIDE_REASON.trim_start_matches("it ")
                ))
            }
            "offset" => Some(
                "offset= moves the filesystem within the device; fsynclab makes it over the \
                 whole of its own image"
                    .into(),
            ),
            _ => None,
        };
    }
    let reason = match (fs, flag) {
        (FsKind::Ext4, "-F") | (FsKind::Xfs | FsKind::Btrfs, "-f" | "--force") => {
            "fsynclab passes it itself, once (twice would let mke2fs format a mounted device)"
        }
        (FsKind::Ext4, "-d")
        | (FsKind::Btrfs, "-r" | "--rootdir" | "--shrink" | "-u" | "--subvol") => {
            "it copies a host directory into the new filesystem; fsynclab makes empty filesystems"
        }
        (FsKind::Ext4, "-l") => "it reads a bad-blocks list from a host file",
        (FsKind::Ext4, "-z") => "it writes an undo file on the host",
        (FsKind::Ext4, "-M") => {
            "it records a host directory path; fsynclab mounts the filesystem itself"
        }
        (FsKind::Ext4, "-c") => "it scans the device for bad blocks (twice: writes test patterns)",
        (FsKind::Ext4, "-t") => {
            "the filesystem type is chosen apart from the mkfs options (the filesystem setting)"
        }
        (FsKind::Ext4, "-S") => "it rewrites only the superblocks of an existing filesystem",
        (FsKind::Ext4, "-n") | (FsKind::Xfs, "-N") => "it is a dry run that makes nothing",
        (FsKind::Xfs, "-p") => "it reads a prototype file from the host",
        (FsKind::Xfs, "-c") => "it reads a configuration file from the host",
        (_, "-V" | "--version" | "-h" | "--help") => "it only prints and makes nothing",
        _ => return None,
    };
    Some(format!("{reason}; leave it out"))
}

/// Options every filesystem takes (the VFS's own, mount(8)).
pub(super) const GENERIC_MOUNT: &[(&str, Value)] = &[
    ("defaults", Value::Flag),
    ("ro", Value::Flag),
    ("rw", Value::Flag),
    ("sync", Value::Flag),
    ("async", Value::Flag),
    ("dirsync", Value::Flag),
    ("atime", Value::Flag),
    ("noatime", Value::Flag),
    ("diratime", Value::Flag),
    ("nodiratime", Value::Flag),
    ("relatime", Value::Flag),
    ("norelatime", Value::Flag),
    ("strictatime", Value::Flag),
    ("nostrictatime", Value::Flag),
    ("lazytime", Value::Flag),
    ("nolazytime", Value::Flag),
    ("suid", Value::Flag),
    ("nosuid", Value::Flag),
    ("dev", Value::Flag),
    ("nodev", Value::Flag),
    ("exec", Value::Flag),
    ("noexec", Value::Flag),
    ("iversion", Value::Flag),
    ("noiversion", Value::Flag),
    ("nosymfollow", Value::Flag),
    ("silent", Value::Flag),
    ("loud", Value::Flag),
];

const EXT4_MOUNT: &[(&str, Value)] = &[
    ("barrier", MAYBE_BOOL),
    ("nobarrier", Value::Flag),
    ("data", Value::OneOf(&["ordered", "journal", "writeback"])),
    ("commit", Value::Count),
    ("journal_checksum", Value::Flag),
    ("nojournal_checksum", Value::Flag),
    ("journal_async_commit", Value::Flag),
    ("journal_ioprio", Value::Count),
    ("delalloc", Value::Flag),
    ("nodelalloc", Value::Flag),
    ("dioread_nolock", Value::Flag),
    ("dioread_lock", Value::Flag),
    ("nodioread_nolock", Value::Flag),
    ("auto_da_alloc", MAYBE_BOOL),
    ("noauto_da_alloc", Value::Flag),
    ("discard", Value::Flag),
    ("nodiscard", Value::Flag),
    ("block_validity", Value::Flag),
    ("noblock_validity", Value::Flag),
    ("user_xattr", Value::Flag),
    ("nouser_xattr", Value::Flag),
    ("acl", Value::Flag),
    ("noacl", Value::Flag),
    ("nouid32", Value::Flag),
    ("grpid", Value::Flag),
    ("bsdgroups", Value::Flag),
    ("nogrpid", Value::Flag),
    ("sysvgroups", Value::Flag),
    ("i_version", Value::Flag),
    ("stripe", Value::Count),
    ("max_batch_time", Value::Count),
    ("min_batch_time", Value::Count),
    ("inode_readahead_blks", Value::Count),
    ("init_itable", Value::Maybe(&Value::Count)),
    ("noinit_itable", Value::Flag),
    ("max_dir_size_kb", Value::Count),
    ("resuid", Value::Count),
    ("resgid", Value::Count),
    ("sb", Value::Count),
    ("errors", Value::OneOf(&["continue", "remount-ro"])), // not panic: see `-e`
    ("data_err", Value::OneOf(&["ignore", "abort"])),
    ("norecovery", Value::Flag),
    ("noload", Value::Flag),
    ("nombcache", Value::Flag),
    ("no_mbcache", Value::Flag),
    ("prefetch_block_bitmaps", Value::Flag),
    ("no_prefetch_block_bitmaps", Value::Flag),
    ("mb_optimize_scan", BOOL),
    ("quota", Value::Flag),
    ("noquota", Value::Flag),
    ("usrquota", Value::Flag),
    ("grpquota", Value::Flag),
    ("prjquota", Value::Flag),
    ("jqfmt", Value::OneOf(&["vfsold", "vfsv0", "vfsv1"])),
    // The seed thread's patched kernels (ext4-fsync-coordination): -1 is "automatic".
    ("max_fsync_delay", Value::SignedCount),
];

const XFS_MOUNT: &[(&str, Value)] = &[
    ("allocsize", Value::Size),
    ("attr2", Value::Flag),
    ("noattr2", Value::Flag),
    ("discard", Value::Flag),
    ("nodiscard", Value::Flag),
    ("grpid", Value::Flag),
    ("bsdgroups", Value::Flag),
    ("nogrpid", Value::Flag),
    ("sysvgroups", Value::Flag),
    ("filestreams", Value::Flag),
    ("ikeep", Value::Flag),
    ("noikeep", Value::Flag),
    ("inode32", Value::Flag),
    ("inode64", Value::Flag),
    ("largeio", Value::Flag),
    ("nolargeio", Value::Flag),
    ("logbufs", Value::Count),
    ("logbsize", Value::Size),
    ("noalign", Value::Flag),
    ("norecovery", Value::Flag),
    ("nouuid", Value::Flag),
    ("noquota", Value::Flag),
    ("quota", Value::Flag),
    ("uquota", Value::Flag),
    ("usrquota", Value::Flag),
    ("uqnoenforce", Value::Flag),
    ("qnoenforce", Value::Flag),
    ("gquota", Value::Flag),
    ("grpquota", Value::Flag),
    ("gqnoenforce", Value::Flag),
    ("pquota", Value::Flag),
    ("prjquota", Value::Flag),
    ("pqnoenforce", Value::Flag),
    ("sunit", Value::Count),
    ("swidth", Value::Count),
    ("swalloc", Value::Flag),
    ("wsync", Value::Flag),
];

const BTRFS_MOUNT: &[(&str, Value)] = &[
    ("acl", Value::Flag),
    ("noacl", Value::Flag),
    ("autodefrag", Value::Flag),
    ("noautodefrag", Value::Flag),
    ("barrier", Value::Flag),
    ("nobarrier", Value::Flag),
    ("clear_cache", Value::Flag),
    ("commit", Value::Count),
    ("compress", Value::Maybe(&Value::Compress)),
    ("compress-force", Value::Maybe(&Value::Compress)),
    ("datacow", Value::Flag),
    ("nodatacow", Value::Flag),
    ("datasum", Value::Flag),
    ("nodatasum", Value::Flag),
    ("discard", Value::Maybe(&Value::OneOf(&["sync", "async"]))),
    ("nodiscard", Value::Flag),
    ("enospc_debug", Value::Flag),
    ("noenospc_debug", Value::Flag),
    ("fatal_errors", Value::OneOf(&["bug"])), // not panic: see ext4 `-e`
    ("flushoncommit", Value::Flag),
    ("noflushoncommit", Value::Flag),
    ("max_inline", Value::Size),
    ("metadata_ratio", Value::Count),
    ("rescan_uuid_tree", Value::Flag),
    ("skip_balance", Value::Flag),
    ("space_cache", Value::Maybe(&Value::OneOf(&["v1", "v2"]))),
    ("nospace_cache", Value::Flag),
    ("ssd", Value::Flag),
    ("ssd_spread", Value::Flag),
    ("nossd", Value::Flag),
    ("nossd_spread", Value::Flag),
    ("thread_pool", Value::Count),
    ("treelog", Value::Flag),
    ("notreelog", Value::Flag),
    ("usebackuproot", Value::Flag),
    ("user_subvol_rm_allowed", Value::Flag),
    ("subvolid", Value::Count),
];

/// The mount options accepted for `fs` besides [`GENERIC_MOUNT`].
pub(super) fn mount_options(fs: FsKind) -> &'static [(&'static str, Value)] {
    match fs {
        FsKind::Ext4 => EXT4_MOUNT,
        FsKind::Xfs => XFS_MOUNT,
        FsKind::Btrfs => BTRFS_MOUNT,
    }
}

/// Why a mount option is refused by name, when it is one fsynclab knows to be dangerous.
pub(super) fn refused_mount_reason(fs: FsKind, key: &str) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    let reason = match lower.as_str() {
        "device" | "logdev" | "rtdev" | "journal_dev" | "journal_path" | "loop" | "offset"
        | "sizelimit" | "encryption" => {
            format!("`{key}` {}", OUTSIDE_REASON.trim_start_matches("it "))
        }
        "usrjquota" | "grpjquota" => {
            format!("`{key}=` names a quota file; use usrquota/grpquota without a file name")
        }
        "subvol" => "fsynclab mounts the top-level subvolume of a fresh btrfs (subvolid=5)".into(),
        "bind" | "rbind" | "move" | "remount" | "make-private" | "make-shared" => {
            format!("`{key}` is an operation on other mounts, not an option of {fs} mounts")
        }
        "user" | "users" | "owner" | "group" | "nofail" | "auto" | "noauto" | "_netdev" => {
            format!("`{key}` is an fstab option; fsynclab mounts the filesystem itself")
        }
        "helper" | "uhelper" => format!("`{key}` makes mount run another program"),
        other if other.starts_with("x-") || other.contains("context") => {
            format!("`{key}` is not an option of {fs}; leave it out")
        }
        _ => return None,
    };
    Some(reason)
}
