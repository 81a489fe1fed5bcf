//! Typed, path-carrying access to fio's JSON: every value read names its JSON path
//! (`client_stats[1].sync.lat_ns.N`) when it is missing or not what fio writes, so a bad
//! file is refused with the field and the fix, never a panic and never a silent zero.

use serde_json::{Map, Value};

use super::ImportError;

/// Largest count or nanosecond value accepted (2^62): far beyond any real run (146 years
/// in ns), small enough that sums of a few thousand bins cannot overflow.
pub(super) const MAX_COUNT: u64 = 1 << 62;

/// One JSON value and where it is.
#[derive(Clone, Copy)]
pub(super) struct Node<'a> {
    pub value: &'a Value,
    pub path: &'a str,
}

/// A node with an owned path (children of a node build their path).
pub(super) struct Owned<'a> {
    pub value: &'a Value,
    pub path: String,
}

impl<'a> Owned<'a> {
    /// Borrowed view.
    pub fn node(&self) -> Node<'_> {
        Node {
            value: self.value,
            path: &self.path,
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Node<'a> {
    /// The error for this node: `problem` and the fix.
    pub fn error(&self, problem: impl Into<String>, fix: impl Into<String>) -> ImportError {
        ImportError::Field {
            path: self.path.to_string(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    fn wrong_type(&self, expected: &str) -> ImportError {
        self.error(
            format!("is {}, expected {expected}", type_name(self.value)),
            "give fio's own output unchanged (its json or json+ output format)",
        )
    }

    /// The object this node holds.
    pub fn object(&self) -> Result<&'a Map<String, Value>, ImportError> {
        self.value
            .as_object()
            .ok_or_else(|| self.wrong_type("an object"))
    }

    /// The array this node holds.
    pub fn array(&self) -> Result<&'a Vec<Value>, ImportError> {
        self.value
            .as_array()
            .ok_or_else(|| self.wrong_type("an array"))
    }

    /// The string this node holds.
    pub fn str(&self) -> Result<&'a str, ImportError> {
        self.value
            .as_str()
            .ok_or_else(|| self.wrong_type("a string"))
    }

    /// A whole number in 0..=[`MAX_COUNT`].
    pub fn count(&self) -> Result<u64, ImportError> {
        match self.value {
            Value::Number(n) => match n.as_u64() {
                Some(v) if v <= MAX_COUNT => Ok(v),
                Some(v) => Err(self.error(
                    format!("is {v}, beyond the largest count accepted ({MAX_COUNT})"),
                    "the file is damaged or not fio's output; record it again",
                )),
                None if n.as_i64().is_some_and(|v| v < 0) => Err(self.error(
                    format!("is negative ({n})"),
                    "fio writes counts as whole numbers from 0; the file is damaged",
                )),
                None => Err(self.error(
                    format!("is {n}, not a whole number in range"),
                    "fio writes counts as whole numbers; the file is damaged",
                )),
            },
            _ => Err(self.wrong_type("a whole number")),
        }
    }

    /// A finite number ≥ 0 (fio's rates, means and percentages).
    pub fn non_negative(&self) -> Result<f64, ImportError> {
        match self.value {
            Value::Number(n) => match n.as_f64() {
                Some(v) if v.is_finite() && v >= 0.0 && v <= MAX_COUNT as f64 => Ok(v),
                _ => Err(self.error(
                    format!("is {n}, outside 0..={MAX_COUNT}"),
                    "fio writes these as non-negative numbers; the file is damaged",
                )),
            },
            _ => Err(self.wrong_type("a number")),
        }
    }

    /// The member `key` (missing is an error naming the path).
    pub fn get(&self, key: &str) -> Result<Owned<'a>, ImportError> {
        self.opt(key)?.ok_or_else(|| ImportError::Field {
            path: join(self.path, key),
            problem: "is missing".into(),
            fix: "give fio's own output unchanged (fio 3.x, json or json+ output format); \
                      the fields fsynclab reads are listed in docs/FIO.md"
                .into(),
        })
    }

    /// The member `key`, `None` when absent (an error when this node is no object).
    pub fn opt(&self, key: &str) -> Result<Option<Owned<'a>>, ImportError> {
        Ok(self.object()?.get(key).map(|value| Owned {
            value,
            path: join(self.path, key),
        }))
    }

    /// Element `index` of an array node.
    pub fn at(&self, index: usize, value: &'a Value) -> Owned<'a> {
        Owned {
            value,
            path: format!("{}[{index}]", self.path),
        }
    }
}

/// `parent.key`, quoting keys fio writes with spaces or dots (`"job options"`).
pub(super) fn join(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if plain {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}
