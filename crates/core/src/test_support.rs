//! The one skip rule of every test in the workspace (unit and integration): a test that
//! needs something this machine lacks (root, fio, a kernel setting) skips saying what and
//! why, except under `CI=true`, where it fails instead. Built for the crate's own tests and,
//! with the `test-support` feature, for the other crates' tests.

/// Skips (returns false after printing `SKIPPED {test}: {why}`) or, under `CI=true`,
/// fails the test naming what it needs: CI never skips.
pub fn skip_or_fail(test: &str, why: &str) -> bool {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {why}, and CI=true forbids skipping"
    );
    eprintln!("SKIPPED {test}: {why}");
    false
}

/// Whether a test that needs root can go on: true as root; otherwise [`skip_or_fail`] with
/// what it needs root for (`why`).
pub fn root_or_skip(test: &str, why: &str) -> bool {
    nix::unistd::geteuid().is_root() || skip_or_fail(test, &format!("needs root ({why})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_skips_outside_ci_and_fails_under_it() {
        // The variable is read at each call; the test sets nothing (tests run in parallel)
        // and checks the branch this run takes.
        if std::env::var("CI").as_deref() == Ok("true") {
            let failed = std::panic::catch_unwind(|| skip_or_fail("t", "needs fio"));
            assert!(failed.is_err(), "CI=true must fail a test that would skip");
        } else {
            assert!(!skip_or_fail("t", "needs fio"));
        }
    }
}
