//! Which entries of the state directory are fsynclab's own (its marker or a recipe naming
//! them), and removing a scratch directory file by file without ever deleting what fsynclab
//! did not make.

use std::path::Path;

use super::ScratchError;
use super::ScratchRecipe;
use super::checks::validate_name;
use super::layout::{DISK_IMAGE, MOUNT_DIR, RECIPE_FILE, read_mountinfo, read_recipe};
use super::owned::image_owner_name;
use super::roots::{Roots, require_real};
use super::system::LoopDevice;
use crate::probe::parse_mountinfo;

/// Written first into every scratch directory fsynclab makes (before the image, loop,
/// mount or recipe): a directory without it or a recipe naming it is not fsynclab's.
pub(crate) const MARKER_FILE: &str = ".fsynclab-scratch";

/// The entries under the state directory: whose they are.
#[derive(Debug, Default)]
pub(super) struct Entries {
    /// Names fsynclab made (marker or recipe), or whose directory is gone while a loop or
    /// RAM image of that name's exact shape is left.
    pub owned: Vec<String>,
    /// Valid names of real directories or files that fsynclab did not mark: left alone.
    pub foreign: Vec<String>,
    /// Valid names that are symlinks or special files: refused, never followed.
    pub strange: Vec<String>,
}

/// Whose the entries under the state directory are (see [`Entries`]); `loops` adds the
/// names of left-over loops whose directory is gone.
pub(super) fn entries(roots: &Roots, loops: &[LoopDevice]) -> Entries {
    let mut entries = Entries::default();
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|list| {
                list.filter_map(Result::ok)
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    for name in names(&roots.state) {
        if validate_name(&name).is_err() {
            continue;
        }
        let dir = roots.state.join(&name);
        match std::fs::symlink_metadata(&dir).map(|m| m.file_type()) {
            Ok(t) if t.is_dir() && is_marked(&dir, &name, &roots.state) => entries.owned.push(name),
            Ok(t) if t.is_dir() || t.is_file() => entries.foreign.push(name),
            Ok(_) => entries.strange.push(name),
            Err(_) => {}
        }
    }
    // A RAM image or a loop of our exact shape whose directory is gone: nothing of a
    // user's is there to protect.
    let ram_names = names(&roots.ram)
        .into_iter()
        .filter_map(|file| Some(file.strip_suffix(".img")?.to_string()));
    let loop_names = loops
        .iter()
        .filter_map(|lo| image_owner_name(&lo.backing_file, &roots.state, &roots.ram));
    for name in ram_names.chain(loop_names) {
        let gone = std::fs::symlink_metadata(roots.state.join(&name)).is_err();
        if validate_name(&name).is_ok() && gone && !entries.owned.contains(&name) {
            entries.owned.push(name);
        }
    }
    entries.owned.sort();
    entries.owned.dedup();
    entries
}

/// Deletes a recipe directory after making sure nothing is mounted under it: only the
/// files fsynclab makes there (recipe, marker, disk image) and the empty mount point are
/// removed, never recursively, so a file fsynclab did not make stops the removal (and is
/// named) instead of being deleted.
pub(super) fn remove_recipe_dir(recipe_dir: &Path) -> Result<(), ScratchError> {
    if !require_real(recipe_dir, true)? {
        return Ok(());
    }
    let mounts = parse_mountinfo(&read_mountinfo()?)?;
    if let Some(mount) = mounts
        .iter()
        .find(|m| Path::new(&m.mount_point).starts_with(recipe_dir))
    {
        return Err(ScratchError::UnmountFailed {
            mount_point: mount.mount_point.clone(),
            stderr: "still mounted after umount".to_string(),
        });
    }
    let tmp = format!("{RECIPE_FILE}.tmp");
    for file in [DISK_IMAGE, RECIPE_FILE, tmp.as_str()] {
        remove_if_present(&recipe_dir.join(file), |p| std::fs::remove_file(p))?;
    }
    let mount_dir = recipe_dir.join(MOUNT_DIR);
    let kept = |dir: &Path| {
        std::fs::read_dir(dir)
            .map(|list| {
                list.filter_map(Result::ok)
                    .map(|e| e.path().display().to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let left = kept(&mount_dir);
    if !left.is_empty() {
        return Err(kept_files(recipe_dir, &left));
    }
    remove_if_present(&mount_dir, |p| std::fs::remove_dir(p))?;
    // The marker goes last: until then an interrupted destroy is still recognisably ours.
    let left: Vec<String> = kept(recipe_dir)
        .into_iter()
        .filter(|p| !p.ends_with(MARKER_FILE))
        .collect();
    if !left.is_empty() {
        return Err(kept_files(recipe_dir, &left));
    }
    remove_if_present(&recipe_dir.join(MARKER_FILE), |p| std::fs::remove_file(p))?;
    std::fs::remove_dir(recipe_dir).map_err(|e| ScratchError::io("remove", recipe_dir, e))
}

/// A recipe describes its own directory: its name and mount point are `<state>/<name>/mnt`.
pub(super) fn recipe_is_own(recipe: &ScratchRecipe, state: &Path) -> bool {
    recipe.mount_point == state.join(&recipe.name).join(MOUNT_DIR)
}

/// Whether `<state>/<name>` (`dir`) is fsynclab's: it holds the marker (a regular file) or a
/// recipe naming it.
pub(super) fn is_marked(dir: &Path, name: &str, state: &Path) -> bool {
    let marker = std::fs::symlink_metadata(dir.join(MARKER_FILE)).is_ok_and(|m| m.is_file());
    marker || read_recipe(dir).is_ok_and(|r| r.name == name && recipe_is_own(&r, state))
}

pub(super) fn not_ours(dir: &Path) -> ScratchError {
    ScratchError::Unsafe {
        path: dir.to_path_buf(),
        reason: format!(
            "fsynclab did not make it (no {MARKER_FILE} marker or recipe naming it), so it \
             leaves it alone; remove it by hand if it is not needed"
        ),
    }
}

fn kept_files(dir: &Path, left: &[String]) -> ScratchError {
    ScratchError::Unsafe {
        path: dir.to_path_buf(),
        reason: format!(
            "it holds files fsynclab did not make ({}); they were kept: move them away and \
             run the destroy again",
            left.join(", ")
        ),
    }
}

/// Removes `path` with `remove`; a missing one is fine.
fn remove_if_present(
    path: &Path,
    remove: impl Fn(&Path) -> std::io::Result<()>,
) -> Result<(), ScratchError> {
    match remove(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ScratchError::io("remove", path, e)),
    }
}
