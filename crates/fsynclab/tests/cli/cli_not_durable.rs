//! What a user is told, and only once (issue 31): a sync_file_range run says its writes are
//! not durable, like the nobarrier and tmpfs cases already did; a non-root `scratch create`
//! says it needs root without a spurious warning before it.

use crate::common::Lab;

#[test]
fn a_sync_file_range_run_says_its_writes_are_not_durable() {
    let lab = Lab::new();
    let run = lab.run_json(&["--file-size", "128k", "--sync", "sync_file_range"]);
    let warnings: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("not durable when it returns")),
        "{warnings:?}"
    );
    let shown = lab.cmd().args(["show", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("not durable when it returns"));
    // A durable method says nothing of the kind.
    let run = lab.run_json(&["--file-size", "128k", "--sync", "fdatasync"]);
    assert!(
        !run["warnings"].to_string().contains("not durable"),
        "{run}"
    );
}

#[test]
fn a_non_root_scratch_create_gives_one_error_and_no_warning() {
    // Issue 31: a spurious "stale scratch state could not be cleaned up" came first.
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let lab = Lab::new();
    let mut cmd = crate::common::bare_cmd();
    if crate::common::is_root() {
        let open = lab.dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(lab.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd.uid(65534)
            .gid(65534)
            .env("HOME", &open)
            .env("XDG_DATA_HOME", &open)
            .arg("--db")
            .arg(open.join("db.sqlite"));
    } else {
        cmd.arg("--db").arg(&lab.db);
    }
    let out = cmd
        .args(["scratch", "create", "--fs", "ext4", "--size", "512M"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(stderr.matches("needs root").count(), 1, "{stderr}");
}
