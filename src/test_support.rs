//! Helpers shared by the crate's unit tests.

/// Whether a unit test that needs root can go on: true as root; otherwise prints why the
/// test named `test` is skipped (`why`: what it needs root for) and returns false — or
/// fails it under `CI=true`, where skipping is forbidden.
pub fn root_or_skip(test: &str, why: &str) -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test} needs root ({why}) and CI=true forbids skipping"
    );
    eprintln!("skipping {test}: needs root ({why})");
    false
}
