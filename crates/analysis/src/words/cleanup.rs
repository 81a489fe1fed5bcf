//! The words of why `fsynclab clean` left a run directory (issue 32): the engine and the
//! lab hand over a [`CleanRefusal`] as data and the front ends word it here.

use crate::cleanup::CleanRefusal;
use crate::metrics::os_error_text;
use crate::spec::{SettingNames, Worded};
use crate::store::ForeignDatabase;

/// The refusal in words, actions named by `names`.
pub fn clean_refusal_text(refusal: &CleanRefusal, names: &dyn SettingNames) -> String {
    match refusal {
        CleanRefusal::ForeignDatabase { owner_uid, uid } => ForeignDatabase {
            owner_uid: *owner_uid,
            uid: *uid,
        }
        .worded(names),
        CleanRefusal::TargetChanged { target, run_id } => format!(
            "{} is no longer the directory {} used (replaced or moved); not removed",
            target.display(),
            run_id.map_or_else(|| "the run".to_string(), |id| format!("run {id}"))
        ),
        CleanRefusal::NotRunDirName { name } => format!(
            "'{name}' is not the name of an fsynclab run directory (fsynclab-<run id> or \
             fsynclab-<run id>-<n>); nothing was removed"
        ),
        CleanRefusal::TargetUnopenable { target, errno } => format!(
            "cannot open target {}: {}",
            target.display(),
            os_error_text(*errno)
        ),
        CleanRefusal::TargetThroughForeignLink { link, owner } => format!(
            "cannot open the target: {} is a symbolic link made by uid {owner}; not followed",
            link.display()
        ),
        CleanRefusal::TargetUnstattable { errno } => {
            format!("cannot stat the target: {}", os_error_text(*errno))
        }
        CleanRefusal::NotADirectory => {
            "not a directory (a symlink or file put in its place?); not removed".into()
        }
        CleanRefusal::Unopenable { errno } => {
            format!("cannot open it: {}; not removed", os_error_text(*errno))
        }
        CleanRefusal::Unstattable { errno } => {
            format!("cannot stat it: {}", os_error_text(*errno))
        }
        CleanRefusal::NotTheRunsDirectory => {
            "this is not the directory the run made (another directory was renamed to its \
             name, by whoever can rename entries of the target?); not removed: check what it is"
                .into()
        }
        CleanRefusal::UnrecordedMode { mode } => format!(
            "its identity was not recorded (the run was killed as it made it) and its mode \
             {mode:04o} is not the 0700 fsynclab gives it, so it may not be the run's; not \
             removed: check what it is"
        ),
        CleanRefusal::ForeignOwner { uid, euid } => format!(
            "owned by uid {uid}, not by this user (uid {euid}): fsynclab did not create it; not removed"
        ),
        CleanRefusal::ContentsLeft { left } => format!(
            "could not remove everything inside ({})",
            left.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
        CleanRefusal::NameLeft { left } => left.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Neutral;

    #[test]
    fn refusals_say_why_nothing_was_removed() {
        let owner = CleanRefusal::ForeignOwner {
            uid: 65534,
            euid: 0,
        };
        assert!(clean_refusal_text(&owner, &Neutral).starts_with("owned by uid 65534"));
        let mode = CleanRefusal::UnrecordedMode { mode: 0o755 };
        let text = clean_refusal_text(&mode, &Neutral);
        assert!(
            text.contains("not recorded") && text.contains("0755"),
            "{text}"
        );
        let foreign = CleanRefusal::ForeignDatabase {
            owner_uid: 1000,
            uid: 0,
        };
        assert!(clean_refusal_text(&foreign, &Neutral).contains("owned by uid 1000"));
    }
}
