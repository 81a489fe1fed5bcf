//! `/proc/self/mountinfo`: a pure line parser, a thin reader and the lookup of the mount a path
//! is on. Format: proc(5), "/proc/pid/mountinfo".

use std::path::Path;

use super::{MountInfo, ParseError};

fn parse_error(line: &str, detail: impl Into<String>) -> ParseError {
    ParseError {
        what: format!("mountinfo line {line:?}"),
        detail: detail.into(),
    }
}

/// Decodes the kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134`
/// backslash). A backslash not followed by three octal digits is kept as is.
pub fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'\\'
            && let Some(digits) = bytes.get(index + 1..index + 4)
            && digits.iter().all(|digit| (b'0'..=b'7').contains(digit))
            && let Ok(byte) = u8::try_from(
                digits
                    .iter()
                    .fold(0u32, |acc, digit| acc * 8 + u32::from(digit - b'0')),
            )
        {
            decoded.push(byte);
            index += 4;
            continue;
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The space-separated fields of `text` (empty ones, from repeated spaces, skipped).
fn split_fields(text: &str) -> Vec<&str> {
    text.split(' ').filter(|f| !f.is_empty()).collect()
}

fn parse_number(line: &str, name: &str, text: &str) -> Result<u32, ParseError> {
    text.parse()
        .map_err(|_| parse_error(line, format!("{name} {text:?} is not a number")))
}

impl MountInfo {
    /// Parses one line of `/proc/self/mountinfo`, e.g.
    /// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`.
    ///
    /// Optional fields (`shared:1 master:2`...) before the ` - ` separator are skipped; octal
    /// escapes in the root, mount point and source are decoded.
    pub fn from_line(line: &str) -> Result<MountInfo, ParseError> {
        let line = line.trim_end_matches(['\n', '\r']);
        // Spaces inside fields are escaped as \040, so the separator is the first " - " after
        // the six fixed fields (a field that is just "-" before it is not the separator). The
        // kernel separates fields with single spaces and escapes only space, tab, newline and
        // backslash: any other whitespace (`\r`, U+0085...) belongs to a path.
        let separator = line
            .match_indices(" - ")
            .map(|(at, _)| at)
            .find(|at| split_fields(&line[..*at]).len() >= 6)
            .or_else(|| line.find(" - "))
            .ok_or_else(|| parse_error(line, "no \" - \" separator before the filesystem type"))?;
        let (before, after) = (&line[..separator], &line[separator + 3..]);
        let fields = split_fields(before);
        if fields.len() < 6 {
            return Err(parse_error(
                line,
                format!(
                    "expected at least 6 fields before \" - \", found {}",
                    fields.len()
                ),
            ));
        }
        let (major_text, minor_text) = fields[2].split_once(':').ok_or_else(|| {
            parse_error(line, format!("device {:?} is not major:minor", fields[2]))
        })?;
        // After the separator: fstype, source (may be empty), super options.
        let mut tail = after.splitn(3, ' ');
        let fs_type = tail.next().unwrap_or_default();
        if fs_type.is_empty() {
            return Err(parse_error(line, "empty filesystem type"));
        }
        let source = tail
            .next()
            .ok_or_else(|| parse_error(line, "no mount source after the filesystem type"))?;
        let super_options = tail.next().unwrap_or_default().trim();
        Ok(MountInfo {
            mount_id: parse_number(line, "mount id", fields[0])?,
            parent_id: parse_number(line, "parent id", fields[1])?,
            major: parse_number(line, "major", major_text)?,
            minor: parse_number(line, "minor", minor_text)?,
            root: unescape_octal(fields[3]),
            mount_point: unescape_octal(fields[4]),
            mount_options: fields[5].to_string(),
            fs_type: fs_type.to_string(),
            source: unescape_octal(source),
            super_options: super_options.to_string(),
        })
    }

    /// Whether `option` appears in the per-mount or the per-superblock options.
    pub fn has_option(&self, option: &str) -> bool {
        self.mount_options
            .split(',')
            .chain(self.super_options.split(','))
            .any(|candidate| candidate == option)
    }
}

/// Parses a whole mountinfo text; blank lines are skipped, any bad line is an error.
pub fn parse_mountinfo(text: &str) -> Result<Vec<MountInfo>, ParseError> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(MountInfo::from_line)
        .collect()
}

/// The mount `canonical_path` is on: the one whose mount point is the longest
/// path-component prefix of the path (`/a/bc` is not under `/a/b`). When several mounts share
/// that mount point, the last one in the table wins: it was mounted on top.
///
/// The path must be canonical (no symlinks, `..`); see [`std::fs::canonicalize`].
pub fn mount_for_path<'a>(mounts: &'a [MountInfo], canonical_path: &Path) -> Option<&'a MountInfo> {
    let mut best: Option<(usize, &MountInfo)> = None;
    for mount in mounts {
        let mount_point = Path::new(&mount.mount_point);
        if !canonical_path.starts_with(mount_point) {
            continue;
        }
        let depth = mount_point.components().count();
        if best.is_none_or(|(best_depth, _)| depth >= best_depth) {
            best = Some((depth, mount));
        }
    }
    best.map(|(_, mount)| mount)
}

/// The mount a directory with device numbers `dev` (its `fstat`) and real path
/// `real_path` is on: among the mounts of that device, the one whose mount point is the
/// longest prefix of the path ([`mount_for_path`] among them). When no mount shows that
/// device (a btrfs subvolume reports its own), [`mount_for_path`] over all.
pub fn mount_for_device<'a>(
    mounts: &'a [MountInfo],
    dev: (u32, u32),
    real_path: &Path,
) -> Option<&'a MountInfo> {
    let same: Vec<MountInfo> = mounts
        .iter()
        .filter(|m| (m.major, m.minor) == dev)
        .cloned()
        .collect();
    match mount_for_path(&same, real_path) {
        Some(found) => mounts.iter().find(|m| m.mount_id == found.mount_id),
        None => mount_for_path(mounts, real_path),
    }
}

/// Mount and superblock options as one list, each option once (`rw,relatime,ssd,...`).
pub fn merged_options(mount_options: &str, super_options: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for opt in mount_options.split(',').chain(super_options.split(',')) {
        if !opt.is_empty() && !seen.contains(&opt) {
            seen.push(opt);
        }
    }
    seen.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_merged_once() {
        assert_eq!(
            merged_options("rw,relatime", "rw,ssd,space_cache=v2"),
            "rw,relatime,ssd,space_cache=v2"
        );
        assert_eq!(merged_options("", ""), "");
    }

    const HOST: &str = include_str!("../../../../tests/fixtures/probe/mountinfo.host.txt");
    const SYNTHETIC: &str =
        include_str!("../../../../tests/fixtures/probe/mountinfo.synthetic.txt");

    #[test]
    fn parses_the_proc5_example() {
        let mount = MountInfo::from_line(
            "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
        )
        .expect("valid line");
        assert_eq!(
            mount,
            MountInfo {
                mount_id: 36,
                parent_id: 35,
                major: 98,
                minor: 0,
                root: "/mnt1".into(),
                mount_point: "/mnt2".into(),
                mount_options: "rw,noatime".into(),
                fs_type: "ext3".into(),
                source: "/dev/root".into(),
                super_options: "rw,errors=continue".into(),
            }
        );
    }

    #[test]
    fn parses_the_host_fixture() {
        let mounts = parse_mountinfo(HOST).expect("host fixture parses");
        assert_eq!(mounts.len(), HOST.lines().count());
        let root = mount_for_path(&mounts, Path::new("/tmp/x")).expect("root mount");
        assert_eq!(
            (root.major, root.minor, root.fs_type.as_str()),
            (254, 0, "ext4")
        );
        assert_eq!(root.source, "/dev/vda");
        // /dev/shm is mounted twice (ids 25 and 30): the later one is on top.
        let shm = mount_for_path(&mounts, Path::new("/dev/shm/f")).expect("shm");
        assert_eq!((shm.mount_id, shm.fs_type.as_str()), (30, "tmpfs"));
        let cpu = mount_for_path(&mounts, Path::new("/sys/fs/cgroup/cpu")).expect("cgroup");
        assert_eq!(cpu.mount_id, 32);
        // cpuacct is its own mount, not "under" /sys/fs/cgroup/cpu.
        let cpuacct = mount_for_path(&mounts, Path::new("/sys/fs/cgroup/cpuacct/x")).expect("x");
        assert_eq!(cpuacct.mount_id, 33);
    }

    #[test]
    fn synthetic_fixture_covers_escapes_and_optional_fields() {
        let mounts = parse_mountinfo(SYNTHETIC).expect("synthetic fixture parses");
        assert_eq!(mounts.len(), 9);
        let escaped = &mounts[3];
        assert_eq!(escaped.mount_point, "/home/My Files");
        assert_eq!(escaped.source, "/dev/disk/by-label/my disk");
        assert_eq!(escaped.root, "/data");
        assert_eq!(escaped.mount_options, "rw,noatime");
        assert_eq!(escaped.fs_type, "ext4");
        assert!(escaped.has_option("nobarrier"));
        let btrfs = &mounts[2];
        assert_eq!((btrfs.major, btrfs.minor), (0, 45));
        assert_eq!(btrfs.fs_type, "btrfs");
        assert_eq!(btrfs.source, "/dev/loop0");
        assert_eq!(mounts[5].fs_type, "overlay");
        assert_eq!(mounts[6].source, "server:/export");
        assert_eq!(mounts[7].mount_point, "/mnt/a\\b");
    }

    #[test]
    fn mount_for_path_picks_longest_component_prefix_and_top_mount() {
        let mounts = parse_mountinfo(SYNTHETIC).expect("parses");
        let find = |path: &str| mount_for_path(&mounts, Path::new(path)).map(|m| m.mount_id);
        assert_eq!(find("/"), Some(1));
        assert_eq!(find("/home"), Some(36));
        assert_eq!(find("/home/user/file"), Some(36));
        assert_eq!(find("/home/My Files/x"), Some(37));
        // A sibling sharing a name prefix is not under the mount.
        assert_eq!(find("/home/My Filesystem"), Some(36));
        assert_eq!(find("/homework"), Some(1));
        // /tmp is mounted twice; the last one is on top.
        assert_eq!(find("/tmp/run"), Some(44));
        assert_eq!(find("/mnt/nfs/a"), Some(42));
        assert_eq!(find("/mnt/a\\b/c"), Some(43));
        assert_eq!(mount_for_path(&[], Path::new("/x")), None);
    }

    #[test]
    fn mount_for_device_prefers_the_held_directorys_device() {
        let mounts = parse_mountinfo(SYNTHETIC).expect("parses");
        let find = |dev: (u32, u32), path: &str| {
            mount_for_device(&mounts, dev, Path::new(path)).map(|m| m.mount_id)
        };
        // The held directory is on the root filesystem, below a path another filesystem
        // was mounted over since it was opened: the root mount, not the one on top.
        let root = &mounts[0];
        assert_eq!(find((root.major, root.minor), "/home/user/t"), Some(1));
        assert_eq!(find((0, 45), "/home/user/t"), Some(36));
        // Two mounts of one device: the longest prefix of the path among them.
        assert_eq!(find((0, 53), "/tmp/run"), Some(44));
        // A device no mount shows (a btrfs subvolume's own): by path, as before.
        assert_eq!(find((0, 999), "/home/user/t"), Some(36));
    }

    #[test]
    fn empty_source_is_kept() {
        let mount = MountInfo::from_line("50 1 0:60 / /mnt/e rw - tmpfs  rw,size=4k").expect("ok");
        assert_eq!(mount.source, "");
        assert_eq!(mount.super_options, "rw,size=4k");
    }

    #[test]
    fn unescape_handles_edge_cases() {
        assert_eq!(unescape_octal("a\\040b"), "a b");
        assert_eq!(unescape_octal("tab\\011"), "tab\t");
        assert_eq!(unescape_octal("trailing\\"), "trailing\\");
        assert_eq!(unescape_octal("short\\04"), "short\\04");
        assert_eq!(unescape_octal("not\\089"), "not\\089");
        // \777 does not fit in a byte: kept literally.
        assert_eq!(unescape_octal("big\\777"), "big\\777");
        assert_eq!(unescape_octal(""), "");
    }

    #[test]
    fn garbage_lines_are_errors() {
        for line in [
            "",
            "-",
            " - ",
            "garbage",
            "1 2 3 4 5 6",
            "1 2 8:0 / / rw -",
            "1 2 8:0 / / rw - ",
            "x 2 8:0 / / rw - ext4 /dev/sda rw",
            "1 2 80 / / rw - ext4 /dev/sda rw",
            "1 2 8:x / / rw - ext4 /dev/sda rw",
            "1 2 8:0 / - ext4 /dev/sda rw",
            "99999999999 2 8:0 / / rw - ext4 /dev/sda rw",
            "1 2 8:0 / / rw - ext4",
            "\u{1F600} \u{0} \\ - \\",
        ] {
            assert!(MountInfo::from_line(line).is_err(), "accepted {line:?}");
        }
        let error = parse_mountinfo("1 2 8:0 / / rw - ext4 /dev/sda rw\nbad line\n")
            .expect_err("bad second line");
        assert!(error.to_string().contains("bad line"), "{error}");
    }

    #[test]
    fn other_whitespace_belongs_to_the_path() {
        // Found by crates/fsynclab/tests/cli/fuzz_parsers.rs: the kernel does not escape `\r` or U+0085.
        let line = "1 2 7:0 / /srv/a\rb\u{85}c rw,relatime - ext4 /dev/loop0 rw";
        let mount = MountInfo::from_line(line).unwrap();
        assert_eq!(mount.mount_point, "/srv/a\rb\u{85}c");
        assert_eq!(mount.mount_options, "rw,relatime");
    }

    #[test]
    fn a_dash_field_before_the_separator_is_not_the_separator() {
        // Found by scripts/fuzz.sh: a mount point "-" was taken for the separator.
        let line = "1 2 7:0 / - rw,relatime shared:1 - ext4 /dev/loop0 rw";
        let mount = MountInfo::from_line(line).unwrap();
        assert_eq!(mount.mount_point, "-");
        assert_eq!(
            (mount.fs_type.as_str(), mount.source.as_str()),
            ("ext4", "/dev/loop0")
        );
    }
}
