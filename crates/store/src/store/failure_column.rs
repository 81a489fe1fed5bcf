//! `runs.error` and `runs.error_code` (migration 0011, issue 32): a failure is stored as its
//! code and parameters (`{"code": "io", "operation": "write", …}`), its code again in
//! `error_code` so SQL can filter on it; rows stored before hold a sentence, read back as
//! [`Recorded::Text`] and shown as they were.

use crate::metrics::{Failure, Recorded, RunFailure};

/// The `runs.error` text and `runs.error_code` of `failure`.
pub(crate) fn encode(failure: &Failure) -> Result<(String, &'static str), serde_json::Error> {
    let text = match failure {
        Recorded::Typed(f) => serde_json::to_string(f)?,
        Recorded::Text(text) => text.clone(),
    };
    Ok((text, failure.code()))
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
    }
}
