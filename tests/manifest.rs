//! The manifest keeps the headless build honest: every window test (`tests/gui_*.rs`) is a
//! `[[test]]` with `required-features = ["gui"]`, or `cargo test --no-default-features`
//! (and clippy on the headless feature set in CI) tries to build it without egui.

use std::path::Path;

#[test]
fn every_window_test_requires_the_gui_feature() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let gated: Vec<String> = manifest["test"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t.get("required-features")
                .and_then(|f| f.as_array())
                .is_some_and(|f| f.iter().any(|x| x.as_str() == Some("gui")))
        })
        .filter_map(|t| t.get("name")?.as_str().map(String::from))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs")
            && stem.starts_with("gui_")
            && !gated.iter().any(|g| g == stem)
        {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "add a [[test]] entry with required-features = [\"gui\"] to Cargo.toml for: {missing:?}"
    );
}
