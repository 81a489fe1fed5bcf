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
    Ok(())
}

/// Splits an options string into arguments like a shell would split words, without running
/// one: whitespace separates, `'...'` and `"..."` group (no expansion), `\` escapes the next
/// character outside single quotes.
pub fn split_options(what: &str, text: &str) -> Result<Vec<String>, ScratchError> {
    let bad = |reason: &str| ScratchError::BadOptions {
        what: what.to_string(),
        given: text.to_string(),
        reason: reason.to_string(),
    };
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => current.push(inner),
                        None => return Err(bad("unterminated single quote")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\')) => current.push(escaped),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => return Err(bad("unterminated double quote")),
                        },
                        Some(inner) => current.push(inner),
                        None => return Err(bad("unterminated double quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(escaped) => current.push(escaped),
                    None => return Err(bad("dangling backslash at the end")),
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
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
        for bad in ["", "Ext4", "a/b", "..", "a b", "é", &"x".repeat(41)] {
            assert!(
                matches!(validate_name(bad), Err(ScratchError::BadName { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn option_splitting() {
        let split = |t: &str| split_options("mkfs", t).unwrap();
        assert!(split("").is_empty());
        assert!(split("   ").is_empty());
        assert_eq!(split("-b 4096  -m 0"), ["-b", "4096", "-m", "0"]);
        assert_eq!(split("-L 'my label' -E x"), ["-L", "my label", "-E", "x"]);
        assert_eq!(split(r#"-L "a \"b\"" c\ d"#), ["-L", r#"a "b""#, "c d"]);
        assert_eq!(split("''"), [""]);
        assert_eq!(split("$HOME;rm"), ["$HOME;rm"]);
        assert!(split_options("mkfs", "-L 'x").is_err());
        assert!(split_options("mkfs", "-L \"x").is_err());
        assert!(split_options("mkfs", "x\\").is_err());
    }
}
