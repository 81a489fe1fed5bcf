//! The mkfs and mount option allow-list (what a user may add to the `mkfs.*` and `mount`
//! command lines fsynclab runs as root) and the splitting of an option string into words.
//! Pure: no file is opened, no program runs. Below the presets that suggest option sets
//! (`spec`) and the scratch manager that runs the tools (`scratch`).

mod check;
mod table;

pub use check::{OUTSIDE_REASON, check_mkfs_options, check_mount_options, with_eager_init};

/// Why an option string is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// The options string has an unterminated quote or a dangling backslash.
    #[error("cannot split {what} options {given:?}: {reason}")]
    BadOptions {
        /// `mkfs` or `mount`.
        what: String,
        /// The options given.
        given: String,
        /// What is wrong.
        reason: String,
    },
    /// An mkfs or mount option is not on the allow-list (see [`check_mkfs_options`]).
    #[error("{what} option `{token}` is not allowed for {fs}: {reason}")]
    Refused {
        /// `mkfs` or `mount`.
        what: String,
        /// The filesystem the options were for.
        fs: String,
        /// The refused word, with its value (`-l logdev=/dev/loop3`, `device=/dev/sdb`).
        token: String,
        /// Why, and what to do instead.
        reason: String,
    },
}

/// Splits an options string into arguments like a shell would split words, without running
/// one: whitespace separates, `'...'` and `"..."` group (no expansion), `\` escapes the next
/// character outside single quotes.
pub fn split_options(what: &str, text: &str) -> Result<Vec<String>, OptionError> {
    let bad = |reason: &str| OptionError::BadOptions {
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
