//! A crash test's findings as `--json` (`crash_test`, docs/EXPORT.md) and as text.

use serde_json::{Value, json};

use crate::crashdev::{CrashReport, Failure};

/// The `crash_test` object of a crash test's `--json`.
pub fn crash_json(r: &CrashReport) -> Value {
    let first = r.first_failure.as_ref().map(|f| {
        let (what, record, message) = match &f.failure {
            Failure::Lost(a) => ("lost", Some(a), None),
            Failure::Torn(a) => ("torn", Some(a), None),
            Failure::Stale(a) => ("stale", Some(a), None),
            Failure::Mount(m) => ("mount", None, Some(m.as_str())),
            Failure::Fsck(m) => ("fsck", None, Some(m.as_str())),
        };
        json!({
            "cut": f.cut,
            "subset": f.subset,
            "dropped": f.dropped,
            "reordered": f.reordered,
            "what": what,
            "record": record.map(|a| json!({
                "path": f.file,
                "thread": a.id.thread,
                "seq": a.id.seq,
                "version": a.id.version,
                "file": a.file,
                "offset": a.offset,
                "len": a.len,
            })),
            "message": message,
        })
    });
    json!({
        "cuts": r.cuts,
        "states": r.states,
        "acknowledged": r.acknowledged,
        "lost": r.lost,
        "torn": r.torn,
        "stale": r.stale,
        "mount_failures": r.mount_failures,
        "fsck_failures": r.fsck_failures,
        "seed": r.seed,
        "first_failure": first,
        "log_kept": r.kept_log.is_some(),
    })
}

/// Whether a crash test found an acknowledged record lost, torn or stale, or a state that
/// would not mount or check clean.
pub fn crash_failed(r: &CrashReport) -> bool {
    r.lost + r.torn + r.stale + r.mount_failures + r.fsck_failures > 0
}

/// The findings of a crash test in a few lines: the verdict, then the first failure (each
/// front end adds, when [`CrashReport::kept_log`] is set, how to build that state again).
pub fn crash_text(r: &CrashReport) -> String {
    let mut out = format!(
        "{} of {} acknowledged records lost over {} power cuts ({} crash states); torn {}, \
         stale {}; states that did not mount {}, checker errors {}/{} (seed {})\n",
        r.lost,
        r.acknowledged,
        r.cuts,
        r.states,
        r.torn,
        r.stale,
        r.mount_failures,
        r.fsck_failures,
        r.states,
        r.seed
    );
    if let Some(f) = &r.first_failure {
        let what = match &f.failure {
            Failure::Lost(a) | Failure::Torn(a) | Failure::Stale(a) => format!(
                "{} record {} of thread {} ({}, offset {}, version {})",
                match f.failure {
                    Failure::Lost(_) => "lost",
                    Failure::Torn(_) => "torn",
                    _ => "stale",
                },
                a.id.seq,
                a.id.thread,
                f.file.clone().unwrap_or_else(|| format!("file {}", a.file)),
                a.offset,
                a.id.version
            ),
            Failure::Mount(m) => format!("did not mount: {m}"),
            Failure::Fsck(m) => format!("checker: {m}"),
        };
        let how = if f.reordered {
            "every volatile write kept, reordered newest first".to_string()
        } else {
            format!("{} volatile writes dropped", f.dropped.len())
        };
        out.push_str(&format!(
            "first failure: cut at log entry {}, state {} ({how}): {what}\n",
            f.cut, f.subset
        ));
    }
    out
}

/// `word` as one shell word: as is when it needs no quoting, else in single quotes (for the
/// commands the front ends print).
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./-+:@%,=".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashdev::FirstFailure;
    use fsynclab_core::crashlog::{Ack, RecordId};

    #[test]
    fn the_json_has_the_documented_keys_and_the_first_failure() {
        let mut r = CrashReport {
            cuts: 20,
            states: 47,
            acknowledged: 120,
            seed: 11,
            ..CrashReport::default()
        };
        assert!(!crash_failed(&r));
        let clean = crash_json(&r);
        for key in [
            "cuts",
            "states",
            "acknowledged",
            "lost",
            "torn",
            "stale",
            "mount_failures",
            "fsck_failures",
            "seed",
            "first_failure",
        ] {
            assert!(clean.get(key).is_some(), "{key}");
        }
        assert!(clean["first_failure"].is_null());
        assert!(
            crash_text(&r).starts_with("0 of 120 acknowledged records lost over 20 power cuts")
        );
        r.lost = 3;
        r.first_failure = Some(FirstFailure {
            reordered: false,
            file: None,
            cut: 88,
            subset: 0,
            dropped: vec![87],
            failure: Failure::Lost(Ack {
                id: RecordId {
                    run: 1,
                    thread: 1,
                    seq: 4,
                    version: 0,
                },
                file: 1,
                offset: 8192,
                len: 4096,
            }),
        });
        assert!(crash_failed(&r));
        let j = crash_json(&r);
        assert_eq!(j["first_failure"]["what"], "lost");
        assert_eq!(j["first_failure"]["record"]["seq"], 4);
        assert_eq!(j["first_failure"]["dropped"], json!([87]));
        assert!(crash_text(&r).contains("first failure: cut at log entry 88"));
        assert_eq!(j["log_kept"], false);
        r.kept_log = Some("0123456789abcdef".into());
        assert_eq!(shell_word("/a/b.sqlite"), "/a/b.sqlite");
        assert_eq!(
            shell_word("/tmp/my lab's.sqlite"),
            "'/tmp/my lab'\\''s.sqlite'"
        );
        assert_eq!(shell_word(""), "''");
        assert_eq!(crash_json(&r)["log_kept"], true);
    }
}
