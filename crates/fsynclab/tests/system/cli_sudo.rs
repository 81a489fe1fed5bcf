//! Issue 15 item 21: `sudo fsynclab …` keeps its runs in the invoking user's data
//! directory, owned by that user, and says where the database is; a home another user
//! could swap is not followed. A throwaway user made with `useradd`, fsynclab run as root
//! with the variables sudo sets (SUDO_UID, SUDO_GID, SUDO_USER, HOME=/root-like), then as
//! the user through `setpriv`. Needs root: skipped (saying why) without, never with CI=true.

use crate::common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::users::{ThrowawayUser, owner};

fn run_args(target: &Path) -> Vec<String> {
    [
        "run",
        "--quiet",
        "--duration",
        "0.2",
        "--file-size",
        "256k",
        "--target",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([target.display().to_string()])
    .collect()
}

#[test]
fn sudo_runs_land_in_the_invoking_users_database_owned_by_them() {
    if !common::require_root(
        "sudo_runs_land_in_the_invoking_users_database",
        "useradd, chown",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, root_home, target) = (
        dir.path().join("home"),
        dir.path().join("roothome"),
        dir.path().join("target"),
    );
    std::fs::create_dir(&root_home).unwrap();
    std::fs::create_dir(&target).unwrap();
    let user = ThrowawayUser::new("a", &home);

    let out = user
        .sudo_fsynclab(&root_home)
        .args(run_args(&target))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let data = home.join(".local/share/fsynclab");
    let db: PathBuf = data.join("fsynclab.sqlite");
    assert!(
        err.contains(&format!(
            "database: {} (sudo: {}'s)",
            db.display(),
            user.name
        )),
        "{err}"
    );
    for made in [
        home.join(".local"),
        home.join(".local/share"),
        data.clone(),
        db.clone(),
    ] {
        assert_eq!(owner(&made), user.uid, "{} not the user's", made.display());
    }
    for name in [
        "fsynclab.sqlite-wal",
        "fsynclab.sqlite-shm",
        "fsynclab.sqlite.locks",
    ] {
        let p = data.join(name);
        if p.exists() {
            assert_eq!(owner(&p), user.uid, "{} not the user's", p.display());
        }
    }
    assert!(
        !root_home.join(".local").exists(),
        "root's data directory was used"
    );

    // The user, without sudo, reads and adds to the same database.
    let as_user = |args: &[String]| {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", user.uid),
            &format!("--regid={}", user.gid),
            "--clear-groups",
        ])
        .arg(assert_cmd::cargo::cargo_bin("fsynclab"))
        .args(args)
        .env("HOME", &home)
        .env_remove("FSYNCLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .env_remove("SUDO_UID")
        .env_remove("SUDO_USER");
        c.output().unwrap()
    };
    let user_target = home.join("t");
    std::fs::create_dir(&user_target).unwrap();
    std::os::unix::fs::chown(&user_target, Some(user.uid), Some(user.gid)).unwrap();
    let out = as_user(&run_args(&user_target));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = as_user(&["list".into(), "--json".into()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = common::payload(&out.stdout, "runs");
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");
}

#[test]
fn a_home_another_user_can_swap_is_not_followed() {
    if !common::require_root(
        "a_home_another_user_can_swap_is_not_followed",
        "useradd, chown",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    // Anyone may rename entries here: the home below could be swapped for another.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (home, root_home) = (shared.join("home"), dir.path().join("roothome"));
    std::fs::create_dir(&root_home).unwrap();
    let user = ThrowawayUser::new("b", &home);

    let out = user
        .sudo_fsynclab(&root_home)
        .args(["list"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("is not safe to follow") && err.contains("lets others rename entries"),
        "{err}"
    );
    let root_db = root_home.join(".local/share/fsynclab/fsynclab.sqlite");
    assert!(err.contains(&root_db.display().to_string()), "{err}");
    assert!(!home.join(".local").exists());
}
