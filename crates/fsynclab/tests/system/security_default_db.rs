//! The default database as root (docs/SECURITY.md): `XDG_DATA_HOME` is the caller's
//! environment as much as `--db` is, so a default path through another user's directory or
//! link is refused (exit 2, nothing made there or behind the link), while root's own works.
//! Needs root: skipped (saying why) without, never with CI=true.

use crate::common;

use std::os::unix::fs::PermissionsExt as _;

const NOBODY: u32 = 65534;

#[test]
fn the_default_database_as_root_is_anchored_as_a_given_one() {
    if !common::require_root(
        "the_default_database_as_root_is_anchored_as_a_given_one",
        "chowns a directory to another user",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    let root_only = dir.path().join("root-only");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::create_dir(&root_only).unwrap();
    std::fs::set_permissions(&root_only, std::fs::Permissions::from_mode(0o700)).unwrap();
    nix::unistd::chown(&theirs, Some(NOBODY.into()), None).unwrap();
    let link = theirs.join("link");
    std::os::unix::fs::symlink(&root_only, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(NOBODY), None).unwrap();
    let list = |xdg: &std::path::Path| {
        common::bare_cmd()
            .env_remove("SUDO_UID")
            .env_remove("SUDO_USER")
            .env("XDG_DATA_HOME", xdg)
            .arg("list")
            .output()
            .unwrap()
    };
    for xdg in [theirs.join("xdg"), link.clone()] {
        let out = list(&xdg);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", xdg.display());
        assert!(
            err.contains("the default database path") && err.contains("XDG_DATA_HOME"),
            "{err}"
        );
        assert!(!theirs.join("xdg").exists(), "made in their directory");
        assert!(
            common::entries(&root_only).is_empty(),
            "made behind their link"
        );
    }
    let mine = dir.path().join("mine");
    let out = list(&mine);
    common::assert_success(&out, "root's default database in root's own directory");
}
