//! What the window's path dialogs (the Compare tab's report export, the History tab's
//! bundle export and import) share: `~/` in a typed path, and the outcome of "Browse…".

use std::path::PathBuf;

use crate::task::Task;

/// Said when the file dialog returns nothing (cancelled, or no dialog backend at all).
pub(super) const NO_DIALOG: &str = "cancelled or no file dialog available — type a path";

/// `~/x` → the home directory's `x`.
pub(super) fn expand_home(text: &str) -> PathBuf {
    match (
        text.strip_prefix("~/"),
        directories::UserDirs::new().map(|d| d.home_dir().to_path_buf()),
    ) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(text),
    }
}

/// Takes the outcome of a finished file dialog in `browsing`: a chosen path replaces
/// `path` (and clears `message`); nothing chosen (or a dialog thread that died) says
/// [`NO_DIALOG`]. Does nothing while the dialog is open.
pub(super) fn take_browsed(
    browsing: &mut Option<Task<Option<PathBuf>>>,
    path: &mut String,
    message: &mut Option<(String, bool)>,
) {
    // A dialog thread that died counts as no dialog.
    match Task::take_done(browsing).map(|done| done.unwrap_or(None)) {
        Some(Some(chosen)) => {
            *path = chosen.display().to_string();
            *message = None;
        }
        Some(None) => *message = Some((NO_DIALOG.into(), false)),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leading_tilde_slash_is_the_home_directory() {
        assert_eq!(expand_home("/x/~/r.png"), PathBuf::from("/x/~/r.png"));
        assert_eq!(expand_home("~user/r.png"), PathBuf::from("~user/r.png"));
        if let Some(home) = directories::UserDirs::new().map(|d| d.home_dir().to_path_buf()) {
            assert_eq!(expand_home("~/r.png"), home.join("r.png"));
        }
    }
}
