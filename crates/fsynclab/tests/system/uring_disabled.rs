//! io_uring switched off by the administrator (`kernel.io_uring_disabled = 2`) is a usage
//! error at preflight: exit 2, a message naming `ioengine`, the cause and the fix, nothing
//! stored, no panic. One short test in its own binary (so no other test of this suite
//! runs while the sysctl is set); the old value is restored even when the test fails.
//! Needs root; without it the test prints why it skips, except under `CI=true`.

use crate::common;

use crate::common::{Lab, require_root};

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// Puts the sysctl back when dropped (on success, failure or panic).
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(SYSCTL, &self.0) {
            eprintln!("could not restore {SYSCTL} to {}: {e}", self.0.trim());
        }
    }
}

#[test]
fn io_uring_disabled_is_refused_at_preflight_naming_ioengine() {
    if !require_root("io_uring_disabled", "it sets kernel.io_uring_disabled") {
        return;
    }
    let Ok(old) = std::fs::read_to_string(SYSCTL) else {
        common::skip_or_fail(
            "io_uring_disabled",
            &format!("{SYSCTL} is missing (kernel older than 6.6)"),
        );
        return;
    };
    let lab = Lab::new();
    let out = {
        let _restore = Restore(old.clone());
        std::fs::write(SYSCTL, "2").expect("set io_uring_disabled");
        lab.cmd()
            .args([
                "run",
                "--quiet",
                "--ioengine",
                "io_uring",
                "--file-size",
                "256k",
            ])
            .arg("--target")
            .arg(&lab.target)
            .output()
            .expect("run fsynclab")
    };
    assert_eq!(std::fs::read_to_string(SYSCTL).unwrap(), old, "restored");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ioengine"), "{stderr}");
    assert!(stderr.contains("io_uring_disabled = 2"), "{stderr}");
    assert!(stderr.contains("--ioengine sync"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(lab.target_entries().is_empty());
    // Nothing was stored: the database has no run.
    let list = lab.cmd().args(["list", "--json"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains("\"id\""),
        "stored a run"
    );
}
