//! The library never tells a user to pass a command-line flag: no string literal outside
//! `src/cli` and `src/gui` contains `--x` (doc comments and tests may). Messages refer to
//! settings through `spec::Setting`, and each front end words them (`--bs`, "Block size").
//! The only exception is words handed to another program (mkfs, losetup) in `crates/sys/src/scratch`
//! and `crates/sys/src/crashdev`,
//! where a literal consisting of nothing but one option (`"--find"`, `"--byte-count"`) is
//! an argument, not advice.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Reads a string literal's text from `start` (just after its opening quote) to its
/// closing quote: `"` for a normal string (backslash escapes kept as written), `"#..#`
/// with `raw_hashes` hashes for a raw one. Returns the text with the line it began on,
/// and the index after the literal; `line` counts the newlines inside.
fn read_string(
    chars: &[char],
    start: usize,
    raw_hashes: Option<usize>,
    line: &mut usize,
) -> ((usize, String), usize) {
    let start_line = *line;
    let mut text = String::new();
    let mut j = start;
    while j < chars.len() {
        match raw_hashes {
            Some(h) if chars[j] == '"' && (1..=h).all(|k| chars.get(j + k) == Some(&'#')) => {
                return ((start_line, text), j + 1 + h);
            }
            None if chars[j] == '"' => return ((start_line, text), j + 1),
            None if chars[j] == '\\' => {
                text.push('\\');
                j += 1;
            }
            _ => {}
        }
        if let Some(&c) = chars.get(j) {
            if c == '\n' {
                *line += 1;
            }
            text.push(c);
        }
        j += 1;
    }
    ((start_line, text), j)
}

/// The string literals of `source` (normal, raw and byte strings) outside comments, with
/// their 1-based line numbers.
fn string_literals(source: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = source.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1b}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == '"' {
            let (text, end) = read_string(&chars, i + 1, None, &mut line);
            found.push(text);
            i = end;
        } else if ident(c) {
            // A whole identifier; `r` or `br` right before `"` or `#"` opens a raw string.
            let start = i;
            while i < chars.len() && ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut j = i;
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            if (word == "r" || word == "br") && chars.get(j) == Some(&'"') {
                let (text, end) = read_string(&chars, j + 1, Some(j - i), &mut line);
                found.push(text);
                i = end;
            }
        } else {
            i += 1;
        }
    }
    found
}

/// Whether `text` holds a long option: `--` then a lowercase letter.
fn names_a_flag(text: &str) -> bool {
    text.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'-' && w[1] == b'-' && w[2].is_ascii_lowercase())
}

/// A literal that is nothing but one option word (`--find`, `--direct-io=on`, `-O`).
fn is_single_option(text: &str) -> bool {
    let body = text.trim_start_matches('-');
    text.starts_with('-')
        && !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '=' | '_' | ',' | '+'))
}

/// The part of a library file the rule covers: everything before its test module.
pub(crate) fn library_part(source: &str) -> &str {
    match source.find("\n#[cfg(test)]") {
        Some(end) => &source[..end],
        None => source,
    }
}

pub(crate) fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name.starts_with("tests_")
        || path.components().any(|c| c.as_os_str() == "tests")
}

#[test]
fn the_scanner_finds_literals_and_skips_comments() {
    let source = r####"
/// Pass `--bs` (a doc comment: allowed).
// --threads in a comment
/* --block --comment */
fn f<'a>(x: &'a str) -> char {
    let _ = "use --bs 4k";
    let _ = r#"raw "--keep" here"#;
    let _ = b"bytes --db";
    let _ = "escaped \" --target";
    '"'
}
fn g() { let _ = "not a flag: -- alone, -x"; }
"####;
    let literals = string_literals(source);
    let flagged: Vec<&str> = literals
        .iter()
        .filter(|(_, t)| names_a_flag(t))
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(
        flagged,
        [
            "use --bs 4k",
            "raw \"--keep\" here",
            "bytes --db",
            "escaped \\\" --target"
        ]
    );
    assert_eq!(
        literals.iter().find(|(_, t)| t == "use --bs 4k").unwrap().0,
        6
    );
    assert!(is_single_option("--direct-io=on") && is_single_option("--find"));
    assert!(!is_single_option("lower --size or use --backing"));
}

#[test]
fn no_library_message_names_a_command_line_flag() {
    let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for krate in super::file_cycles::LIBRARY_CRATES {
        let root = repo.join(krate).join("src");
        let mut found = Vec::new();
        rust_files(&root, &mut found);
        files.extend(found.into_iter().map(|path| (root.clone(), path)));
    }
    files.sort();
    let mut scanned = 0;
    let mut literals = 0;
    let mut offenders: Vec<String> = Vec::new();
    for (root, path) in &files {
        let relative = path.strip_prefix(root).unwrap();
        let front_end = relative.starts_with("cli") || relative.starts_with("gui");
        if front_end || is_test_file(relative) || relative == Path::new("main.rs") {
            continue;
        }
        scanned += 1;
        let source = std::fs::read_to_string(path).unwrap();
        for (line, text) in string_literals(library_part(&source)) {
            literals += 1;
            // mkfs options (the allow-list in crates/core/src/fsopts, the scratch manager, the crash
            // test's device and checker) and fio's client
            // options in src/fio/client.rs are arguments to those tools, not advice.
            let foreign = relative.starts_with("scratch")
                || relative.starts_with("crashdev")
                || relative.starts_with("fsopts")
                || relative == Path::new("fio/client.rs");
            let foreign_argument = foreign && is_single_option(&text);
            if names_a_flag(&text) && !foreign_argument {
                offenders.push(format!("{}:{line}: {text:?}", path.display()));
            }
        }
    }
    // The scan really read the library (not an empty or moved tree).
    assert!(
        scanned > 80 && literals > 1500,
        "{scanned} files, {literals} literals"
    );
    assert!(
        offenders.is_empty(),
        "library strings that name a CLI flag (refer to a spec::Setting instead):\n{}",
        offenders.join("\n")
    );
}
