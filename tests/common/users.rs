//! A throwaway local user for the tests that check what root's fsynclab does for (or
//! against) an unprivileged user: `sudo` runs and attacks (tests/cli_sudo.rs,
//! tests/security.rs).

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;
use std::process::Command;

/// A user made for one test, deleted (with its mail spool) on drop.
pub struct ThrowawayUser {
    /// The login name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

impl ThrowawayUser {
    /// Makes the user with `home` (created, owned by it, mode 0700).
    pub fn new(tag: &str, home: &Path) -> Self {
        let name = format!("fsl{tag}{}", std::process::id() % 100_000);
        let _ = Command::new("userdel").arg(&name).output();
        let out = Command::new("useradd")
            .args(["-M", "-s", "/bin/sh", "-d"])
            .arg(home)
            .arg(&name)
            .output()
            .expect("useradd");
        assert!(
            out.status.success(),
            "useradd: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").arg(flag).arg(&name).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        let (uid, gid) = (id("-u"), id("-g"));
        std::fs::create_dir(home).unwrap();
        std::os::unix::fs::chown(home, Some(uid), Some(gid)).unwrap();
        std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700)).unwrap();
        Self { name, uid, gid }
    }

    /// `fsynclab` as root, as `sudo` by this user would start it.
    pub fn sudo_fsynclab(&self, root_home: &Path) -> Command {
        let mut c = super::bare_cmd();
        c.env("SUDO_UID", self.uid.to_string())
            .env("SUDO_GID", self.gid.to_string())
            .env("SUDO_USER", &self.name)
            .env("HOME", root_home)
            .env_remove("XDG_DATA_HOME");
        c
    }
}

impl ThrowawayUser {
    /// Makes `path` (a directory or symlink already there) the user's.
    pub fn own(&self, path: &Path) {
        std::os::unix::fs::lchown(path, Some(self.uid), Some(self.gid)).unwrap();
    }
}

impl Drop for ThrowawayUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

/// The owner of `path` itself (a link is not followed).
pub fn owner(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .uid()
}

/// The stage of most sudo attacks: a temporary directory others may enter (mode 0755)
/// holding a throwaway user with `home`, root's own home `root_home` and `root_only`, a
/// directory of root's that only root may enter (mode 0700).
pub struct SudoScene {
    /// Removed (with all of the above) on drop.
    pub dir: tempfile::TempDir,
    /// The user's home (theirs, mode 0700).
    pub home: std::path::PathBuf,
    /// The user, deleted on drop.
    pub user: ThrowawayUser,
    /// `HOME` of root's fsynclab.
    pub root_home: std::path::PathBuf,
    /// Root's directory the user cannot enter.
    pub root_only: std::path::PathBuf,
}

impl SudoScene {
    /// Sets the scene for user `tag` (see [`ThrowawayUser::new`]).
    pub fn new(tag: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        let user = ThrowawayUser::new(tag, &home);
        let root_home = dir.path().join("root-home");
        let root_only = dir.path().join("root-only");
        for d in [&root_home, &root_only] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::set_permissions(&root_only, std::fs::Permissions::from_mode(0o700)).unwrap();
        Self {
            dir,
            home,
            user,
            root_home,
            root_only,
        }
    }

    /// `fsynclab` as root, started by this scene's user through `sudo`.
    pub fn sudo_fsynclab(&self) -> Command {
        self.user.sudo_fsynclab(&self.root_home)
    }
}
