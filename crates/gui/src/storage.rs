//! Where the window keeps its UI state. eframe writes `app.ron` in the user's data
//! directory with a plain `File::create`, which follows a symlink: run as root with
//! another user's `HOME` or `XDG_DATA_HOME` (`sudo -E`, `su` without `-`), that user could
//! point `app.ron` at any file and root would overwrite it. As root the state is kept only
//! where no one else can change the path; otherwise it is not saved at all.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The file the window's state goes to for effective user `euid` when eframe would use
/// `data_dir` (`$XDG_DATA_HOME/fsynclab` or `~/.local/share/fsynclab`): `Ok(None)` for
/// eframe's own choice (a non-root user, whose files are theirs anyway), `Ok(Some(path))`
/// for that same file when root alone can change every directory above it, and
/// `Err(why)` when another user could, so nothing may be saved there.
pub fn state_file(euid: u32, data_dir: Option<&Path>) -> Result<Option<PathBuf>, String> {
    if euid != 0 {
        return Ok(None);
    }
    let Some(dir) = data_dir else {
        return Err("no data directory (HOME and XDG_DATA_HOME unset)".into());
    };
    let file = dir.join("app.ron");
    if let Ok(meta) = std::fs::symlink_metadata(&file)
        && (!meta.file_type().is_file() || meta.uid() != 0)
    {
        return Err(format!(
            "{} is not a regular file owned by root",
            file.display()
        ));
    }
    // The deepest part that exists, with every link resolved (parts not made yet are
    // created by root); then every directory up to `/` must be root's alone.
    let existing = dir
        .ancestors()
        .find(|a| std::fs::symlink_metadata(a).is_ok())
        .unwrap_or(Path::new("/"));
    let canonical = std::fs::canonicalize(existing)
        .map_err(|e| format!("cannot resolve {}: {e}", existing.display()))?;
    for ancestor in canonical.ancestors() {
        let meta = std::fs::symlink_metadata(ancestor)
            .map_err(|e| format!("cannot inspect {}: {e}", ancestor.display()))?;
        let writable_by_others = meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0;
        if meta.uid() != 0 || writable_by_others {
            return Err(format!(
                "{} is owned by uid {} or writable by others: whoever controls it could make \
                 the window's state file point at a system file",
                ancestor.display(),
                meta.uid()
            ));
        }
    }
    Ok(Some(file))
}

/// The data directory eframe would use for the app `fsynclab` (its `storage_dir`).
pub fn eframe_data_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::home_dir().map(|p| p.join(".local").join("share")))
        .map(|p| p.join("fsynclab"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_root_user_keeps_eframes_choice() {
        assert_eq!(
            state_file(1000, Some(Path::new("/home/u/.local/share/fsynclab"))),
            Ok(None)
        );
    }

    #[test]
    fn root_saves_only_where_no_one_else_can_change_the_path() {
        if !fsynclab::test_support::root_or_skip("root_saves_only_where...", "chown") {
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let share = root.path().join("share");
        let dir = share.join("fsynclab");
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(state_file(0, Some(&dir)), Ok(Some(dir.join("app.ron"))));
        // Another user's data directory (sudo -E): their symlink would be followed.
        std::os::unix::fs::chown(&share, Some(65534), Some(65534)).unwrap();
        let e = state_file(0, Some(&dir)).unwrap_err();
        assert!(e.contains("uid 65534"), "{e}");
        std::os::unix::fs::chown(&share, Some(0), Some(0)).unwrap();
        // A planted link in a root-owned directory is refused too.
        std::os::unix::fs::symlink("/etc/passwd", dir.join("app.ron")).unwrap();
        let e = state_file(0, Some(&dir)).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::remove_file(dir.join("app.ron")).unwrap();
        // Group-writable, not sticky: refused; missing parts are fine.
        std::fs::set_permissions(&share, std::os::unix::fs::PermissionsExt::from_mode(0o775))
            .unwrap();
        assert!(state_file(0, Some(&dir)).is_err());
        std::fs::set_permissions(&share, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert!(state_file(0, Some(&dir.join("not-yet"))).is_ok());
    }
}
