//! Pure checks on user input: root, scratch filesystem names, option strings.

use super::{MAX_NAME_LEN, ScratchError};

/// Refuses unless `euid` is root (0).
pub fn require_root(euid: u32) -> Result<(), ScratchError> {
    if euid == 0 {
        Ok(())
    } else {
        Err(ScratchError::NotRoot)
    }
}

/// Checks a scratch filesystem name: 1 to 40 of `a-z 0-9 _ -`.
pub fn validate_name(name: &str) -> Result<(), ScratchError> {
    let bad = |reason: &str| {
        Err(ScratchError::BadName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("it is longer than 40 characters");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '-'))
    {
        return bad(&format!("{c:?} is not allowed"));
    }
    // The crash tests' directories share the state directory (crashdev).
    if name.starts_with("crash-") {
        return bad("names starting with crash- are the crash tests'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_required() {
        assert!(require_root(0).is_ok());
        let err = require_root(65534).unwrap_err();
        assert!(matches!(err, ScratchError::NotRoot));
        assert!(err.to_string().contains("needs root"));
        assert!(err.to_string().contains("target = DIR"));
    }

    #[test]
    fn names() {
        for good in ["ext4-1", "a", "my_fs-2", &"x".repeat(40)] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        let bad_names = [
            "",
            "Ext4",
            "a/b",
            "..",
            "a b",
            "é",
            "crash-fs-x",
            "crash-logs",
        ];
        for bad in bad_names.iter().copied().chain([&*"x".repeat(41)]) {
            assert!(
                matches!(validate_name(bad), Err(ScratchError::BadName { .. })),
                "{bad}"
            );
        }
    }
}
