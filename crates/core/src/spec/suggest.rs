//! "Did you mean …?": the known name closest to a mistyped one.

/// Edits (insertions, deletions, substitutions) between `a` and `b`, by character.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The name among `names` closest to `given`, when it is at most a third of its length
/// (and 3) edits away: a typo, not another word.
pub(crate) fn closest<'a>(given: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (given.chars().count() / 3).clamp(1, 3);
    names
        .map(|n| (edit_distance(&given.to_lowercase(), n), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_preset_name_gets_a_suggestion() {
        let err = crate::spec::load_preset("btrfs-log-comit")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unknown preset 'btrfs-log-comit'; did you mean btrfs-log-commit? built-in presets: "),
            "{err}"
        );
        let err = crate::spec::load_preset("FSYNC-METHOD")
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean fsync-methods?"), "{err}");
        // Another word altogether: no guess, the list only.
        let err = crate::spec::load_preset("postgres")
            .unwrap_err()
            .to_string();
        assert!(
            !err.contains("did you mean") && err.contains("uring-depth"),
            "{err}"
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
