//! fio writes its floating-point figures with printf's `%f`, so a statistic that came out
//! NaN or infinite (a deviation over no samples, a rate over no time) is printed as a bare
//! `nan`, `-nan` or `inf` — not JSON. Such a value is read as `null`: a figure the importer
//! needs then fails with its JSON path named, and one it does not need is ignored, instead of
//! the whole file being refused as broken JSON.

use std::borrow::Cow;

/// The bare words C's printf uses for non-finite doubles (lower case; matched ignoring case).
const WORDS: [&str; 6] = ["-infinity", "infinity", "-nan", "nan", "-inf", "inf"];

/// `text` with every bare non-finite number in a value position (after `:`, `,` or `[`,
/// outside strings) replaced by `null`; borrowed unchanged when there is none.
pub(super) fn nonfinite_as_null(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut last_token = b'\0';
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            last_token = b;
            i += 1;
            continue;
        }
        if matches!(last_token, b':' | b',' | b'[')
            && let Some(len) = nonfinite_at(&bytes[i..])
        {
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buf.push_str(&text[copied..i]);
            buf.push_str("null");
            i += len;
            copied = i;
            last_token = b'l';
            continue;
        }
        if !b.is_ascii_whitespace() {
            last_token = b;
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut buf) => {
            buf.push_str(&text[copied..]);
            Cow::Owned(buf)
        }
    }
}

/// The length of the non-finite word at the start of `rest`, when it is one on its own.
fn nonfinite_at(rest: &[u8]) -> Option<usize> {
    WORDS.iter().map(|w| w.len()).find(|&len| {
        rest.len() >= len
            && WORDS
                .iter()
                .any(|w| rest[..len].eq_ignore_ascii_case(w.as_bytes()))
            && !rest
                .get(len)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::nonfinite_as_null;

    #[test]
    fn bare_nan_and_inf_values_become_null() {
        let text = "{\"a\" : -nan, \"b\" : [nan, inf,-INF], \"c\": Infinity,\n\"d\" : 1.5}";
        assert_eq!(
            nonfinite_as_null(text),
            "{\"a\" : null, \"b\" : [null, null,null], \"c\": null,\n\"d\" : 1.5}"
        );
    }

    #[test]
    fn strings_keys_and_valid_json_are_left_alone() {
        for text in [
            "{\"nan\" : \"-nan inf\", \"x\" : null, \"y\" : \"a\\\"nan\"}",
            "{\"rw\" : \"randwrite\", \"n\" : 12}",
            "{\"nanny\" : 1, \"v\" : \"inf\"}",
        ] {
            assert!(matches!(
                nonfinite_as_null(text),
                std::borrow::Cow::Borrowed(_)
            ));
        }
        // A word that only starts like one is not replaced (serde_json then refuses it).
        assert_eq!(nonfinite_as_null("{\"v\" : nanx}"), "{\"v\" : nanx}");
    }
}
