//! Option values as fio reads them: `${VAR}` substitution, sizes with fio's unit
//! prefixes (which depend on `kb_base`), and times with fio's suffixes. Checked against
//! fio 3.33's `HOWTO.rst` ("Parameter types", "kb_base") and against fio itself
//! (`bs=4KiB` with the default `kb_base=1024` writes 4000-byte blocks).

/// How fio reads unit prefixes (`kb_base`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KbBase {
    /// `kb_base=1024`, fio's default ("compatibility mode"): `k`/`kb` are 1024 and the IEC
    /// spellings `ki`/`kib` are 1000 — the opposite of the standards, for old scripts.
    #[default]
    Compat1024,
    /// `kb_base=1000`: SI prefixes (`k`, `kb`) are powers of 1000, IEC prefixes (`ki`,
    /// `kib`) powers of 1024.
    Si1000,
}

/// Replaces every `${NAME}` with `env(NAME)`, or with nothing when it is unset (fio's
/// rule: "If no such environment variable is defined, or VARNAME is the empty string,
/// the empty string will be substituted"). A `${` without a closing `}` stays as written;
/// substituted text is not scanned again.
pub(super) fn expand_env(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + 2..start + 2 + len];
        if !name.is_empty()
            && let Some(value) = env(name)
        {
            out.push_str(&value);
        }
        rest = &rest[start + 2 + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Splits `text` into its number (decimal, or hex after `0x`) and the suffix after it.
fn number_and_suffix(text: &str) -> Result<(u64, String), String> {
    let t = text.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t, 10),
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 {
        return Err(if t.contains('$') || t.starts_with('(') {
            format!(
                "'{t}' uses fio's reserved keywords or arithmetic, which are not evaluated here; write the number"
            )
        } else if t.is_empty() {
            "the value is empty (an unset ${VAR}?); give a number".into()
        } else {
            format!("'{t}' is not a whole number")
        });
    }
    let number =
        u64::from_str_radix(&digits[..end], radix).map_err(|_| format!("'{t}' is out of range"))?;
    Ok((number, digits[end..].to_ascii_lowercase()))
}

/// Parses a size as fio does (`int` type with a data unit): a whole number with an
/// optional unit prefix k/m/g/t/p (case-insensitive), an optional `i` (IEC) and an
/// optional `b` (byte); a bare number or `b` is bytes. Which prefixes are powers of 1024
/// depends on `kb_base` (see [`KbBase`]). Percentages, ranges, decimals and fio's
/// arithmetic are refused.
pub fn parse_fio_size(text: &str, kb_base: KbBase) -> Result<u64, String> {
    let (number, suffix) = number_and_suffix(text)?;
    let (prefix, iec) = match suffix.as_str() {
        "" | "b" => return Ok(number),
        s => {
            let s = s.strip_suffix('b').unwrap_or(s);
            match s.strip_suffix('i') {
                Some(p) => (p, true),
                None => (s, false),
            }
        }
    };
    let power = match prefix {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(format!(
                "unknown unit '{suffix}' in '{}'; use k, m, g, t or p (optionally with i and/or b), e.g. 4k or 64m",
                text.trim()
            ));
        }
    };
    let base: u64 = match (kb_base, iec) {
        (KbBase::Compat1024, false) | (KbBase::Si1000, true) => 1024,
        (KbBase::Compat1024, true) | (KbBase::Si1000, false) => 1000,
    };
    base.checked_pow(power)
        .and_then(|unit| number.checked_mul(unit))
        .ok_or_else(|| format!("'{}' is out of range", text.trim()))
}

/// Parses a time as fio does for `runtime` and `ramp_time`: a whole number, seconds by
/// default, or with a suffix `d`, `h`, `m`, `s`/`sec`, `ms`/`msec`, `us`/`usec`
/// (case-insensitive). Returns microseconds.
pub fn parse_fio_time_us(text: &str) -> Result<u64, String> {
    let (number, suffix) = number_and_suffix(text)?;
    let unit_us: u64 = match suffix.as_str() {
        "" | "s" | "sec" => 1_000_000,
        "ms" | "msec" => 1_000,
        "us" | "usec" => 1,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        other => {
            return Err(format!(
                "unknown time unit '{other}' in '{}'; use s (the default), ms, us, m, h or d",
                text.trim()
            ));
        }
    };
    number
        .checked_mul(unit_us)
        .ok_or_else(|| format!("'{}' is out of range", text.trim()))
}

/// A whole number (fio `int` without units, e.g. `numjobs`, `fsync`).
pub(super) fn parse_count(text: &str) -> Result<u64, String> {
    match number_and_suffix(text)? {
        (n, s) if s.is_empty() => Ok(n),
        _ => Err(format!("'{}' is not a whole number", text.trim())),
    }
}

/// A fio `bool`: 0 or 1.
pub(super) fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err(format!("'{other}' is not 0 or 1")),
    }
}
