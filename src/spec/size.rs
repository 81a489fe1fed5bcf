//! Byte sizes as users write them: `4096`, `4k`, `64M`, `1.5G`, `512b`.

use serde::{Deserialize, Deserializer, Serializer};

/// Parses a size with an optional binary suffix (k, m, g, t; case-insensitive, optional
/// trailing `b`/`ib`). A bare number is bytes; `512b` is 512 bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size; write bytes or a number with k, M, G or T (e.g. 4k, 64M)".into());
    }
    let lower = t.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, suffix) = lower.split_at(digits_end);
    if number.is_empty() {
        return Err(format!(
            "'{t}' is not a size; write bytes or e.g. 4k, 64M, 1G"
        ));
    }
    let multiplier: u64 = match suffix.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown size suffix '{other}' in '{t}'; use k, M, G or T (binary units)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{t}' is not a size; write bytes or e.g. 4k, 64M, 1G"))?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("size '{t}' is out of range"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("size '{t}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Binary units, largest first.
const UNITS: [(u64, &str); 4] = [
    (1 << 40, "T"),
    (1 << 30, "G"),
    (1 << 20, "M"),
    (1 << 10, "k"),
];

/// Formats a byte count with the largest exact binary suffix (`65536` → `64k`).
pub fn format_size(bytes: u64) -> String {
    for (unit, suffix) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, suffix);
        }
    }
    bytes.to_string()
}

/// Formats a byte count for messages with the largest binary unit it reaches, rounded down
/// to one decimal (`2G`, `23.4G`, `512M`, `100B`).
pub fn format_size_approx(bytes: u64) -> String {
    for (unit, suffix) in UNITS {
        if bytes >= unit {
            let tenths = bytes.saturating_mul(10) / unit;
            return if tenths.is_multiple_of(10) {
                format!("{}{suffix}", tenths / 10)
            } else {
                format!("{}.{}{suffix}", tenths / 10, tenths % 10)
            };
        }
    }
    format!("{bytes}B")
}

/// serde helper: sizes deserialize from an integer or a string such as "64M" and
/// serialize as integers.
pub mod serde_size {
    use super::*;

    /// Serializes a size as an integer byte count.
    pub fn serialize<S: Serializer>(bytes: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(*bytes)
    }

    /// Deserializes a size from an integer or a string with a suffix.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Int(n) => Ok(n),
            Raw::Text(t) => parse_size(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// serde helper for `Option<u64>` sizes.
pub mod serde_opt_size {
    use super::*;

    /// Serializes an optional size as an integer or nothing.
    pub fn serialize<S: Serializer>(bytes: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => serializer.serialize_some(b),
            None => serializer.serialize_none(),
        }
    }

    /// Deserializes an optional size from an integer or a string with a suffix.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Option::<Raw>::deserialize(deserializer)? {
            None => Ok(None),
            Some(Raw::Int(n)) => Ok(Some(n)),
            Some(Raw::Text(t)) => parse_size(&t).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("512b"), Ok(512));
        assert_eq!(parse_size(" 2T "), Ok(2 << 40));
    }

    #[test]
    fn rejects_nonsense_with_a_hint() {
        assert!(parse_size("").unwrap_err().contains("empty"));
        assert!(parse_size("4x").unwrap_err().contains("suffix"));
        assert!(parse_size("abc").unwrap_err().contains("not a size"));
        assert!(parse_size("0.3").unwrap_err().contains("whole number"));
        assert!(parse_size("-4k").is_err());
    }

    #[test]
    fn formats_exact_units() {
        assert_eq!(format_size(4096), "4k");
        assert_eq!(format_size(64 << 20), "64M");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(3 << 29), "1536M");
    }
}
