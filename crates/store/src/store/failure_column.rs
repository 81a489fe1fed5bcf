//! `runs.error` and `runs.error_code` (migration 0011, issue 32): a failure is stored as its
//! code and parameters (`{"code": "io", "operation": "write", …}`), its code again in
//! `error_code` so SQL can filter on it; rows stored before hold a sentence, read back as
//! [`Recorded::Text`] and shown as they were.

use crate::metrics::{Failure, Recorded, RunFailure};

/// The `runs.error` text and `runs.error_code` of `failure`. A failure JSON cannot hold (a
/// path that is not UTF-8) is stored in the library's neutral words, coded `text`, so the
/// run is never left `running` for want of its error.
pub(crate) fn encode(failure: &Failure) -> Result<(String, &'static str), serde_json::Error> {
    Ok(match failure {
        Recorded::Typed(f) => match serde_json::to_string(f) {
            Ok(json) => (json, f.code()),
            Err(_) => (f.to_string(), "text"),
        },
        Recorded::Text(text) => (text.clone(), "text"),
    })
}

/// The failure stored as `text` in `runs.error`: typed when it is a stored failure's JSON,
/// else the sentence an earlier release stored.
pub(crate) fn decode(text: Option<String>) -> Option<Failure> {
    let text = text?;
    if text.starts_with('{')
        && let Ok(typed) = serde_json::from_str::<RunFailure>(&text)
    {
        return Some(Recorded::Typed(typed));
    }
    Some(Recorded::Text(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_failures_round_trip_and_sentences_stay_sentences() {
        let typed: Failure = RunFailure::Interrupted.into();
        let (text, code) = encode(&typed).unwrap();
        assert_eq!(
            (text.as_str(), code),
            (super::super::INTERRUPTED_MESSAGE, "interrupted")
        );
        assert_eq!(decode(Some(text)), Some(typed));
        let old = "no space left on device during write of /t/f".to_string();
        assert_eq!(decode(Some(old.clone())), Some(Recorded::Text(old.clone())));
        assert_eq!(encode(&Recorded::Text(old.clone())).unwrap(), (old, "text"));
        // A sentence that merely starts with a brace is still a sentence.
        let braced = "{weird} message".to_string();
        assert_eq!(decode(Some(braced.clone())), Some(Recorded::Text(braced)));
        assert_eq!(decode(None), None);
        // A path JSON cannot hold: stored in words, coded `text`, never lost.
        use std::os::unix::ffi::OsStrExt;
        let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/t/\xff"));
        let e = std::io::Error::from_raw_os_error(5);
        let f = RunFailure::Io(crate::metrics::IoFailure::new(
            crate::spec::WorkloadKind::Fileio,
            "write",
            path,
            None,
            &e,
            false,
        ));
        let (text, code) = encode(&f.into()).unwrap();
        assert_eq!(code, "text");
        assert!(text.starts_with("write of /t/"), "{text}");
    }
}
