//! Issue 10 §1, for real: mkfs and mount options that name another block device. A small
//! ext4 image attached with losetup stands in for the victim disk; every attack must exit 2
//! naming the refused word, and the victim's `blkid -p` and bytes must not change. Root
//! (loop devices); outside CI the test skips with a message when not root.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Lab, require_root, sh};

/// A loop device over a fresh ext4 image, detached (and the image removed) on drop.
struct Victim {
    node: String,
    image: PathBuf,
    _dir: tempfile::TempDir,
}

impl Victim {
    fn new() -> Victim {
        let dir = tempfile::tempdir().expect("victim dir");
        let image = dir.path().join("victim.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(32 << 20))
            .expect("victim image");
        sh("mkfs.ext4", &["-F", "-q", "-L", "victim", path(&image)]);
        let node = sh("losetup", &["--find", "--show", path(&image)]);
        Victim {
            node,
            image,
            _dir: dir,
        }
    }

    /// `blkid -p` of the device (what a format would change) and a digest of every byte.
    fn fingerprint(&self) -> (String, u64) {
        let probe = Command::new("blkid")
            .args(["-p", "-o", "export", &self.node])
            .output()
            .expect("blkid");
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::fs::read(&self.image)
            .expect("victim bytes")
            .hash(&mut hasher);
        (
            String::from_utf8_lossy(&probe.stdout).into_owned(),
            hasher.finish(),
        )
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.node]).status();
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `fsynclab` with this test's database and scratch state.
fn cmd(lab: &Lab) -> Command {
    let mut c = lab.cmd();
    c.env("XDG_DATA_HOME", lab.dir.path().join("xdg"));
    c
}

/// Runs `args`, expects exit 2 with `wanted` in stderr and the victim untouched.
fn refused(lab: &Lab, victim: &Victim, args: &[&str], wanted: &str) {
    let before = victim.fingerprint();
    assert!(before.0.contains("TYPE=ext4"), "{}", before.0);
    let out = cmd(lab).args(args).output().expect("fsynclab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(wanted),
        "{args:?}: wanted {wanted:?} in {stderr}"
    );
    assert_eq!(victim.fingerprint(), before, "{args:?} changed the victim");
    // Nothing was made: no image attached from this test's state.
    let loops = sh("losetup", &["-a"]);
    let ours = lab.dir.path().join("xdg").display().to_string();
    assert!(!loops.contains(&ours), "{args:?} attached {loops}");
}

#[test]
fn option_attacks_on_a_victim_device_are_refused() {
    if !require_root(
        "option_attacks_on_a_victim_device_are_refused",
        "attaches a victim loop device",
    ) {
        return;
    }
    let lab = Lab::new();
    let victim = Victim::new();
    let v = victim.node.as_str();
    let create = |fs: &str, flag: &str, value: &str| -> Vec<String> {
        [
            "scratch", "create", "--fs", fs, "--size", "300M", flag, value,
        ]
        .map(String::from)
        .to_vec()
    };
    let attacks: Vec<(Vec<String>, String)> = vec![
        // The reported ones.
        (
            create("btrfs", "--mkfs-opts", v),
            format!("mkfs option `{v}`"),
        ),
        (
            create("xfs", "--mkfs-opts", &format!("-l logdev={v}")),
            format!("mkfs option `-l logdev={v}`"),
        ),
        (
            create("ext4", "--mkfs-opts", &format!("-J device={v}")),
            format!("mkfs option `-J device={v}`"),
        ),
        (
            create("btrfs", "--mkfs-opts", &format!("-d single -m single {v}")),
            format!("mkfs option `{v}`"),
        ),
        (
            create("ext4", "--mkfs-opts", &format!("-L b {v}")),
            format!("mkfs option `{v}`"),
        ),
        (
            create("xfs", "--mkfs-opts", &format!("-r rtdev={v}")),
            format!("`-r rtdev={v}`"),
        ),
        // Mount options.
        (
            create("btrfs", "--mount-opts", &format!("ssd,device={v}")),
            format!("mount option `device={v}`"),
        ),
        (
            create("xfs", "--mount-opts", &format!("logdev={v}")),
            format!("mount option `logdev={v}`"),
        ),
        (
            create("ext4", "--mount-opts", &format!("journal_path={v}")),
            format!("mount option `journal_path={v}`"),
        ),
        // A matrix given on the command line.
        (
            [
                "matrix",
                "--preset",
                "fsync-methods",
                "--fs",
                "btrfs",
                "--fs",
                "ext4",
                "--mkfs-opts",
                "-q",
                "--mkfs-opts",
                v,
            ]
            .map(String::from)
            .to_vec(),
            format!("mkfs option `{v}`"),
        ),
    ];
    for (args, wanted) in &attacks {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&lab, &victim, &args, wanted);
    }

    // A preset file whose suggested matrix formats the victim: refused at load, by field.
    let preset = lab.dir.path().join("evil.toml");
    let base = include_str!("../../../../presets/fsync-methods.toml");
    let base = base.split("[[matrix]]").next().expect("preset head");
    std::fs::write(
        &preset,
        format!(
            "{base}[[matrix]]\ntitle = \"labels\"\nwhy = \"w\"\nfs = [\"btrfs\"]\n\
             mkfs_opts = [\"-L a\", \"-L b {v}\"]\n"
        ),
    )
    .expect("preset file");
    let preset = path(&preset);
    refused(
        &lab,
        &victim,
        &[
            "matrix",
            "--preset",
            preset,
            "--suggested",
            "1",
            "--scale",
            "0.01",
        ],
        &format!("[[matrix]] 1 mkfs_opts[1] (for btrfs): mkfs option `{v}`"),
    );
    // `presets FILE` refuses to show it as if it were runnable, with the same message.
    refused(
        &lab,
        &victim,
        &["presets", preset],
        "[[matrix]] 1 mkfs_opts[1]",
    );
    let out = cmd(&lab).args(["scratch", "list"]).output().expect("list");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no scratch filesystems"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
