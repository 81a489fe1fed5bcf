//! Where a scratch filesystem's files are in its recipe directory, and the two readers
//! every part of the manager shares (the mount table, a recipe), below them all.

use std::path::Path;

use super::{ScratchError, ScratchRecipe};
use crate::probe::{MOUNTINFO_PATH, ProbeError};

/// The recipe of a scratch filesystem, in its directory.
pub(super) const RECIPE_FILE: &str = "recipe.json";
/// Its mount point, in its directory.
pub(super) const MOUNT_DIR: &str = "mnt";
/// Its disk image (a disk-backed filesystem), in its directory.
pub(super) const DISK_IMAGE: &str = "image.img";

/// This process's effective user id.
pub(super) fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

pub(super) fn read_mountinfo() -> Result<String, ScratchError> {
    std::fs::read_to_string(MOUNTINFO_PATH).map_err(|source| {
        ScratchError::Probe(ProbeError::Read {
            path: MOUNTINFO_PATH.into(),
            source,
        })
    })
}

/// Reads `recipe.json`, never through a symlink.
pub(super) fn read_recipe(recipe_dir: &Path) -> Result<ScratchRecipe, ScratchError> {
    let path = recipe_dir.join(RECIPE_FILE);
    let text = crate::spec::read_small_file(&path, crate::spec::MAX_INPUT_FILE_BYTES, true)
        .map_err(|e| match e {
            crate::spec::InputFileError::Io(e) => ScratchError::io("read", &path, e),
            other => ScratchError::BadRecipe {
                path: path.clone(),
                source: Box::new(other),
            },
        })?;
    serde_json::from_str(&text).map_err(|e| ScratchError::BadRecipe {
        path,
        source: Box::new(e),
    })
}
