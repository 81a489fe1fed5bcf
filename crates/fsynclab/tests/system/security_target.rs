//! Attacks through `--target` by an unprivileged local user on root's fsynclab
//! (docs/SECURITY.md, "`--target` as root: another user's link is not followed"): a link the
//! user planted on the way to a directory root measures in is refused, while root's own
//! links, the sudo user's own links and a real directory another user owns stay targets.
//! Needs root: skipped (saying why) without, never with CI=true.

use crate::common;

use std::path::Path;

use crate::common::users::{SudoScene, ThrowawayUser as Attacker};

/// `fsynclab run --target <target>` as root (plain, or under sudo by `user`), with a short
/// run, the database in `db`, no kernel tracing.
fn run_as_root(sudo: Option<(&Attacker, &Path)>, db: &Path, target: &Path) -> std::process::Output {
    let mut cmd = match sudo {
        Some((user, root_home)) => user.sudo_fsynclab(root_home),
        None => {
            let mut cmd = common::bare_cmd();
            cmd.env_remove("SUDO_UID").env_remove("SUDO_USER");
            cmd
        }
    };
    cmd.arg("--db")
        .arg(db)
        .args(["run", "--quiet", "--json", "--kernel-trace", "off"])
        .args(["--duration", "0.2", "--file-size", "64k", "--target"])
        .arg(target)
        .output()
        .expect("fsynclab run")
}

/// Plain root given `--target` through another user's symbolic link to a root-only
/// directory (as the last component, or a directory on the way) refuses it, exit 2, naming
/// the link and the fix, and makes nothing there. Before, the target was resolved by path
/// and root made `fsynclab-<id>` and its test files in the directory the user chose.
#[test]
fn another_users_link_to_a_root_only_directory_is_not_a_target() {
    use std::os::unix::fs::PermissionsExt as _;
    if !common::require_root("another_users_link_..._not_a_target", "useradd, lchown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.path().join("home");
    let user = Attacker::new("t", &home);
    let root_only = dir.path().join("vault/root-only");
    std::fs::create_dir_all(&root_only).unwrap();
    std::fs::set_permissions(&root_only, std::fs::Permissions::from_mode(0o700)).unwrap();
    let last = home.join("t");
    std::os::unix::fs::symlink(&root_only, &last).unwrap();
    let middle = home.join("m");
    std::os::unix::fs::symlink(dir.path().join("vault"), &middle).unwrap();
    for link in [&last, &middle] {
        user.own(link);
    }
    let db = dir.path().join("root.sqlite");
    for (target, link) in [(last.clone(), &last), (middle.join("root-only"), &middle)] {
        let out = run_as_root(None, &db, &target);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", target.display());
        let named = format!(
            "{} is a symbolic link made by uid {}",
            link.display(),
            user.uid
        );
        assert!(
            err.contains(&named) && err.contains("--target") && err.contains("as that user"),
            "{err}"
        );
        assert!(
            common::entries(&root_only).is_empty(),
            "root measured in the linked directory via {}",
            target.display()
        );
    }
    // The same link as a fio job's directory= (the target when no --target is given).
    let job = dir.path().join("job.fio");
    let text = format!(
        "[a]\nrw=randwrite\nsize=64k\ndirectory={}\n",
        last.display()
    );
    std::fs::write(&job, text).unwrap();
    let out = common::bare_cmd()
        .env_remove("SUDO_UID")
        .env_remove("SUDO_USER")
        .arg("--db")
        .arg(&db)
        .args(["run", "--quiet", "--kernel-trace", "off", "--fio-job"])
        .arg(&job)
        .output()
        .expect("fsynclab run --fio-job");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("directory= (line 4)") && err.contains("symbolic link made by uid"),
        "{err}"
    );
    assert!(
        common::entries(&root_only).is_empty(),
        "measured via directory="
    );
}

/// What must keep working as root: a real directory another user owns (plain root measures
/// it, by descriptor), root's own link, and under sudo the invoking user's own link.
#[test]
fn own_links_and_another_users_real_directory_stay_targets() {
    if !common::require_root("own_links_..._stay_targets", "useradd, chown") {
        return;
    }
    let scene = SudoScene::new("k");
    let (dir, home, user, root_home) = (&scene.dir, &scene.home, &scene.user, &scene.root_home);
    let theirs = home.join("real");
    std::fs::create_dir(&theirs).unwrap();
    user.own(&theirs);
    let their_link = home.join("via");
    std::os::unix::fs::symlink("real", &their_link).unwrap();
    user.own(&their_link);
    let roots_link = dir.path().join("roots-link");
    std::os::unix::fs::symlink(&theirs, &roots_link).unwrap();

    let db = dir.path().join("root.sqlite");
    for target in [&theirs, &roots_link] {
        let out = run_as_root(None, &db, target);
        common::assert_success(&out, &format!("plain root on {}", target.display()));
        let run = common::one_run(&out.stdout);
        assert_eq!(run["status"], "finished", "{run}");
    }
    let user_db = home.join("lab/runs.sqlite");
    let out = run_as_root(Some((user, root_home)), &user_db, &their_link);
    common::assert_success(&out, "sudo fsynclab on the user's own link");
    let run = common::one_run(&out.stdout);
    assert_eq!(
        run["target"].as_str(),
        Some(theirs.to_str().unwrap()),
        "recorded as the real directory: {run}"
    );
    assert!(common::entries(&theirs).is_empty(), "run files removed");
}
