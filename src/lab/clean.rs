//! `fsynclab clean`: removes the directories of runs whose owner process is gone, and
//! nothing else. Every candidate comes from the database (recorded before the run made
//! it), its target must still be the same directory (device and inode), and the removal
//! itself ([`engine::remove_run_dir`]) refuses anything but an `fsynclab-<id>[-<n>]`
//! directory owned by this user that still is the directory the run made (its device and
//! inode, recorded as the run made it), and never follows a link.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::cleanup::CleanRefusal;
use crate::engine;
use crate::store::{CleanOutcome, ForeignDatabase, Store, StoreError};

/// Removes the leftover directories of runs that ended (or whose process died) without
/// removing them; a directory already gone is only recorded as such.
pub fn clean_run_dirs(store: &Store) -> Result<CleanOutcome, StoreError> {
    let mut outcome = CleanOutcome::default();
    if let Some(foreign) = foreign_database(store) {
        // The CLI lists it with the directories left; the window words it itself.
        outcome.skipped.push((
            store.path().unwrap_or(Path::new("")).to_path_buf(),
            CleanRefusal::ForeignDatabase {
                owner_uid: foreign.owner_uid,
                uid: foreign.uid,
            },
        ));
        outcome.foreign = Some(foreign);
        return Ok(outcome);
    }
    for dir in store.leftover_run_dirs()? {
        let path = dir.path();
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Best effort: a read-only store records it on a later clean.
                if let Err(e) = store.mark_dir_removed(dir.run_id) {
                    log::debug!("run {}: directory gone, not recorded yet: {e}", dir.run_id);
                }
                continue;
            }
            _ => {}
        }
        if !dir.target_unchanged() {
            outcome.skipped.push((
                path,
                CleanRefusal::TargetChanged {
                    target: dir.target.clone(),
                    run_id: Some(dir.run_id),
                },
            ));
            continue;
        }
        let expected = engine::RunDirIds {
            target: Some((dir.target_dev, dir.target_ino)),
            run_dir: dir.dir_dev_ino,
        };
        match engine::remove_run_dir(&dir.target, &dir.name, &expected) {
            Ok(()) => {
                if let Err(e) = store.mark_dir_removed(dir.run_id) {
                    log::warn!(
                        "run {}: removed {} but could not record it: {e}",
                        dir.run_id,
                        path.display()
                    );
                }
                outcome.removed.push(path);
            }
            Err(why) => outcome.skipped.push((path, why)),
        }
    }
    Ok(outcome)
}

/// Why the database's records must not choose directories to remove: a file owned by
/// another user (root cleaning with a user's database) could name any `fsynclab-<id>`
/// directory root made, kept runs' included.
fn foreign_database(store: &Store) -> Option<ForeignDatabase> {
    let meta = std::fs::metadata(store.path()?).ok()?;
    let uid = nix::unistd::geteuid().as_raw();
    (meta.uid() != uid).then_some(ForeignDatabase {
        owner_uid: meta.uid(),
        uid,
    })
}
