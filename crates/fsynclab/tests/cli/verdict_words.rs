//! No front end calls a change "unchanged" or "within noise" (issue 30): a comparison that
//! finds no significant difference says so with the interval it could not rule out. Every
//! text output of a comparison — the table, the gate, Markdown, CSV, the report's Markdown
//! and SVG — is scanned for the old words, on comparisons that exercise every verdict:
//! no significant difference, worse, better, too few runs and not measured.

use crate::cli_gate::imported_lab;
use assert_cmd::prelude::*;

const BANNED: [&str; 3] = ["unchanged", "within noise", "within the noise"];

fn check(what: &str, text: &str) {
    let lower = text.to_lowercase();
    for word in BANNED {
        assert!(!lower.contains(word), "{what} says {word:?}:\n{text}");
    }
}

#[test]
fn no_comparison_output_says_unchanged_or_within_noise() {
    let lab = imported_lab();
    let mut verdicts = String::new();
    // old vs same: no significant difference; old vs slower: worse; the reverse: better;
    // single runs (1 vs 7): too few runs to tell.
    for (a, b) in [
        ("old", "same"),
        ("old", "slower"),
        ("slower", "old"),
        ("1", "7"),
    ] {
        for extra in [
            &[][..],
            &["--markdown"],
            &["--csv"],
            &["--fail-on", "worse"],
        ] {
            let out = lab
                .cmd()
                .args(["compare", a, b])
                .args(extra)
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            check(&format!("compare {a} {b} {extra:?}"), &text);
            verdicts.push_str(&text);
        }
        for ext in ["md", "svg", "csv"] {
            let path = lab.dir.path().join(format!("{a}-{b}.{ext}"));
            lab.cmd()
                .args(["report", a, b, "--out"])
                .arg(&path)
                .assert()
                .success();
            check(
                &format!("report {a} {b} .{ext}"),
                &std::fs::read_to_string(&path).unwrap(),
            );
        }
    }
    // The scan saw every verdict it is meant to cover.
    for said in [
        "no significant difference (n=3, CI ",
        "worse (p",
        "better (p",
        "too few runs to tell (n=1; 3 per side needed)",
        "not measured on both sides",
    ] {
        assert!(verdicts.contains(said), "no {said:?} in:\n{verdicts}");
    }
}

#[test]
fn markdown_reports_show_html_never_render_it() {
    // Issue 31: titles and labels reached the Markdown as raw HTML.
    let lab = imported_lab();
    let out = lab.dir.path().join("r.md");
    lab.cmd()
        .args([
            "report",
            "old",
            "same",
            "--title",
            "<script>alert(1)</script> & <b>x</b>",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.starts_with("# &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;x&lt;/b&gt;\n"),
        "{md}"
    );
    assert!(!md.contains("<script") && !md.contains("<b>"), "{md}");
}
