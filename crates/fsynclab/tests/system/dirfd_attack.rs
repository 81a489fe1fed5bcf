//! The run-directory swap, scripted for every workload kind: root fsynclab runs in a
//! target of mode 0777 (not sticky, `--allow-shared-target`) while a process of an
//! unprivileged user (uid 65534, `setpriv`) renames `fsynclab-N` away and plants a symlink
//! to a "victim" directory in its place. The victim holds files with the very names
//! fsynclab creates and removes (thread-0.dat, thread-0/, client-0/, shared.log...) and
//! must come out byte for byte identical. Also: pseudo-filesystem targets, shared targets
//! without the flag, and inode exhaustion, through the CLI.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{Lab, TmpfsMount, require_root};

/// Every file and directory under `dir` with its bytes (directories: empty), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read victim") {
        let path = entry.expect("entry").path();
        let meta = std::fs::symlink_metadata(&path).expect("stat");
        if meta.is_dir() {
            out.push((path.clone(), None));
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), Some(std::fs::read(&path).expect("read"))));
        }
    }
    out.sort();
    out
}

/// A victim directory full of files named like fsynclab's own.
fn make_victim(root: &Path) -> PathBuf {
    let v = root.join("victim");
    for d in ["thread-0", "thread-1", "client-0/d00", "client-1/d03"] {
        std::fs::create_dir_all(v.join(d)).unwrap();
    }
    for (i, f) in [
        "precious.txt",
        "thread-0.dat",
        "thread-1.dat",
        "shared-0.dat",
        "shared.log",
        "xattr-probe",
        "thread-0/f0000000000",
        "thread-1/f0000000001",
        "client-0/d00/f000000000000",
        "client-1/d03/f000000000001",
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(v.join(f), format!("victim file {i}: {f}\n").repeat(50)).unwrap();
    }
    v
}

/// The attacker: as uid/gid 65534 with no groups, renames every real `fsynclab-*`
/// directory in `target` to `moved-N` and puts a symlink to `victim` in its place.
fn start_attacker(target: &Path, victim: &Path) -> Child {
    let script = r#"T="$1"; V="$2"; n=0
while :; do
  for d in "$T"/fsynclab-*; do
    if [ -d "$d" ] && [ ! -L "$d" ]; then
      n=$((n+1))
      mv "$d" "$T/moved-$n" 2>/dev/null && ln -s "$V" "$d" 2>/dev/null
    fi
  done
done"#;
    Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(target)
        .arg(victim)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("setpriv (util-linux) runs the attacker as uid 65534")
}

/// Runs one workload under attack and checks the victim survived, the run directory's
/// contents were removed through its descriptor and the swap was reported.
fn attacked_run(test: &str, args: &[&str]) {
    if !require_root(test, "runs as root against an unprivileged attacker") {
        return;
    }
    let lab = Lab::new();
    // uid 65534 must reach the target; the target is shared-writable, not sticky.
    std::fs::set_permissions(lab.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&lab.target, std::fs::Permissions::from_mode(0o777)).unwrap();
    let victim = make_victim(lab.dir.path());
    let before = snapshot(&victim);

    let mut attacker = start_attacker(&lab.target, &victim);
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--json", "--allow-shared-target"])
        .args(args)
        .arg("--target")
        .arg(&lab.target)
        .output()
        .expect("run fsynclab");
    attacker.kill().expect("stop the attacker");
    attacker.wait().expect("reap the attacker");

    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(snapshot(&victim), before, "{test}: the victim changed");
    let moved: Vec<PathBuf> = std::fs::read_dir(&lab.target)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("moved-")
        })
        .collect();
    assert!(
        !moved.is_empty(),
        "{test}: the attacker never swapped the run directory (the test proves nothing): {stderr}"
    );
    if out.status.success() {
        // The run wrote into its own directory through the descriptor, emptied it the
        // same way, and said its name had been taken over.
        for m in &moved {
            assert_eq!(
                std::fs::read_dir(m).unwrap().count(),
                0,
                "{test}: {} not emptied",
                m.display()
            );
        }
        assert!(
            stdout.contains("renamed away") || stdout.contains("no longer is the directory"),
            "{test}: no loud warning about the swap: {stdout}"
        );
        assert!(stdout.contains("not sticky"), "{test}: {stdout}");
    } else {
        // Swapped between mkdirat and openat: refused before writing anything.
        assert!(
            stderr.contains("fsynclab-") && !stderr.contains("panicked"),
            "{test}: {stderr}"
        );
    }
}

#[test]
fn fileio_prepare_fill_under_attack() {
    attacked_run(
        "fileio_prepare_fill_under_attack",
        &[
            "--threads",
            "2",
            "--file-size",
            "32M",
            "--prepare",
            "fill",
            "--duration",
            "1",
        ],
    );
}

#[test]
fn fileio_sysbench_under_attack() {
    attacked_run(
        "fileio_sysbench_under_attack",
        &[
            "--mode",
            "sysbench",
            "--threads",
            "4",
            "--file-size",
            "8M",
            "--duration",
            "1",
        ],
    );
}

#[test]
fn smallfiles_under_attack() {
    attacked_run(
        "smallfiles_under_attack",
        &[
            "--kind",
            "smallfiles",
            "--threads",
            "2",
            "--files",
            "100000",
            "--file-size",
            "4k",
            "--file-sync",
            "fsync",
            "--duration",
            "1",
        ],
    );
}

#[test]
fn fileserver_under_attack() {
    attacked_run(
        "fileserver_under_attack",
        &["--kind", "fileserver", "--clients", "2", "--duration", "1"],
    );
}

#[test]
fn grouplog_under_attack() {
    attacked_run(
        "grouplog_under_attack",
        &["--kind", "grouplog", "--threads", "4", "--duration", "1"],
    );
}

#[test]
fn shared_target_without_the_flag_is_refused_and_nothing_stored() {
    let lab = Lab::new();
    std::fs::set_permissions(&lab.target, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = lab
        .cmd()
        .args(["run", "--quiet", "--file-size", "64k", "--target"])
        .arg(&lab.target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not sticky") && stderr.contains("--allow-shared-target"),
        "{stderr}"
    );
    assert!(lab.target_entries().is_empty());
    let list = lab.cmd().args(["list", "--json"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains("\"id\""),
        "nothing stored"
    );
}

#[test]
fn pseudo_filesystem_targets_are_refused() {
    let lab = Lab::new();
    let mut targets = vec![("/proc".to_string(), "proc".to_string())];
    targets.push(("/sys".into(), "sysfs".into()));
    // One mount of each other pseudo type this machine has (cgroup, devtmpfs...).
    let mounts = fsynclab::probe::list_mounts().unwrap();
    for fs in [
        "cgroup",
        "cgroup2",
        "devtmpfs",
        "debugfs",
        "tracefs",
        "securityfs",
    ] {
        if let Some(m) = mounts.iter().find(|m| m.fs_type == fs) {
            targets.push((m.mount_point.clone(), fs.to_string()));
        }
    }
    eprintln!("pseudo targets tried: {targets:?}");
    for (target, fs) in &targets {
        let (target, fs) = (target.as_str(), fs.as_str());
        let out = lab
            .cmd()
            .args(["run", "--quiet", "--file-size", "64k", "--target", target])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{target}: {stderr}");
        assert!(
            stderr.contains(fs) && stderr.contains("real filesystem"),
            "{target}: {stderr}"
        );
    }
}

#[test]
fn inode_exhaustion_says_inodes_and_names_the_field() {
    if !require_root(
        "inode_exhaustion_says_inodes_and_names_the_field",
        "mounts a tmpfs",
    ) {
        return;
    }
    // 64 inodes, plenty of blocks: smallfiles runs out of inodes, not space.
    let fs = TmpfsMount::new("size=64m,nr_inodes=64,mode=0755");
    let lab = Lab::new();
    let out = lab
        .cmd()
        .args([
            "run",
            "--quiet",
            "--json",
            "--kind",
            "smallfiles",
            "--threads",
            "1",
            "--files",
            "1000",
            "--file-size",
            "0",
            "--target",
        ])
        .arg(&fs.path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "a stored failed run: {text}");
    // A failed run's error is stored, so either front end may show it later: it is in
    // the library's own words, naming the setting by its preset (and --set) key.
    assert!(
        text.contains("no free inodes") && text.contains("lower smallfiles.files_per_thread"),
        "{text}"
    );
    assert!(!text.contains("no space left on device"), "{text}");
    assert_eq!(
        common::entries(&fs.path),
        Vec::<String>::new(),
        "cleaned up"
    );
}

/// A filesystem mounted inside a run directory is never emptied by cleanup (`fsynclab
/// clean`'s `remove_run_dir`): the walk does not cross mounts.
#[test]
fn remove_run_dir_does_not_cross_into_a_mount() {
    if !require_root(
        "remove_run_dir_does_not_cross_into_a_mount",
        "mounts a tmpfs",
    ) {
        return;
    }
    let lab = Lab::new();
    let run = lab.target.join("fsynclab-77");
    let mnt = run.join("sub");
    std::fs::create_dir_all(&mnt).unwrap();
    std::fs::write(run.join("ours.dat"), b"x").unwrap();
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "fsynclab-test"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(status.success(), "mount tmpfs");
    std::fs::write(mnt.join("on-the-mount"), b"keep me").unwrap();
    // The identities `clean` would have recorded.
    let ids = |p: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(p).unwrap();
        Some((m.dev(), m.ino()))
    };
    let expected = fsynclab::engine::RunDirIds {
        target: ids(&lab.target),
        run_dir: ids(&run),
    };
    let result = fsynclab::engine::remove_run_dir(&lab.target, "fsynclab-77", &expected);
    let kept = std::fs::read(mnt.join("on-the-mount"));
    let _ = Command::new("umount").arg(&mnt).status();
    let e = fsynclab::words::cleanup::clean_refusal_text(
        &result.unwrap_err(),
        &fsynclab::spec::Neutral,
    );
    assert!(e.contains("mounted"), "{e}");
    assert_eq!(kept.unwrap(), b"keep me");
    assert!(!run.join("ours.dat").exists(), "the rest was removed");
    // Unmounted, it goes.
    fsynclab::engine::remove_run_dir(&lab.target, "fsynclab-77", &expected).unwrap();
    assert!(lab.target_entries().is_empty());
}
