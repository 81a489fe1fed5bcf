//! `fsynclab presets` tells each preset's own quick scale (issue 15 item 2: it told every
//! preset "--scale 0.05", a 0.2 s run for fsync-methods).

use crate::common::Lab;
use fsynclab::spec::builtin_presets;

#[test]
fn presets_lists_each_presets_own_quick_scale() {
    let lab = Lab::new();
    let out = lab.cmd().arg("presets").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let presets = builtin_presets();
    assert!(
        presets.iter().any(|p| p.scale.quick != 0.05),
        "the test needs presets with different quick scales"
    );
    for p in &presets {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(p.name.as_str()))
            .unwrap_or_else(|| panic!("no line for {}:\n{text}", p.name));
        let quick: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert_eq!(quick, p.scale.quick, "{line}");
    }
    assert!(!text.contains("--scale 0.05"), "{text}");
}
