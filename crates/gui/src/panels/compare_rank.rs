//! The Compare tab's ranking: the variants of a selection (a preset's series, `exp:3-7`)
//! ranked by durable operations per second with their 95 % intervals and durable p99, the
//! ones that are not durable listed after, marked. Every figure comes from
//! [`fsynclab::analysis::rank`]; this only draws it.

use egui::RichText;

use fsynclab::analysis::{RankedVariant, Ranking};
use fsynclab::report::fmt_ns;

/// `4521 [4380, 4667]`, or `(1980 writes/s)` without a durable figure.
fn ops_text(v: &RankedVariant) -> String {
    match (v.durable_ops_per_sec, v.durable_ops_ci95) {
        (Some(ops), Some((lo, hi))) => format!("{ops:.0}  [{lo:.0}, {hi:.0}]"),
        (Some(ops), None) => format!("{ops:.0}"),
        (None, _) => format!("({:.0} writes/s)", v.writes_per_sec),
    }
}

fn vs_next_text(v: &RankedVariant) -> (String, String) {
    match &v.vs_next {
        Some(n) => {
            let ci = n
                .ci95
                .map(|(lo, hi)| format!(" [{lo:.2}, {hi:.2}]"))
                .unwrap_or_default();
            let word = if n.distinct {
                "ahead"
            } else {
                "not told apart"
            };
            (
                format!("{:.2}×{ci} {word}", n.ratio),
                format!(
                    "durable ops/s of this variant over the next one's, 95% interval from \
                     Welch's t on the logarithms: {}",
                    if n.distinct {
                        "the interval excludes 1, the order is real"
                    } else {
                        "the interval includes 1, these two places could swap on another day"
                    }
                ),
            )
        }
        None => (String::new(), String::new()),
    }
}

/// Draws the ranking of `name`.
pub(super) fn ranking_view(ui: &mut egui::Ui, r: &Ranking, name: &str) {
    ui.heading(format!("Ranking of {name}"));
    ui.label(
        RichText::new(
            "Each variant's durable operations per second (a write from its start to the moment \
             it is durable: the write plus its sync, or an O_SYNC/O_DSYNC write), the geometric \
             mean of its runs with the 95% interval, best first. Variants that keep nothing \
             are listed after the ranked ones.",
        )
        .weak(),
    );
    if !r.varying.is_empty() {
        ui.label(format!("varies: {}", r.varying.join(", ")));
    }
    ui.add_space(6.0);
    let warn = ui.visuals().warn_fg_color;
    egui::Grid::new("ranking")
        .striped(true)
        .num_columns(7)
        .spacing([14.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "rank",
                "variant",
                "durable ops/s [95% CI]",
                "durable p99",
                "runs",
                "vs next",
                "note",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for v in &r.variants {
                let place = v.rank.map_or("—".into(), |k| k.to_string());
                let ranked = v.rank.is_some();
                let text = |t: String| {
                    if ranked {
                        RichText::new(t)
                    } else {
                        RichText::new(t).weak()
                    }
                };
                ui.label(text(place));
                ui.label(text(v.name.clone()));
                ui.label(text(ops_text(v)));
                ui.label(text(
                    v.durable_p99_us.map_or("—".into(), |us| fmt_ns(us * 1e3)),
                ));
                ui.label(text(v.run_ids.len().to_string()))
                    .on_hover_text(format!("runs {:?}", v.run_ids));
                let (next, hover) = vs_next_text(v);
                if hover.is_empty() {
                    ui.label("");
                } else {
                    ui.label(next).on_hover_text(hover);
                }
                match (&v.not_durable, &v.not_durable_why) {
                    (Some(nd), Some(why)) => {
                        ui.colored_label(warn, nd).on_hover_text(why);
                    }
                    _ if v.durable_ops_per_sec.is_none() => {
                        ui.label(RichText::new("no durable figure").weak());
                    }
                    _ => {
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
    if !r.pg_test_fsync.is_empty() {
        ui.add_space(6.0);
        ui.label(RichText::new(fsynclab::report::pg_table(r).trim_start()).monospace());
    }
    if !r.left_out.is_empty() {
        ui.label(
            RichText::new(format!("left out, not finished: runs {:?}", r.left_out)).color(warn),
        );
    }
}
