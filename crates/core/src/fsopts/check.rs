//! The mkfs and mount option allow-list: what a user (CLI, window, preset file) may add to
//! the `mkfs.*` and `mount` command lines fsynclab runs as root.
//!
//! A user's option string is never handed over as is. It is split into words
//! ([`super::split_options`]) and each word is parsed as the tool would parse it — a flag,
//! then its value — and accepted only when the flag is on the filesystem's allow-list
//! ([`super::table`]) and its value passes the flag's own check (a number with an
//! optional unit suffix, a name from a fixed set, a label of a safe charset...). Anything
//! that could make the tool reach outside the filesystem being made is refused with the
//! word that was refused: a bare word (mkfs takes it for a device), any `/`, `logdev=`,
//! `rtdev=`, `-J device=`, `-d file=`, mount's `device=`, `loop`, `offset=` and every option
//! not on the list. Pure: no file is opened, no program runs.

pub use super::table::OUTSIDE_REASON;
use super::table::Value;
use super::table::{
    GENERIC_MOUNT, MkfsFlag, mkfs_flags, mount_options, refused_mkfs_reason, refused_mount_reason,
};
use super::{OptionError, split_options};
use crate::sysinfo::FsKind;

fn refuse(what: &str, fs: FsKind, token: &str, reason: impl Into<String>) -> OptionError {
    OptionError::Refused {
        what: what.to_string(),
        fs: fs.as_str().to_string(),
        token: token.to_string(),
        reason: reason.into(),
    }
}

/// Checks an mkfs option string for `fs` and returns the words to pass to its mkfs tool
/// (after fsynclab's own `-F`/`-f -q` and before the device, which fsynclab adds itself).
/// Refuses, naming the word, anything not on the allow-list (see docs/SCRATCH.md).
pub fn check_mkfs_options(fs: FsKind, text: &str) -> Result<Vec<String>, OptionError> {
    let words = split_options("mkfs", text)?;
    let flags = mkfs_flags(fs);
    let mut index = 0;
    while let Some(word) = words.get(index) {
        index += 1;
        let bad = |reason: String| refuse("mkfs", fs, word, reason);
        if word.contains('/') {
            return Err(bad(OUTSIDE_REASON.into()));
        }
        if !word.starts_with('-') || word == "-" || word == "--" {
            return Err(bad(format!(
                "a word that is not an option is taken by {} as a device to format; {OUTSIDE_REASON}",
                fs.mkfs_tool()
            )));
        }
        // `--name=value` carries its value inline; short flags take theirs as the next word.
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if word.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        let Some(flag) = flags.iter().find(|f| f.names.contains(&name)) else {
            return Err(bad(unknown_flag_reason(fs, name, flags)));
        };
        if matches!(flag.value, Value::Flag) {
            if inline.is_some() {
                return Err(bad(format!("{name} takes no value; write {name} alone")));
            }
            continue;
        }
        let value = match inline {
            Some(value) => value.to_string(),
            None => {
                let Some(value) = words.get(index) else {
                    return Err(bad(format!(
                        "{name} needs a value; see docs/SCRATCH.md for what it accepts"
                    )));
                };
                index += 1;
                value.clone()
            }
        };
        let shown = match inline {
            Some(_) => word.clone(),
            None => format!("{word} {value}"),
        };
        check_value(name, &value, flag.value, &|key| {
            refused_mkfs_reason(fs, name, key)
        })
        .map_err(|reason| refuse("mkfs", fs, &shown, reason))?;
    }
    Ok(words)
}

/// The checked mkfs words with ext4's inode tables and journal zeroed at mkfs time
/// (`lazy_itable_init=0,lazy_journal_init=0`) unless the user chose those keys. A lazily
/// initialised ext4 on a loop device zeroes its inode tables from a kernel thread
/// (`ext4lazyinit`) for its first minutes of life, writing beside the workload: on a fresh
/// 1 GiB loop ext4 fsync IOPS climbed from ~300 to ~1650 over the first minute
/// (docs/SCRATCH.md, "Fresh ext4"). mke2fs keeps only its last `-E`, so the keys join the
/// user's last `-E` value rather than making a second one. Other filesystems: unchanged.
pub fn with_eager_init(fs: FsKind, mut words: Vec<String>) -> Vec<String> {
    if fs != FsKind::Ext4 {
        return words;
    }
    const KEYS: [&str; 2] = ["lazy_itable_init", "lazy_journal_init"];
    let last_e = words
        .iter()
        .rposition(|w| w == "-E")
        .filter(|i| i + 1 < words.len());
    match last_e {
        Some(i) => {
            let value = &mut words[i + 1];
            for key in KEYS {
                let chosen = value
                    .split(',')
                    .any(|part| part.split('=').next() == Some(key));
                if !chosen {
                    value.push_str(&format!(",{key}=0"));
                }
            }
        }
        None => {
            words.push("-E".into());
            words.push(KEYS.map(|k| format!("{k}=0")).join(","));
        }
    }
    words
}

fn unknown_flag_reason(fs: FsKind, name: &str, flags: &[MkfsFlag]) -> String {
    if let Some(reason) = refused_mkfs_reason(fs, name, None) {
        return reason;
    }
    let allowed: Vec<&str> = flags.iter().map(|f| f.names[0]).collect();
    if name.len() > 2 && !name.starts_with("--") {
        return format!(
            "give each flag and its value as separate words (e.g. `-b 4096`, not `-b4096`); \
             {} options fsynclab accepts: {}",
            fs.mkfs_tool(),
            allowed.join(" ")
        );
    }
    format!(
        "it is not on fsynclab's allow-list of {} options, which holds only options that \
         shape the filesystem being made: {} (see docs/SCRATCH.md)",
        fs.mkfs_tool(),
        allowed.join(" ")
    )
}

/// Checks a mount option string (`mount -o`) for `fs` and returns it trimmed (empty: no
/// `-o`). Each comma-separated option must be on the allow-list for `fs` or the generic
/// one, with a valid value; refuses, naming the option, anything else.
pub fn check_mount_options(fs: FsKind, text: &str) -> Result<String, OptionError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    let table = mount_options(fs);
    for item in trimmed.split(',') {
        let bad = |reason: String| refuse("mount", fs, item, reason);
        if item.is_empty() {
            return Err(bad(
                "an empty option (two commas in a row, or a comma at an end); write options as a,b,c"
                    .into(),
            ));
        }
        if item.contains('/') {
            return Err(bad(OUTSIDE_REASON.into()));
        }
        if let Some(c) = item
            .chars()
            .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'))
        {
            return Err(bad(format!(
                "{c:?} is not allowed in a mount option; write options as a,b,c without spaces or quotes"
            )));
        }
        let (key, value) = match item.split_once('=') {
            Some((key, value)) => (key, Some(value)),
            None => (item, None),
        };
        let rule = table
            .iter()
            .chain(GENERIC_MOUNT)
            .find(|(name, _)| *name == key)
            .map(|(_, rule)| *rule);
        let Some(rule) = rule else {
            return Err(bad(refused_mount_reason(fs, key).unwrap_or_else(|| {
                let mut allowed: Vec<&str> = table.iter().map(|(name, _)| *name).collect();
                allowed.dedup();
                format!(
                    "it is not on fsynclab's allow-list of {fs} mount options: {} and the \
                     generic ones (noatime, relatime, lazytime, sync...; see docs/SCRATCH.md)",
                    allowed.join(", ")
                )
            })));
        };
        check_one(key, value, rule, &|_| None).map_err(bad)?;
    }
    Ok(trimmed.to_string())
}

/// Checks `key[=value]` against `rule` (a flag takes no value; others need one).
fn check_one(
    key: &str,
    value: Option<&str>,
    rule: Value,
    refused: &dyn Fn(Option<&str>) -> Option<String>,
) -> Result<(), String> {
    match (rule, value) {
        (Value::Flag, None) | (Value::Maybe(_), None) => Ok(()),
        (Value::Flag, Some(_)) => Err(format!("{key} takes no value; write {key} alone")),
        (_, None) => Err(format!(
            "{key} needs a value ({key}=...); see docs/SCRATCH.md"
        )),
        (rule, Some(value)) => check_value(key, value, rule, refused),
    }
}

/// Checks one value against its rule; `refused(Some(key))` gives the reason a sub-option
/// key is refused by name (`logdev`, `file`...), if it is.
fn check_value(
    name: &str,
    value: &str,
    rule: Value,
    refused: &dyn Fn(Option<&str>) -> Option<String>,
) -> Result<(), String> {
    if value.contains('/') {
        return Err(OUTSIDE_REASON.into());
    }
    let all = |ok: &dyn Fn(char) -> bool| value.chars().all(ok);
    let digits = |text: &str, max: usize| {
        !text.is_empty() && text.len() <= max && text.chars().all(|c| c.is_ascii_digit())
    };
    let fine = match rule {
        Value::Flag => false,
        Value::Maybe(inner) => return check_value(name, value, *inner, refused),
        Value::Count => digits(value, 12),
        Value::SignedCount => digits(value.strip_prefix('-').unwrap_or(value), 12),
        Value::Size => {
            let number = value.trim_end_matches(|c: char| "kKmMgGtTpPeEsb".contains(c));
            value.len() - number.len() <= 1 && digits(number, 15)
        }
        Value::Percent => match value.split_once('.') {
            Some((whole, fraction)) => digits(whole, 2) && digits(fraction, 3),
            None => digits(value, 2),
        },
        Value::Label => {
            !value.is_empty()
                && value.len() <= 64
                && !value.starts_with('-')
                && all(&|c| c.is_ascii_alphanumeric() || " _.+:@-".contains(c))
        }
        Value::Uuid => {
            !value.is_empty()
                && value.len() <= 36
                && all(&|c| c.is_ascii_alphanumeric() || c == '-')
        }
        Value::OneOf(set) => set.contains(&value),
        Value::Features => value.split(',').all(|feature| {
            let name = feature.strip_prefix('^').unwrap_or(feature);
            !name.is_empty()
                && name.len() <= 40
                && !name.starts_with('-')
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        }),
        Value::Words => value
            .split(':')
            .all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase())),
        Value::Compress => {
            let (algorithm, level) = match value.split_once(':') {
                Some((algorithm, level)) => (algorithm, Some(level)),
                None => (value, None),
            };
            ["zlib", "lzo", "zstd", "no", "none"].contains(&algorithm)
                && level.is_none_or(|level| digits(level.strip_prefix('-').unwrap_or(level), 2))
        }
        Value::Sub(table) => return check_sub_options(name, value, table, refused),
    };
    if fine {
        Ok(())
    } else {
        Err(format!(
            "bad value {value:?} for {name}: {}",
            describe(rule)
        ))
    }
}

/// Checks `key[=value],...` against `table`.
fn check_sub_options(
    name: &str,
    value: &str,
    table: &[(&str, Value)],
    refused: &dyn Fn(Option<&str>) -> Option<String>,
) -> Result<(), String> {
    for item in value.split(',') {
        let (key, sub_value) = match item.split_once('=') {
            Some((key, sub_value)) => (key, Some(sub_value)),
            None => (item, None),
        };
        let Some((_, rule)) = table.iter().find(|(allowed, _)| *allowed == key) else {
            if let Some(reason) = refused(Some(key)) {
                return Err(reason);
            }
            let allowed: Vec<&str> = table.iter().map(|(allowed, _)| *allowed).collect();
            return Err(format!(
                "sub-option {key:?} of {name} is not on fsynclab's allow-list; {name} accepts {}",
                allowed.join(", ")
            ));
        };
        check_one(key, sub_value, *rule, &|_| None).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// What a rule accepts, for messages.
fn describe(rule: Value) -> String {
    match rule {
        Value::Flag => "it takes no value".into(),
        Value::Maybe(inner) => describe(*inner),
        Value::Count => "use a whole number".into(),
        Value::SignedCount => "use a whole number (may be negative)".into(),
        Value::Size => "use a number with an optional unit letter (4096, 64m, 32k)".into(),
        Value::Percent => "use a percentage such as 5 or 0.5".into(),
        Value::Label => "use 1 to 64 of A-Z a-z 0-9 space _ . + : @ - (no slash)".into(),
        Value::Uuid => "use a UUID (hex digits and dashes) or a word such as random".into(),
        Value::OneOf(set) => format!("use one of {}", set.join(", ")),
        Value::Features => {
            "use feature names of a-z 0-9 _ -, comma-separated, ^ to turn one off".into()
        }
        Value::Words => "use words of a-z separated by colons".into(),
        Value::Compress => "use zlib, lzo, zstd or no, optionally with :LEVEL".into(),
        Value::Sub(table) => format!(
            "use comma-separated {}",
            table
                .iter()
                .map(|(key, _)| *key)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
