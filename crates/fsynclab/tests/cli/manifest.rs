//! The manifests keep tooling and test support out of what users build: the binary's
//! default features enable the window and nothing else, and no crate's normal dependencies
//! turn on `test-support` (the fake backend) or `autopilot` (the scripted window).
//! (.ci/run checks the resolved feature set of the release build with `cargo tree` too.)

use std::path::Path;

fn manifest(path: &str) -> toml::Table {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    std::fs::read_to_string(root.join(path))
        .unwrap()
        .parse()
        .unwrap()
}

fn strings(value: Option<&toml::Value>) -> Vec<String> {
    value
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_release_build_enables_no_tooling_or_test_feature() {
    let binary = manifest("crates/fsynclab/Cargo.toml");
    let features = binary["features"].as_table().unwrap();
    assert_eq!(strings(features.get("default")), ["gui"]);
    assert_eq!(strings(features.get("gui")), ["dep:fsynclab-gui"]);
    for path in [
        "Cargo.toml",
        "crates/gui/Cargo.toml",
        "crates/fsynclab/Cargo.toml",
    ] {
        let m = manifest(path);
        let Some(deps) = m.get("dependencies").and_then(|d| d.as_table()) else {
            continue;
        };
        for (name, dep) in deps {
            let enabled = strings(dep.get("features"));
            assert!(
                !enabled
                    .iter()
                    .any(|f| f == "test-support" || f == "autopilot"),
                "{path}: dependency {name} enables {enabled:?} in every build; \
                 move it to [dev-dependencies] or a non-default feature"
            );
        }
    }
}
