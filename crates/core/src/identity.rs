//! The invoking user under `sudo fsynclab`: who they are (sudo's `SUDO_UID`/`SUDO_GID`)
//! and file access with their rights rather than root's. Below everything that reads or
//! writes a file a user names (presets, job files, reports, bundles).

use std::sync::OnceLock;

use nix::unistd::{Gid, Uid};

/// Runs `f` with this thread's filesystem identity (fsuid and fsgid) set to the invoking
/// user's under `sudo fsynclab`, and back to root's afterwards (also when `f` panics).
/// Files written where a user asked — reports, bundles, fio job files — are then created
/// with that user's rights and owned by them: a user allowed to run only `sudo fsynclab`
/// cannot make root create or replace a file where they could not write (docs/SECURITY.md,
/// "Output files under sudo"). The identity is sudo's `SUDO_UID`/`SUDO_GID` as such, also
/// when [`crate::probe::sudo_user`] distrusts the user's home (a user could make their home unsafe on
/// purpose). Leaving fsuid 0 drops root's file-permission capabilities for the thread;
/// root's supplementary groups stay. Not root, or not under sudo (or sudo by root): `f`
/// runs as is.
pub fn with_invoking_user_files<T>(f: impl FnOnce() -> T) -> T {
    let ids = nix::unistd::geteuid()
        .is_root()
        .then(invoking_ids)
        .flatten();
    let Some((uid, gid)) = ids else {
        return f();
    };
    let _identity = FsIdentity::assume(uid, gid);
    f()
}

/// As root under `sudo fsynclab` (by a user other than root): the invoking user's uid
/// and gid from sudo's `SUDO_UID`/`SUDO_GID`, also when [`crate::probe::sudo_user`] distrusts their
/// home (see [`with_invoking_user_files`]); `None` otherwise.
pub fn invoking_user_ids() -> Option<(u32, u32)> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    invoking_ids().map(|(uid, gid)| (uid.as_raw(), gid.as_raw()))
}

/// The invoking user's uid and gid from sudo's variables, read once: `None` without a
/// numeric non-zero `SUDO_UID`. Without `SUDO_GID`, the user's primary group, else
/// `nogroup` (65534).
fn invoking_ids() -> Option<(Uid, Gid)> {
    static IDS: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let number = |var: &str| std::env::var(var).ok()?.trim().parse::<u32>().ok();
        let uid = number("SUDO_UID").filter(|&uid| uid != 0)?;
        let gid = number("SUDO_GID")
            .or_else(|| {
                let user = nix::unistd::User::from_uid(Uid::from_raw(uid)).ok()??;
                Some(user.gid.as_raw())
            })
            .unwrap_or(65534);
        Some((uid, gid))
    });
    ids.map(|(uid, gid)| (Uid::from_raw(uid), Gid::from_raw(gid)))
}

/// The thread's filesystem identity before [`FsIdentity::assume`], put back on drop.
struct FsIdentity {
    uid: Uid,
    gid: Gid,
}

impl FsIdentity {
    /// Sets fsgid, then fsuid (while the thread still holds root's capabilities).
    fn assume(uid: Uid, gid: Gid) -> FsIdentity {
        let gid_before = nix::unistd::setfsgid(gid);
        let uid_before = nix::unistd::setfsuid(uid);
        FsIdentity {
            uid: uid_before,
            gid: gid_before,
        }
    }
}

impl Drop for FsIdentity {
    fn drop(&mut self) {
        nix::unistd::setfsuid(self.uid);
        nix::unistd::setfsgid(self.gid);
    }
}
