use super::*;
use crate::sysinfo::FsKind::{Btrfs, Ext4, Xfs};

fn refused_mkfs(fs: FsKind, text: &str) -> (String, String) {
    match check_mkfs_options(fs, text) {
        Err(OptionError::Refused { token, reason, .. }) => (token, reason),
        other => panic!("{fs} mkfs {text:?} was not refused: {other:?}"),
    }
}

fn refused_mount(fs: FsKind, text: &str) -> (String, String) {
    match check_mount_options(fs, text) {
        Err(OptionError::Refused { token, reason, .. }) => (token, reason),
        other => panic!("{fs} mount {text:?} was not refused: {other:?}"),
    }
}

#[test]
fn ordinary_mkfs_options_pass_word_for_word() {
    for (fs, text) in [
        (Ext4, ""),
        (Ext4, "-J size=64"),
        (Ext4, "-O ^has_journal"),
        (Ext4, "-b 4096 -L 'fsync lab'"),
        (
            Ext4,
            "-E lazy_itable_init=0,lazy_journal_init,stride=16,stripe_width=64,nodiscard",
        ),
        (
            Ext4,
            "-m 0.5 -i 16384 -I 256 -N 100000 -T largefile -O metadata_csum,^64bit -q",
        ),
        (
            Ext4,
            "-U random -e remount-ro -j -J size=32,fast_commit_size=1",
        ),
        (Xfs, "-l size=64m,internal=1,lazy-count=1,version=2,su=64k"),
        (
            Xfs,
            "-l internal -d agcount=4,su=64k,sw=4 -m crc=1,reflink=1,rmapbt=0,bigtime=1",
        ),
        (
            Xfs,
            "-b size=4096 -i size=512,sparse=1 -n size=8192,ftype=1 -s size=4096 -L lab -K",
        ),
        (
            Btrfs,
            "-d single -m dup -n 16k -s 4096 -L lab -K --csum xxhash",
        ),
        (
            Btrfs,
            "--data=dup --metadata=single -O no-holes,^free-space-tree -R quota -M -q",
        ),
        (
            Btrfs,
            "--byte-count 400M --nodesize=32k -U 7b4ac2e4-59d5-4b29-9bb0-0a2d6b4c4e27",
        ),
    ] {
        let words = check_mkfs_options(fs, text).unwrap_or_else(|e| panic!("{fs} {text}: {e}"));
        assert_eq!(words, split_options("mkfs", text).unwrap(), "{text}");
    }
    assert_eq!(
        check_mkfs_options(Ext4, "-L 'fsync lab'").unwrap(),
        ["-L", "fsync lab"]
    );
}

#[test]
fn ordinary_mount_options_pass() {
    for (fs, text) in [
        (Ext4, ""),
        (Ext4, "  data=journal,noatime "),
        (Ext4, "barrier=0"),
        (
            Ext4,
            "barrier,nobarrier,commit=5,journal_checksum,journal_async_commit,lazytime",
        ),
        (
            Ext4,
            "nodelalloc,dioread_nolock,auto_da_alloc=0,errors=remount-ro,max_fsync_delay=-1",
        ),
        (
            Xfs,
            "logbsize=32k,logbufs=8,wsync,noatime,inode64,allocsize=64k",
        ),
        (
            Btrfs,
            "ssd,nossd,ssd_spread,discard=async,discard,nodiscard,commit=30",
        ),
        (
            Btrfs,
            "compress,compress=zstd:3,compress-force=lzo,space_cache=v2,nodatacow",
        ),
        (
            Btrfs,
            "nodatasum,flushoncommit,noflushoncommit,subvolid=5,relatime",
        ),
    ] {
        let checked = check_mount_options(fs, text).unwrap_or_else(|e| panic!("{fs} {text}: {e}"));
        assert_eq!(checked, text.trim());
    }
}

#[test]
fn the_reported_attacks_are_refused_by_name() {
    let victim = "/dev/loop7";
    for fs in FsKind::ALL {
        let (token, reason) = refused_mkfs(fs, victim);
        assert_eq!(token, victim);
        assert!(
            reason.contains("its own image or the device it was given"),
            "{reason}"
        );
        let (token, _) = refused_mkfs(fs, &format!("-L b {victim}"));
        assert_eq!(token, victim);
        let (token, _) = refused_mkfs(fs, "loop7");
        assert_eq!(token, "loop7", "a bare word is a device to mkfs");
    }
    let (token, reason) = refused_mkfs(Xfs, &format!("-l logdev={victim}"));
    assert_eq!(token, format!("-l logdev={victim}"));
    assert!(reason.contains("stay internal"), "{reason}");
    // Without a slash the key itself is refused, by name.
    let (token, reason) = refused_mkfs(Xfs, "-l logdev=loop7,size=10m");
    assert_eq!(token, "-l logdev=loop7,size=10m");
    assert!(reason.starts_with("`logdev=`"), "{reason}");
    let (_, reason) = refused_mkfs(Xfs, "-l internal=0");
    assert!(reason.contains("use one of 1"), "{reason}");
    let (token, reason) = refused_mkfs(Xfs, "-r rtdev=sdb");
    assert_eq!(token, "-r rtdev=sdb");
    assert!(reason.starts_with("`rtdev=`"), "{reason}");
    for sub in ["file", "name"] {
        let (_, reason) = refused_mkfs(Xfs, &format!("-d {sub}=img"));
        assert!(reason.starts_with(&format!("`{sub}=`")), "{reason}");
    }
    let (token, reason) = refused_mkfs(Ext4, &format!("-J device={victim}"));
    assert_eq!(token, format!("-J device={victim}"));
    assert!(reason.contains("outside"), "{reason}");
    let (_, reason) = refused_mkfs(Ext4, "-J device=UUID=1234");
    assert!(reason.starts_with("`device=`"), "{reason}");
    let (_, reason) = refused_mkfs(Ext4, "-E offset=4096");
    assert!(reason.contains("offset"), "{reason}");
    // btrfs: an extra device, a raid profile that needs one, a host directory.
    let (token, _) = refused_mkfs(Btrfs, &format!("-d single {victim}"));
    assert_eq!(token, victim);
    let (token, reason) = refused_mkfs(Btrfs, "-d raid1");
    assert_eq!(token, "-d raid1");
    assert!(reason.contains("single, dup"), "{reason}");
    let (_, reason) = refused_mkfs(Btrfs, "--rootdir=etc");
    assert!(reason.contains("host directory"), "{reason}");
}

#[test]
fn other_dangerous_or_useless_mkfs_flags_are_refused() {
    for (fs, text, says) in [
        (Ext4, "-d etc", "host directory"),
        (Ext4, "-F", "passes it itself"),
        (Ext4, "-l badblocks", "bad-blocks"),
        (Ext4, "-z undo", "undo"),
        (Ext4, "-M mnt", "host directory path"),
        (Ext4, "-c", "bad blocks"),
        (Ext4, "-t ext2", "the filesystem setting"),
        (Ext4, "-n", "dry run"),
        (Ext4, "-S", "superblocks"),
        (Xfs, "-f", "passes it itself"),
        (Xfs, "-N", "dry run"),
        (Xfs, "-p proto", "prototype"),
        (Xfs, "-c options=cfg", "configuration"),
        (Btrfs, "-r etc", "host directory"),
        (Btrfs, "--shrink", "host directory"),
        (Btrfs, "--force", "passes it itself"),
        (Btrfs, "-V", "only prints"),
        (Ext4, "-b4096", "separate words"),
        (Ext4, "-qF", "separate words"),
        (Ext4, "-Z", "allow-list"),
        (Ext4, "-L", "needs a value"),
        (Ext4, "-O has_journal,../x", "outside"),
        (Ext4, "-O has_journal,", "bad value"),
        (Ext4, "-L -x", "bad value"),
        (Ext4, "-L \u{1b}]0;x", "bad value"),
        (Ext4, "-b 4k4", "bad value"),
        (Ext4, "-q=1", "separate words"),
        (Btrfs, "--quiet=1", "takes no value"),
        (Ext4, "-", "not an option"),
        (Ext4, "--", "not an option"),
        (Xfs, "-l size", "needs a value"),
        (Xfs, "-d noalign=1", "takes no value"),
        (Xfs, "-m crc=2", "use one of 0, 1"),
    ] {
        let (_, reason) = refused_mkfs(fs, text);
        assert!(reason.contains(says), "{fs} {text:?}: {reason}");
    }
    // Quoting errors are the splitter's.
    assert!(matches!(
        check_mkfs_options(Ext4, "-L 'x"),
        Err(OptionError::BadOptions { .. })
    ));
}

#[test]
fn dangerous_mount_options_are_refused() {
    for (fs, text, token, says) in [
        (
            Ext4,
            "journal_path=/dev/sdb",
            "journal_path=/dev/sdb",
            "outside",
        ),
        (
            Ext4,
            "noatime,journal_dev=2049",
            "journal_dev=2049",
            "outside",
        ),
        (Xfs, "logdev=sdb", "logdev=sdb", "outside"),
        (Xfs, "rtdev=sdb", "rtdev=sdb", "outside"),
        (Btrfs, "device=loop7", "device=loop7", "outside"),
        (
            Btrfs,
            "ssd,device=/dev/loop7",
            "device=/dev/loop7",
            "outside",
        ),
        (Ext4, "loop", "loop", "outside"),
        (Ext4, "offset=1048576", "offset=1048576", "outside"),
        (
            Ext4,
            "usrjquota=aquota.user",
            "usrjquota=aquota.user",
            "quota file",
        ),
        (Btrfs, "subvol=a", "subvol=a", "top-level"),
        (Btrfs, "subvol=a/b", "subvol=a/b", "outside"),
        (Ext4, "bind", "bind", "other mounts"),
        (Ext4, "helper=x", "helper=x", "another program"),
        (Ext4, "X-mount.mkdir", "X-mount.mkdir", "leave it out"),
        (Ext4, "context=x", "context=x", "leave it out"),
        (Ext4, "nossd", "nossd", "allow-list of ext4"),
        (Btrfs, "data=journal", "data=journal", "allow-list of btrfs"),
        (Ext4, "data=ordered,,noatime", "", "empty option"),
        (Ext4, "data=ordered,", "", "empty option"),
        (Ext4, "noatime, relatime", " relatime", "without spaces"),
        (Ext4, "commit=5s", "commit=5s", "whole number"),
        (Ext4, "barrier=2", "barrier=2", "use one of 0, 1"),
        (Ext4, "noatime=1", "noatime=1", "takes no value"),
        (Ext4, "data", "data", "needs a value"),
        (Btrfs, "compress=gzip", "compress=gzip", "zlib, lzo, zstd"),
    ] {
        let (refused, reason) = refused_mount(fs, text);
        assert_eq!(refused, token, "{fs} {text:?}");
        assert!(reason.contains(says), "{fs} {text:?}: {reason}");
    }
}

#[test]
fn messages_name_the_token_and_the_fix() {
    let err = check_mkfs_options(Xfs, "-l logdev=/dev/loop3").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("mkfs option `-l logdev=/dev/loop3` is not allowed for xfs: {OUTSIDE_REASON}")
    );
    let err = check_mount_options(Btrfs, "device=/dev/sdb").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("mount option `device=/dev/sdb` is not allowed for btrfs: "),
        "{err}"
    );
}

/// Every option the built-in presets, the README, docs/USAGE.md, docs/SCRATCH.md and the
/// window's hints use is accepted for the filesystems they are given with.
#[test]
fn every_option_the_project_documents_is_accepted() {
    for preset in crate::spec::builtin_presets() {
        for m in &preset.matrix {
            for fs in &m.fs {
                let fs: FsKind = fs.parse().unwrap();
                for text in &m.mkfs_opts {
                    check_mkfs_options(fs, text)
                        .unwrap_or_else(|e| panic!("preset {} {}: {e}", preset.name, m.title));
                }
                for text in &m.mount_opts {
                    check_mount_options(fs, text)
                        .unwrap_or_else(|e| panic!("preset {} {}: {e}", preset.name, m.title));
                }
            }
        }
    }
    let docs = [
        include_str!("../../../../README.md"),
        include_str!("../../../../docs/USAGE.md"),
        include_str!("../../../../docs/SCRATCH.md"),
    ];
    let mut seen = 0;
    for line in docs.iter().flat_map(|doc| doc.lines()) {
        let words = split_options("doc", line.split(" #").next().unwrap_or(line));
        let Ok(words) = words else { continue };
        let fs_given: Vec<FsKind> = words
            .windows(2)
            .filter(|w| w[0] == "--fs")
            .filter_map(|w| w[1].parse().ok())
            .collect();
        let kinds = if fs_given.is_empty() {
            FsKind::ALL.to_vec()
        } else {
            fs_given
        };
        for pair in words.windows(2) {
            let accepted = |check: &dyn Fn(FsKind) -> bool| kinds.iter().any(|fs| check(*fs));
            match pair[0].as_str() {
                "--mkfs-opts" => {
                    seen += 1;
                    assert!(
                        accepted(&|fs| check_mkfs_options(fs, &pair[1]).is_ok()),
                        "documented mkfs options refused: {line}"
                    );
                }
                "--mount-opts" => {
                    seen += 1;
                    assert!(
                        accepted(&|fs| check_mount_options(fs, &pair[1]).is_ok()),
                        "documented mount options refused: {line}"
                    );
                }
                _ => {}
            }
        }
    }
    assert!(seen >= 5, "found only {seen} documented options");
    // The window's hints.
    assert!(check_mkfs_options(Ext4, "-O ^has_journal").is_ok());
    assert!(check_mount_options(Btrfs, "nossd").is_ok());
    assert!(check_mount_options(Ext4, "data=journal,commit=5").is_ok());
}

#[test]
fn no_option_can_turn_a_filesystem_error_into_a_kernel_panic() {
    refused_mkfs(Ext4, "-e panic");
    refused_mount(Ext4, "errors=panic");
    refused_mount(Btrfs, "fatal_errors=panic");
    assert!(check_mkfs_options(Ext4, "-e remount-ro").is_ok());
    assert!(check_mount_options(Ext4, "errors=remount-ro").is_ok());
    assert!(check_mount_options(Btrfs, "fatal_errors=bug").is_ok());
}

#[test]
fn fresh_ext4_is_initialised_at_mkfs_unless_the_user_chose() {
    let eager = |text: &str| {
        with_eager_init(
            FsKind::Ext4,
            check_mkfs_options(FsKind::Ext4, text).unwrap(),
        )
    };
    assert_eq!(eager(""), ["-E", "lazy_itable_init=0,lazy_journal_init=0"]);
    assert_eq!(
        eager("-b 4096 -E stride=16"),
        [
            "-b",
            "4096",
            "-E",
            "stride=16,lazy_itable_init=0,lazy_journal_init=0"
        ]
    );
    // The user's own choice stays, and only mke2fs's last -E is extended.
    assert_eq!(
        eager("-E lazy_itable_init=1 -L x"),
        ["-E", "lazy_itable_init=1,lazy_journal_init=0", "-L", "x"]
    );
    assert_eq!(
        eager("-E stride=8 -E lazy_journal_init,lazy_itable_init=1"),
        [
            "-E",
            "stride=8",
            "-E",
            "lazy_journal_init,lazy_itable_init=1"
        ]
    );
    for fs in [FsKind::Xfs, FsKind::Btrfs] {
        assert!(with_eager_init(fs, Vec::new()).is_empty());
    }
}
