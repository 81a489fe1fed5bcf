//! The XDG desktop entry (`assets/fsynclab.desktop`) is valid for `desktop-file-validate`
//! (apt: desktop-file-utils; skipped with a reason where it is missing, never with
//! CI=true), starts the binary the README installs, and names an icon that is shipped.

use crate::common;
use std::path::Path;
use std::process::Command;

const ENTRY: &str = concat!(
    concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
    "/assets/fsynclab.desktop"
);

/// The `Key=value` of the `[Desktop Entry]` group.
fn value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::trim)
}

#[test]
fn the_desktop_entry_passes_desktop_file_validate() {
    let found = Command::new("desktop-file-validate").arg("--help").output();
    if found.is_err() {
        common::skip_or_fail(
            "the_desktop_entry_passes_desktop_file_validate",
            "needs desktop-file-validate (apt-get install desktop-file-utils)",
        );
        return;
    }
    let out = Command::new("desktop-file-validate")
        .arg(ENTRY)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // Errors fail the status; warnings and hints are defects here too.
    assert!(said.trim().is_empty(), "{said}");
}

#[test]
fn the_entry_starts_fsynclab_with_the_shipped_icon() {
    let text = std::fs::read_to_string(ENTRY).unwrap();
    assert!(text.starts_with("[Desktop Entry]\n"));
    assert_eq!(value(&text, "Type"), Some("Application"));
    assert_eq!(value(&text, "Exec"), Some("fsynclab"));
    assert_eq!(value(&text, "Terminal"), Some("false"));
    // The window sets app id "fsynclab" (src/gui/mod.rs): the menu entry and the window
    // are one program to the desktop.
    assert_eq!(value(&text, "StartupWMClass"), Some("fsynclab"));
    let icon = value(&text, "Icon").unwrap();
    assert_eq!(icon, "fsynclab");
    let assets = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("assets");
    for file in [format!("{icon}.svg"), format!("{icon}.png")] {
        assert!(assets.join(&file).is_file(), "assets/{file} is not shipped");
    }
}
