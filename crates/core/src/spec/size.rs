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
    // Exact integer arithmetic (an f64 would silently round sizes above 2^53).
    let not_a_size = || format!("'{t}' is not a size; write bytes or e.g. 4k, 64M, 1G");
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(not_a_size());
    }
    let out_of_range = || format!("size '{t}' is out of range");
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| out_of_range())?
    };
    let mut bytes = whole.checked_mul(multiplier).ok_or_else(out_of_range)?;
    let fraction = fraction.trim_end_matches('0');
    if !fraction.is_empty() {
        if fraction.len() > 12 {
            return Err(format!(
                "size '{t}' has more than 12 decimals; write it in a smaller unit"
            ));
        }
        let numerator =
            u128::from(fraction.parse::<u64>().map_err(|_| not_a_size())?) * u128::from(multiplier);
        let denominator = 10u128.pow(fraction.len() as u32);
        if numerator % denominator != 0 {
            return Err(format!("size '{t}' is not a whole number of bytes"));
        }
        let extra = u64::try_from(numerator / denominator).map_err(|_| out_of_range())?;
        bytes = bytes.checked_add(extra).ok_or_else(out_of_range)?;
    }
    Ok(bytes)
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
        assert!(parse_size("1.2.3k").unwrap_err().contains("not a size"));
        assert!(parse_size(".").unwrap_err().contains("not a size"));
        assert!(parse_size("17E").is_err());
        assert!(
            parse_size("16777216T")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            parse_size("18446744073709551616")
                .unwrap_err()
                .contains("out of range")
        );
    }

    #[test]
    fn large_sizes_are_exact() {
        // Found by crates/fsynclab/tests/cli/fuzz_parsers.rs: an f64 rounded sizes above 2^53.
        assert_eq!(parse_size("9007199254740993"), Ok(9_007_199_254_740_993));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_size("16777215.5T"),
            Ok((16_777_215 << 40) + (1 << 39))
        );
        assert_eq!(parse_size(".5k"), Ok(512));
        assert_eq!(parse_size("1.50k"), Ok(1536));
        assert_eq!(parse_size("2."), Ok(2));
    }

    #[test]
    fn formats_exact_units() {
        assert_eq!(format_size(4096), "4k");
        assert_eq!(format_size(64 << 20), "64M");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(3 << 29), "1536M");
    }
}
