//! Sides of a comparison as users name them: a run id (`12`), several (`12,13,14`), an
//! experiment (`exp:3`), several (`exp:3-7`, `exp:3,5`), or a label (`nossd`, `label:nossd`).

use crate::analysis::{self, Comparison, PublishedWithheld, Ranking, SideInput};
use crate::metrics::RunResult;
use crate::spec;
use crate::store::{Store, StoreError};

use super::LabError;

/// A side of a comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SideSpec {
    /// These run ids.
    Runs(Vec<i64>),
    /// Every run of an experiment.
    Experiment(i64),
    /// Every run of several experiments (`exp:3-7`, `exp:3,5`: a preset's series makes one
    /// experiment per variant).
    Experiments(Vec<i64>),
    /// Every run with this label.
    Label(String),
}

impl SideSpec {
    /// Parses `12`, `12,13`, `run:12`, `exp:3`, `experiment:3`, `label:x` or any other text
    /// as a label.
    pub fn parse(text: &str) -> Result<SideSpec, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty side; give a run id, exp:N or a label".into());
        }
        if let Some(rest) = t
            .strip_prefix("exp:")
            .or_else(|| t.strip_prefix("experiment:"))
        {
            return parse_experiments(t, rest.trim());
        }
        if let Some(rest) = t.strip_prefix("label:") {
            if rest.trim().is_empty() {
                return Err(format!("'{t}': an empty label; write label:NAME"));
            }
            return Ok(SideSpec::Label(rest.to_string()));
        }
        let ids_text = t.strip_prefix("run:").unwrap_or(t);
        if ids_text
            .split(',')
            .all(|p| !p.trim().is_empty() && p.trim().chars().all(|c| c.is_ascii_digit()))
        {
            let ids = ids_text
                .split(',')
                .filter_map(|p| p.trim().parse().ok())
                .collect();
            return Ok(SideSpec::Runs(ids));
        }
        if t.starts_with("run:") {
            return Err(format!("'{t}': run ids are numbers (run:12 or 12,13,14)"));
        }
        Ok(SideSpec::Label(t.to_string()))
    }

    /// How the side is shown in tables and reports.
    pub fn describe(&self) -> String {
        match self {
            SideSpec::Runs(ids) if ids.len() == 1 => format!("run {}", ids[0]),
            SideSpec::Runs(ids) => format!(
                "runs {}",
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            SideSpec::Experiment(id) => format!("experiment {id}"),
            SideSpec::Experiments(ids) => match (ids.first(), ids.last()) {
                (Some(a), Some(b)) if ids.len() > 1 && b - a + 1 == ids.len() as i64 => {
                    format!("experiments {a}-{b}")
                }
                _ => format!(
                    "experiments {}",
                    ids.iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            },
            SideSpec::Label(l) => l.clone(),
        }
    }
}

/// Most experiments one side may name (`exp:1-1000000` would be a million queries).
pub const MAX_SIDE_EXPERIMENTS: usize = 1000;

/// `3` → one experiment; `3-7` or `3,5,7` → several.
fn parse_experiments(whole: &str, text: &str) -> Result<SideSpec, String> {
    let bad = || {
        format!(
            "'{whole}': the experiment id must be a number: exp:3, a range exp:3-7 or a list exp:3,5,7"
        )
    };
    let num = |p: &str| p.trim().parse::<i64>().map_err(|_| bad());
    if let Ok(id) = text.parse::<i64>() {
        return Ok(SideSpec::Experiment(id));
    }
    let ids: Vec<i64> = if let Some((a, b)) = text.split_once('-') {
        let (a, b) = (num(a)?, num(b)?);
        if b < a {
            return Err(format!(
                "'{whole}': the range runs backwards; write exp:{b}-{a}"
            ));
        }
        if (b - a) as u64 >= MAX_SIDE_EXPERIMENTS as u64 {
            return Err(format!(
                "'{whole}': at most {MAX_SIDE_EXPERIMENTS} experiments per side"
            ));
        }
        (a..=b).collect()
    } else {
        let ids = text.split(',').map(num).collect::<Result<Vec<_>, _>>()?;
        if ids.len() > MAX_SIDE_EXPERIMENTS {
            return Err(format!(
                "'{whole}': at most {MAX_SIDE_EXPERIMENTS} experiments per side"
            ));
        }
        ids
    };
    Ok(SideSpec::Experiments(ids))
}

/// Loads the runs of a side.
pub fn load_side(store: &Store, side: &SideSpec) -> Result<SideInput, LabError> {
    let ids = match side {
        SideSpec::Runs(ids) => ids.clone(),
        SideSpec::Experiment(id) => store.run_ids_in_experiment(*id)?,
        SideSpec::Experiments(ids) => {
            let mut all = Vec::new();
            for id in ids {
                all.extend(store.run_ids_in_experiment(*id)?);
            }
            all
        }
        SideSpec::Label(label) => store.run_ids_with_label(label)?,
    };
    let mut input = SideInput {
        name: side.describe(),
        runs: Vec::new(),
        unmeasured: Vec::new(),
        crash: Vec::new(),
    };
    let mut labels: Vec<Option<String>> = Vec::new();
    for id in ids {
        let stored = store.load_run(id)?;
        if !labels.contains(&stored.row.label) {
            labels.push(stored.row.label.clone());
        }
        if let Some(report) = store.crash_test(id)? {
            input.crash.push((id, report));
        }
        match stored.result {
            Some(result) => input.runs.push(result),
            None => input.unmeasured.push((id, stored.row.status)),
        }
    }
    if let (SideSpec::Runs(_) | SideSpec::Experiment(_), [Some(label)]) = (side, &labels[..]) {
        // The runs' own label says what the side is; the ids are shown beside it.
        input.name = label.clone();
    }
    Ok(input)
}

/// Ranks the variants of every run the selections name together (`compare --rank`).
pub fn rank_sides(store: &Store, sides: &[SideSpec]) -> Result<(Ranking, String), LabError> {
    let name = sides
        .iter()
        .map(SideSpec::describe)
        .collect::<Vec<_>>()
        .join(" + ");
    let mut runs: Vec<RunResult> = Vec::new();
    for side in sides {
        let input = load_side(store, side)?;
        for r in input.runs {
            if !runs.iter().any(|x| x.id == r.id) {
                runs.push(r);
            }
        }
    }
    let refs: Vec<&RunResult> = runs.iter().collect();
    Ok((analysis::rank(&name, &refs)?, name))
}

/// The preset every run of both sides came from (if one), with the scales other than 1
/// they ran at (the published figures are full scale).
fn common_preset(
    store: &Store,
    runs: &[&RunResult],
) -> Result<(Option<String>, Vec<f64>), StoreError> {
    let mut name: Option<String> = None;
    let mut scales: Vec<f64> = Vec::new();
    for r in runs {
        let row = store.load_run(r.id)?.row;
        if let Some(scale) = row.preset_scale.filter(|s| *s != 1.0)
            && !scales.contains(&scale)
        {
            scales.push(scale);
        }
        match (&name, row.preset) {
            (_, None) => return Ok((None, Vec::new())),
            (None, Some(p)) => name = Some(p),
            (Some(n), Some(p)) if *n != p => return Ok((None, Vec::new())),
            _ => {}
        }
    }
    scales.sort_by(f64::total_cmp);
    Ok((name, scales))
}

/// The first run (by id) whose workload is not a replay of `preset`: its edits.
fn first_edited(preset: &spec::Preset, runs: &[&RunResult]) -> Option<PublishedWithheld> {
    let mut runs = runs.to_vec();
    runs.sort_by_key(|r| r.id);
    runs.iter().find_map(|r| {
        let edits = preset.edits(&r.spec);
        (!edits.is_empty()).then(|| PublishedWithheld {
            preset: preset.name.clone(),
            run_id: r.id,
            edits,
        })
    })
}

/// Loads both sides and compares them, with the published figures of their common preset
/// when every run replays it (a run whose workload was edited from the preset leaves them
/// out, and the comparison says which run and what it changed).
pub fn compare_sides(
    store: &Store,
    baseline: &SideSpec,
    candidate: &SideSpec,
) -> Result<Comparison, LabError> {
    let mut base = load_side(store, baseline)?;
    let mut cand = load_side(store, candidate)?;
    let ids = |side: &analysis::SideInput| {
        let mut ids: Vec<i64> = side.runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    if !base.runs.is_empty() && ids(&base) == ids(&cand) {
        return Err(analysis::AnalysisError::SameRuns { ids: ids(&base) }.into());
    }
    if base.name == cand.name {
        // Two sides with one label (run 4 vs run 9, both "demo"): say which is which.
        base.name = format!("{} ({})", base.name, baseline.describe());
        cand.name = format!("{} ({})", cand.name, candidate.describe());
    }
    let all: Vec<&RunResult> = base.runs.iter().chain(&cand.runs).collect();
    let (preset, scales) = common_preset(store, &all)?;
    // A built-in preset only: a name stored with runs is never read back as a file's path.
    let preset =
        preset.and_then(|name| spec::builtin_presets().into_iter().find(|p| p.name == name));
    let withheld = preset
        .as_ref()
        .filter(|p| !p.published.is_empty())
        .and_then(|p| first_edited(p, &all));
    let published = match (&preset, &withheld) {
        (Some(p), None) => p.published.clone(),
        _ => Vec::new(),
    };
    let mut comparison = analysis::compare(&base, &cand, &published)?;
    if !comparison.published.is_empty() {
        comparison.preset_scales = scales;
    }
    comparison.published_withheld = withheld;
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_syntax() {
        assert_eq!(SideSpec::parse("12"), Ok(SideSpec::Runs(vec![12])));
        assert_eq!(
            SideSpec::parse("12,13, 14"),
            Ok(SideSpec::Runs(vec![12, 13, 14]))
        );
        assert_eq!(SideSpec::parse("run:7"), Ok(SideSpec::Runs(vec![7])));
        assert_eq!(SideSpec::parse("exp:3"), Ok(SideSpec::Experiment(3)));
        assert_eq!(
            SideSpec::parse("label:12"),
            Ok(SideSpec::Label("12".into()))
        );
        assert_eq!(
            SideSpec::parse("nossd"),
            Ok(SideSpec::Label("nossd".into()))
        );
        assert!(SideSpec::parse("exp:x").unwrap_err().contains("number"));
        assert_eq!(
            SideSpec::parse("exp:3-5"),
            Ok(SideSpec::Experiments(vec![3, 4, 5]))
        );
        assert_eq!(
            SideSpec::parse("exp:3,7"),
            Ok(SideSpec::Experiments(vec![3, 7]))
        );
        assert_eq!(
            SideSpec::parse("exp:3-5").unwrap().describe(),
            "experiments 3-5"
        );
        assert!(
            SideSpec::parse("exp:5-3")
                .unwrap_err()
                .contains("backwards")
        );
        assert!(
            SideSpec::parse("exp:1-99999999")
                .unwrap_err()
                .contains("at most")
        );
        assert!(SideSpec::parse("exp:3-x").is_err());
        assert!(
            SideSpec::parse("label:")
                .unwrap_err()
                .contains("empty label")
        );
        assert!(SideSpec::parse("run:x").is_err());
        assert!(SideSpec::parse(" ").is_err());
        assert_eq!(SideSpec::parse("12,13").unwrap().describe(), "runs 12,13");
    }
}
