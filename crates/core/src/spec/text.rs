//! Free text a user gives a run (labels, tags): checked at input, and escaped on output.
//!
//! A label reaches a terminal in `list`, `show`, `compare` and reports; an ESC or OSC
//! sequence inside one would be executed by the terminal, and a bidi override would make
//! the text read differently from what it is. [`check_text`] refuses such characters
//! where text enters; [`escape_control`] makes any stored text (an old database may
//! already hold some) harmless where it leaves.

use std::borrow::Cow;

/// Longest label or tag accepted, in bytes.
pub const MAX_TEXT_BYTES: usize = 256;

/// A label or tag that cannot be stored: which field, what is wrong, how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}; {fix}")]
pub struct TextError {
    /// The option or form field (`--label`, `--tag`, `Label`).
    pub field: String,
    /// What is wrong, with the offending character.
    pub problem: String,
    /// What to do instead.
    pub fix: String,
}

/// Whether `c` must never reach a terminal raw: C0 controls, DEL, C1 controls (CSI, OSC
/// and ESC-like in 8-bit form), the bidi marks, embeddings, overrides and isolates, and
/// the Unicode line and paragraph separators, and the invisible format characters (soft
/// hyphen, zero-width space and joiners, word joiner, byte order mark) that would make two
/// labels that print alike differ (`before` and `be\u{200B}fore`).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FEFF}'
        )
}

/// Checks a label or tag given in `field`: at most [`MAX_TEXT_BYTES`] bytes, no control
/// character and no bidi override (see [`is_unsafe_char`]).
pub fn check_text(field: &str, value: &str) -> Result<(), TextError> {
    if let Some(c) = value.chars().find(|c| is_unsafe_char(*c)) {
        return Err(TextError {
            field: field.to_string(),
            problem: format!(
                "'{}' contains the control, bidi or invisible character U+{:04X}",
                value
                    .chars()
                    .map(|c| if is_unsafe_char(c) {
                        format!("\\u{:04x}", u32::from(c))
                    } else {
                        c.to_string()
                    })
                    .collect::<String>(),
                u32::from(c)
            ),
            fix: "use printable text only (letters, digits, punctuation, spaces)".into(),
        });
    }
    if value.len() > MAX_TEXT_BYTES {
        return Err(TextError {
            field: field.to_string(),
            problem: format!("{} bytes long", value.len()),
            fix: format!("use at most {MAX_TEXT_BYTES} bytes"),
        });
    }
    Ok(())
}

/// Checks a tag given in `field`: as [`check_text`], and not empty (or only white space).
pub fn check_tag(field: &str, value: &str) -> Result<(), TextError> {
    if value.trim().is_empty() {
        return Err(TextError {
            field: field.to_string(),
            problem: format!("the tag '{value}' is empty"),
            fix: "use a word such as `baseline` or `nobarrier`".into(),
        });
    }
    check_text(field, value)
}

/// `text` with every unsafe character (see [`is_unsafe_char`]) except newline and tab
/// written as `\uXXXX`, for printing to a terminal. The form is also a valid JSON escape,
/// so JSON output passed through it still parses to the same strings.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c != '\n' && c != '\t' && is_unsafe_char(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path as error text: its newlines and tabs written `\n` and `\t`, so a path given on
/// the command line cannot start a line of its own in a message (the printer escapes every
/// other control character, see [`escape_control`]).
pub fn shown_path(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    if !text.contains(['\n', '\t']) {
        return text;
    }
    text.replace('\n', "\\n").replace('\t', "\\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_passes_and_is_not_copied() {
        assert!(check_text("--label", "before nossd-1 (ü, 日本)").is_ok());
        assert!(matches!(escape_control("a\tb\nc"), Cow::Borrowed(_)));
        let odd = std::path::Path::new("/dev/lo\nop0\tx");
        assert_eq!(shown_path(odd), "/dev/lo\\nop0\\tx");
        assert_eq!(shown_path(std::path::Path::new("/mnt/ü")), "/mnt/ü");
    }

    #[test]
    fn control_and_bidi_characters_are_refused_naming_the_field() {
        for bad in [
            "a\u{1b}]0;pwned\u{7}",
            "x\u{7f}",
            "\u{9b}31m",
            "tab\there",
            "line\nbreak",
            "abc\u{202e}fed",
            "\u{2066}iso",
            "be\u{200b}fore",
            "\u{feff}after",
            "a\u{ad}b",
            "x\u{2060}y",
        ] {
            let e = check_text("--tag", bad).unwrap_err();
            assert_eq!(e.field, "--tag");
            let text = e.to_string();
            assert!(text.starts_with("--tag: "), "{text}");
            assert!(text.contains("U+"), "{text}");
            // The message itself carries nothing raw.
            assert!(!text.chars().any(is_unsafe_char), "{text:?}");
        }
    }

    #[test]
    fn empty_tags_are_refused() {
        let e = check_tag("--tag", "  ").unwrap_err().to_string();
        assert!(e.starts_with("--tag: the tag '  ' is empty"), "{e}");
        assert!(check_tag("--tag", "ssd").is_ok());
        assert!(check_tag("--tag", "a\u{1b}").is_err());
    }

    #[test]
    fn overlong_text_is_refused_with_the_bound() {
        let e = check_text("--label", &"x".repeat(MAX_TEXT_BYTES + 1)).unwrap_err();
        assert!(e.to_string().contains("at most 256 bytes"), "{e}");
        assert!(check_text("--label", &"x".repeat(MAX_TEXT_BYTES)).is_ok());
    }

    #[test]
    fn escaping_keeps_lines_and_is_valid_json() {
        let raw = "a\u{1b}[2Jb\u{9b}c\u{202e}d\r\ne";
        let escaped = escape_control(raw);
        assert_eq!(escaped, "a\\u001b[2Jb\\u009bc\\u202ed\\u000d\ne");
        // serde_json leaves C1 and bidi raw; escaping its output keeps it the same JSON.
        let json = serde_json::to_string(&"x\u{9b}y\u{202e}").unwrap();
        let back: String = serde_json::from_str(&escape_control(&json)).unwrap();
        assert_eq!(back, "x\u{9b}y\u{202e}");
    }
}
