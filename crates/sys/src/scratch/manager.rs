//! [`ScratchManager`]: create, list, find, destroy and clean up scratch filesystems.

use std::path::{Path, PathBuf};

use super::device::existing_ancestor;
use super::layout::{DISK_IMAGE, MOUNT_DIR, RECIPE_FILE, euid, read_mountinfo, read_recipe};
use super::marks::{MARKER_FILE, entries, is_marked, not_ours, recipe_is_own, remove_recipe_dir};
use super::owned::{Scope, find_stale, select_owned};
use super::roots::{
    Roots, StateLock, check_shape, default_ram_dir, lock_state_dir, prepare_root, require_real,
};
use super::system::{LoopDevice, MOUNT_PACKAGE, detach, list_loop_devices, require_tool, unmount};
use super::{ScratchError, ScratchRecipe, ScratchStatus, require_root, validate_name};
use crate::probe::parse_mountinfo;

/// Makes and removes scratch filesystems under a state directory (recipes, mount points,
/// disk images) and a RAM directory (RAM images). Both directories must be fsynclab's own:
/// loops backed by files under them and mounts under the state directory count as ours.
#[derive(Clone, Debug)]
pub struct ScratchManager {
    pub(super) state_dir: PathBuf,
    pub(super) ram_dir: PathBuf,
    pub(super) protect: Vec<PathBuf>,
}

impl ScratchManager {
    /// A manager keeping state in `state_dir` (usually [`ScratchManager::default_state_dir`])
    /// and RAM images in its own RAM directory, [`super::RAM_DIR_PREFIX`] plus 16 hex digits
    /// of a stable hash of the canonical state directory.
    pub fn new(state_dir: PathBuf) -> Self {
        let ram_dir = default_ram_dir(&state_dir);
        ScratchManager::with_roots(state_dir, ram_dir)
    }

    /// A manager with its own state and RAM directories (tests use temporary ones).
    pub fn with_roots(state_dir: PathBuf, ram_dir: PathBuf) -> Self {
        ScratchManager {
            state_dir,
            ram_dir,
            protect: Vec::new(),
        }
    }

    /// Adds paths no [`Backing::Device`] may hold (e.g. the database file); `/` is always
    /// protected.
    pub fn protect_paths(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.protect.extend(paths);
        self
    }

    /// `$XDG_DATA_HOME/fsynclab/scratch` (next to the database, see
    /// `store::Store::default_path`), but under `sudo` root's own: the invoking user could
    /// rename entries in their data directory, swapping the state directory (which holds
    /// mount points) for a link after it was checked.
    pub fn default_state_dir() -> Result<PathBuf, ScratchError> {
        let dir = crate::probe::own_data_dir().ok_or(ScratchError::NoDataDir)?;
        Ok(dir.join("scratch"))
    }

    /// The state directory checked as every scratch operation checks it (made 0700 when
    /// missing; refused when a symlink, not the effective user's, writable by others, or —
    /// for root — below a directory another user could change): its canonical path. The crash
    /// tests' directories live there too.
    pub fn checked_state_dir(&self) -> Result<PathBuf, ScratchError> {
        self.check_root_shapes()?;
        prepare_root(&self.state_dir, false)
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The RAM image directory.
    pub fn ram_dir(&self) -> &Path {
        &self.ram_dir
    }

    /// The protected paths added with [`ScratchManager::protect_paths`].
    pub fn protected_paths(&self) -> &[PathBuf] {
        &self.protect
    }

    /// Refuses directories so shallow that "everything under them" would include foreign
    /// mounts or loops (`/`, `/tmp`). Pure.
    pub(super) fn check_root_shapes(&self) -> Result<(), ScratchError> {
        check_shape(&self.state_dir)?;
        check_shape(&self.ram_dir)
    }

    /// [`ScratchManager::check_root_shapes`], then creates missing roots (mode 0700) and
    /// refuses roots that are symlinks, not owned by the effective uid, group/other-writable
    /// or (the RAM directory) group/other-accessible. Returns the canonical roots.
    pub(super) fn check_roots(&self) -> Result<Roots, ScratchError> {
        self.check_root_shapes()?;
        Ok(Roots {
            state: prepare_root(&self.state_dir, false)?,
            ram: prepare_root(&self.ram_dir, true)?,
        })
    }

    /// Checked roots and the exclusive lock on the state directory (see
    /// [`super::roots::lock_state_dir`]): every operation that changes anything holds it.
    pub(super) fn lock(&self) -> Result<(Roots, StateLock), ScratchError> {
        let roots = self.check_roots()?;
        let lock = lock_state_dir(&roots.state)?;
        Ok((roots, lock))
    }

    pub(super) fn recipe_dir(&self, name: &str) -> PathBuf {
        self.state_dir.join(name)
    }

    pub(super) fn ram_image(&self, name: &str) -> PathBuf {
        self.ram_dir.join(format!("{name}.img"))
    }

    pub(super) fn name_taken(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.recipe_dir(name)).is_ok()
            || std::fs::symlink_metadata(self.ram_image(name)).is_ok()
    }

    /// Every scratch filesystem with a readable recipe, by name, with whether it is mounted
    /// and its loop attached. Directories without a readable recipe (half-made) are left out;
    /// [`ScratchManager::destroy_all`] removes them. Needs no root.
    pub fn list(&self) -> Result<Vec<ScratchStatus>, ScratchError> {
        let recipes = self.recipes();
        if recipes.is_empty() {
            return Ok(Vec::new());
        }
        let mounts = parse_mountinfo(&read_mountinfo()?)?;
        let loops = list_loop_devices();
        Ok(recipes
            .into_iter()
            .map(|recipe| {
                let mounted = mounts
                    .iter()
                    .any(|mount| Path::new(&mount.mount_point) == recipe.mount_point);
                let loop_attached = loop_attached(&recipe, &loops);
                ScratchStatus {
                    recipe,
                    mounted,
                    loop_attached,
                }
            })
            .collect())
    }

    /// Names of the directories under the state dir that look like scratch filesystems.
    fn dir_names(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.state_dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| validate_name(name).is_ok())
            .collect();
        names.sort();
        names
    }

    /// Every readable recipe that names its own directory (its name, and its mount point
    /// `<state_dir>/<name>/mnt`), by name: an edited recipe naming a foreign mount point is
    /// not a live scratch filesystem.
    fn recipes(&self) -> Vec<ScratchRecipe> {
        let state = std::fs::canonicalize(&self.state_dir).unwrap_or(self.state_dir.clone());
        self.dir_names()
            .iter()
            .filter_map(|name| read_recipe(&self.recipe_dir(name)).ok())
            .filter(|recipe| recipe_is_own(recipe, &state))
            .collect()
    }

    /// The recipe named `name`.
    pub fn get(&self, name: &str) -> Result<ScratchRecipe, ScratchError> {
        validate_name(name)?;
        let dir = self.recipe_dir(name);
        if !dir.join(RECIPE_FILE).exists() {
            return Err(ScratchError::NotFound {
                name: name.to_string(),
            });
        }
        read_recipe(&dir)
    }

    /// The recipe whose mount point contains `path` (resolved through symlinks; the path
    /// itself need not exist yet). Needs no root.
    pub fn recipe_for_path(&self, path: &Path) -> Option<ScratchRecipe> {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(path)
        };
        let existing = existing_ancestor(&absolute)?;
        let rest = absolute
            .ancestors()
            .find(|a| a.exists())
            .and_then(|a| absolute.strip_prefix(a).ok())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let canonical = existing.join(rest);
        self.recipes()
            .into_iter()
            .filter(|recipe| canonical.starts_with(&recipe.mount_point))
            .max_by_key(|recipe| recipe.mount_point.components().count())
    }

    /// Removes `name`: unmounts whatever is mounted under its directory or from its loop,
    /// detaches its loop, deletes its image, mount point and recipe. Works on half-made
    /// ones (no recipe) too. Refuses (touching nothing) an entry that is a symlink or not a
    /// real directory / regular file. Holds the state directory lock.
    pub fn destroy(&self, name: &str) -> Result<(), ScratchError> {
        require_root(euid())?;
        validate_name(name)?;
        let (roots, _lock) = self.lock()?;
        self.destroy_locked(&roots, name).map(|_| ())
    }

    /// [`ScratchManager::destroy`] with the lock held; returns notes (a recipe image ignored).
    fn destroy_locked(&self, roots: &Roots, name: &str) -> Result<Vec<String>, ScratchError> {
        let recipe_dir = roots.state.join(name);
        let ram_image = roots.ram.join(format!("{name}.img"));
        let disk_image = recipe_dir.join(DISK_IMAGE);
        let has_dir = require_real(&recipe_dir, true)?;
        let has_ram_image = require_real(&ram_image, false)?;
        if !has_dir && !has_ram_image {
            return Err(ScratchError::NotFound {
                name: name.to_string(),
            });
        }
        if has_dir {
            require_real(&disk_image, false)?;
            require_real(&recipe_dir.join(RECIPE_FILE), false)?;
            require_real(&recipe_dir.join(MOUNT_DIR), true)?;
            require_real(&recipe_dir.join(MARKER_FILE), false)?;
            if !is_marked(&recipe_dir, name, &roots.state) {
                return Err(not_ours(&recipe_dir));
            }
        }
        let umount = require_tool("umount", MOUNT_PACKAGE)?;
        let losetup = require_tool("losetup", MOUNT_PACKAGE)?;
        let mut notes = Vec::new();
        // Only this name's own images count; a recipe pointing elsewhere was edited.
        if let Some(image) = read_recipe(&recipe_dir).ok().and_then(|r| r.image)
            && image != disk_image
            && image != ram_image
        {
            notes.push(format!(
                "ignored {name}'s recipe image {}: not {name}'s image in the state or RAM directory",
                image.display()
            ));
        }
        let mounts = parse_mountinfo(&read_mountinfo()?)?;
        let loops = list_loop_devices();
        let mount_dir = recipe_dir.join(MOUNT_DIR);
        let plan = select_owned(
            &mounts,
            &loops,
            &Scope {
                owned_roots: vec![roots.state.as_path(), roots.ram.as_path()],
                mount_roots: vec![mount_dir.as_path()],
                image_roots: vec![disk_image.as_path(), ram_image.as_path()],
                keep_mount_points: Vec::new(),
                keep_images: Vec::new(),
            },
        );
        for mount_point in &plan.unmount {
            unmount(&umount, mount_point)?;
        }
        for lo in &plan.detach {
            detach(&losetup, &lo.node(), &lo.backing_file)?;
        }
        for image in [&disk_image, &ram_image] {
            match std::fs::remove_file(image) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(ScratchError::io("remove", image, e)),
            }
        }
        if has_dir {
            remove_recipe_dir(&recipe_dir)?;
        }
        Ok(notes)
    }

    /// Destroys every scratch filesystem (with or without a recipe), then
    /// [`ScratchManager::cleanup_stale`], all under one hold of the state directory lock.
    /// Returns what was done; on failures (a refused symlink, say) it still tries the rest
    /// and then returns the first error.
    pub fn destroy_all(&self) -> Result<Vec<String>, ScratchError> {
        require_root(euid())?;
        let (roots, _lock) = self.lock()?;
        let entries = entries(&roots, &list_loop_devices());
        // Symlinks and special files go through destroy, which refuses them by name.
        let mut names: Vec<String> = entries
            .owned
            .iter()
            .chain(&entries.strange)
            .cloned()
            .collect();
        names.sort();
        let mut done: Vec<String> = entries
            .foreign
            .iter()
            .map(|name| {
                format!(
                    "left alone {}: fsynclab did not make it (no {MARKER_FILE} marker or recipe naming it)",
                    roots.state.join(name).display()
                )
            })
            .collect();
        let mut first_error = None;
        for name in names {
            match self.destroy_locked(&roots, &name) {
                Ok(notes) => {
                    done.push(format!("destroyed {name}"));
                    done.extend(notes);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match self.cleanup_stale_locked(&roots) {
            Ok(cleaned) => done.extend(cleaned),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        // The private RAM directory goes too once nothing is left in it (remove_dir only
        // removes an empty directory), so /dev/shm keeps no litter.
        if first_error.is_none() && std::fs::remove_dir(&roots.ram).is_ok() {
            done.push(format!(
                "removed the empty RAM directory {}",
                roots.ram.display()
            ));
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    /// Unmounts mounts under the state dir and detaches loops backed by files under the state
    /// or RAM dir (after unmounting what is mounted from them) that belong to no recipe.
    /// Touches nothing else: foreign mounts and loops are left alone. Returns what was done;
    /// on failures it still tries the rest and then returns the first error.
    ///
    /// Holds the state directory lock, so a `create` running concurrently (which holds it
    /// until its recipe is written) is waited for, never torn down.
    pub fn cleanup_stale(&self) -> Result<Vec<String>, ScratchError> {
        require_root(euid())?;
        let (roots, _lock) = self.lock()?;
        self.cleanup_stale_locked(&roots)
    }

    fn cleanup_stale_locked(&self, roots: &Roots) -> Result<Vec<String>, ScratchError> {
        let umount = require_tool("umount", MOUNT_PACKAGE)?;
        let losetup = require_tool("losetup", MOUNT_PACKAGE)?;
        let live = self.recipes();
        let loops: Vec<LoopDevice> = list_loop_devices();
        let owned = entries(roots, &loops).owned;
        let plan = find_stale(
            &read_mountinfo()?,
            &loops,
            &roots.state,
            &roots.ram,
            &live,
            &owned,
        )?;
        let mut done = Vec::new();
        let mut first_error = None;
        for mount_point in &plan.unmount {
            match unmount(&umount, mount_point) {
                Ok(()) => done.push(format!("unmounted {mount_point}")),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        for lo in &plan.detach {
            match detach(&losetup, &lo.node(), &lo.backing_file) {
                Ok(()) => done.push(format!(
                    "detached {} ({})",
                    lo.node(),
                    lo.backing_file.display()
                )),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }
}

fn loop_attached(recipe: &ScratchRecipe, loops: &[LoopDevice]) -> bool {
    let (Some(node), Some(image)) = (&recipe.loop_device, &recipe.image) else {
        return false;
    };
    loops
        .iter()
        .any(|lo| lo.node() == *node && lo.backing_file == *image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_state_dir_is_next_to_the_database() {
        if let Ok(dir) = ScratchManager::default_state_dir() {
            assert!(dir.ends_with("fsynclab/scratch"), "{}", dir.display());
        }
    }

    #[test]
    fn shallow_roots_are_refused() {
        for (state, ram) in [
            ("/", "/dev/shm/x"),
            ("/tmp", "/dev/shm/x"),
            ("/a/b", "/"),
            ("a/b", "/c/d"),
        ] {
            let manager = ScratchManager::with_roots(state.into(), ram.into());
            assert!(
                matches!(
                    manager.check_root_shapes(),
                    Err(ScratchError::BadStateDir { .. })
                ),
                "{state} {ram}"
            );
        }
        let manager = ScratchManager::new("/home/u/.local/share/fsynclab/scratch".into());
        assert!(manager.check_root_shapes().is_ok());
        assert!(manager.ram_dir().starts_with("/dev/shm"));
    }
}
