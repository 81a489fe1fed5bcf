//! The Compare tab's ranking: the variants of a selection (a preset's series, `exp:3-7`)
//! ranked by durable operations per second with their 95 % intervals and durable p99, the
//! ones that are not durable listed after, marked. Every figure comes from
//! [`fsynclab::analysis::rank`]; this only draws it.

use egui::RichText;

use fsynclab::analysis::{RankedVariant, Ranking};
use fsynclab::report;

/// What the "vs next" cell's hover says.
fn vs_next_hover(v: &RankedVariant) -> Option<&'static str> {
    v.vs_next.as_ref().map(|n| {
        if n.distinct {
            "durable ops/s of this variant over the next one's, 95% interval from Welch's t \
             on the logarithms: the interval excludes 1, the order is real"
        } else {
            "durable ops/s of this variant over the next one's, 95% interval from Welch's t \
             on the logarithms: the interval includes 1, these two places could swap on \
             another day"
        }
    })
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
                ui.label(text(report::rank_ops_cell(v)));
                ui.label(text(report::rank_p99_cell(v)));
                ui.label(text(v.run_ids.len().to_string()))
                    .on_hover_text(format!("runs {:?}", v.run_ids));
                match vs_next_hover(v) {
                    Some(hover) => {
                        ui.label(report::rank_next_cell(v)).on_hover_text(hover);
                    }
                    None => {
                        ui.label("");
                    }
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
        ui.label(RichText::new(report::pg_table(r).trim_start()).monospace());
    }
    if !r.left_out.is_empty() {
        ui.label(
            RichText::new(format!("left out, not finished: runs {:?}", r.left_out)).color(warn),
        );
    }
}
