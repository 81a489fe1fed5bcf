//! After every command under `sudo`: the database files go back to the invoking user and
//! the database's path is said, so nobody wonders where the runs went.

use std::path::PathBuf;

use fsynclab::probe::sudo_user;
use fsynclab::store::{DB_FILE_NAME, Store};

/// Whether `command` opens the database (the window, `run`, `list`...): `presets`,
/// `completions` and `man` do not.
pub fn uses_database(command: Option<&super::Command>) -> bool {
    !matches!(
        command,
        Some(
            super::Command::Presets(_)
                | super::Command::Completions(_)
                | super::Command::Man(_)
                | super::Command::CrashDevice(_)
        )
    )
}

/// Under sudo: hands the default database's files to the invoking user and prints the
/// database path on stderr (or why root's own database was used). Nothing otherwise.
pub fn after_command(db: &Option<PathBuf>) {
    let user = match sudo_user() {
        Ok(Some(user)) => user,
        Ok(None) => return,
        Err(e) => {
            let path = db.clone().or_else(|| Store::default_path().ok());
            errln!(
                "note: under sudo, but {e}: root's data directory was used; database: {}",
                path.map(|p| p.display().to_string())
                    .unwrap_or_else(|| "-".into())
            );
            return;
        }
    };
    let path = match db {
        Some(p) => p.clone(),
        None => match Store::default_path() {
            Ok(path) => {
                user.give_database(DB_FILE_NAME);
                path
            }
            Err(_) => return,
        },
    };
    errln!(
        "database: {} (sudo: {}'s)",
        fsynclab::spec::shown_path(&path),
        user.name
    );
}
