//! Merging a checked [`Bundle`] into the store (see [`super::bundle`]): one transaction,
//! every value type-checked against its column, runs matched by uuid, experiments kept
//! together, the exporting machine's columns cleared, each new run loaded back.

use std::collections::HashMap;

use crate::spec::MAX_TEXT_BYTES;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::bundle::{
    Bundle, BundleError, CHILD_TABLES, Column, LOCAL_RUN_COLUMNS, MergeCounts, column_list,
    columns, damaged, placeholders,
};
use super::bundle_values::{MAX_TARGET_BYTES, checked, impossible_workload, sanitise};
use super::{INTERRUPTED_MESSAGE, Store, StoreError};

/// Reads the rows of `table` with `filter` (`?1` = `key`) from the bundle, every value
/// checked; `skip` names columns not read (ids).
fn read_rows(
    bundle: &Connection,
    cols: &[Column],
    table: &'static str,
    filter: &str,
    key: i64,
    run: i64,
) -> Result<Vec<Vec<Value>>, BundleError> {
    let names = column_list(cols);
    let mut stmt = bundle.prepare(&format!("SELECT {names} FROM {table} WHERE {filter}"))?;
    let failed = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::TooBig) => BundleError::TooBig { table, run },
        _ => damaged(&e.to_string()),
    };
    let mut rows = stmt.query([key]).map_err(failed)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(failed)? {
        let mut values = Vec::with_capacity(cols.len());
        for (i, col) in cols.iter().enumerate() {
            let value: Value = row.get(i).map_err(failed)?;
            values.push(checked(table, col, run, value)?);
        }
        out.push(values);
    }
    Ok(out)
}

/// A uuid as stored: canonical lowercase hyphenated, or a [`BundleError::BadValue`].
fn canonical_uuid(
    table: &'static str,
    run: i64,
    value: Option<String>,
) -> Result<String, BundleError> {
    let bad = |problem: String| BundleError::BadValue {
        table,
        column: "uuid".into(),
        run,
        problem,
    };
    let text = value.ok_or_else(|| bad("is missing".into()))?;
    let parsed = uuid::Uuid::parse_str(&text).map_err(|e| bad(format!("is not a UUID ({e})")))?;
    Ok(parsed.hyphenated().to_string())
}

/// The columns of `table` without those named in `skip`.
fn columns_without(conn: &Connection, table: &str, skip: &[&str]) -> rusqlite::Result<Vec<Column>> {
    Ok(columns(conn, table)?
        .into_iter()
        .filter(|c| !skip.contains(&c.name.as_str()))
        .collect())
}

impl Store {
    /// Merges `bundle` into this database in one transaction (see the module
    /// documentation): new runs get new ids; runs already present (same uuid) are skipped.
    /// `check_advice` is given each stored advice's JSON, its run ids already this
    /// database's, and refuses what its reader could not show (its problem in words).
    pub fn merge_bundle(
        &self,
        bundle: &Bundle,
        check_advice: AdviceCheck<'_>,
    ) -> Result<MergeCounts, BundleError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let counts = self.merge_in(&tx, bundle, check_advice)?;
        tx.commit().map_err(StoreError::from)?;
        Ok(counts)
    }

    fn merge_in(
        &self,
        tx: &Transaction<'_>,
        bundle: &Bundle,
        check_advice: AdviceCheck<'_>,
    ) -> Result<MergeCounts, BundleError> {
        let src = &bundle.conn;
        let run_cols = columns_without(tx, "runs", &["id"])?;
        let mut experiments: HashMap<i64, i64> = HashMap::new();
        // Each bundle run's id here (new or already present), for the advice's run ids.
        let mut run_ids: HashMap<i64, i64> = HashMap::new();
        let mut counts = MergeCounts::default();
        for run in bundle.run_ids()? {
            let uuid: Option<String> = src
                .query_row("SELECT uuid FROM runs WHERE id = ?1", [run], |r| r.get(0))
                .map_err(|_| BundleError::BadValue {
                    table: "runs",
                    column: "uuid".into(),
                    run,
                    problem: "is not text".into(),
                })?;
            let uuid = canonical_uuid("runs", run, uuid)?;
            let present: Option<i64> = tx
                .query_row("SELECT id FROM runs WHERE uuid = ?1", [&uuid], |r| r.get(0))
                .optional()?;
            if let Some(local) = present {
                counts.already_present += 1;
                run_ids.insert(run, local);
                continue;
            }
            let mut values = read_rows(src, &run_cols, "runs", "id = ?1", run, run)?
                .pop()
                .ok_or_else(|| damaged("a run vanished while reading"))?;
            let cleaned = self.localize_run(
                tx,
                src,
                &run_cols,
                &mut values,
                run,
                &uuid,
                &mut experiments,
                &mut counts,
            )?;
            tx.execute(
                &format!(
                    "INSERT INTO runs ({}) VALUES ({})",
                    column_list(&run_cols),
                    placeholders(run_cols.len())
                ),
                rusqlite::params_from_iter(values),
            )?;
            let id = tx.last_insert_rowid();
            counts
                .sanitised
                .extend(cleaned.into_iter().map(|field| (id, field)));
            for table in CHILD_TABLES {
                let cols = columns_without(tx, table, &["run_id"])?;
                let names = column_list(&cols);
                let mut insert = tx.prepare(&format!(
                    "INSERT INTO {table} (run_id, {names}) VALUES ({})",
                    placeholders(cols.len() + 1)
                ))?;
                for mut row in read_rows(src, &cols, table, "run_id = ?1", run, run)? {
                    if *table == "run_tags" {
                        for (col, value) in cols.iter().zip(row.iter_mut()) {
                            if col.name == "tag" && sanitise(value, MAX_TEXT_BYTES) {
                                counts.sanitised.push((id, "tag"));
                            }
                        }
                    }
                    let mut params = vec![Value::Integer(id)];
                    params.extend(row);
                    insert
                        .execute(rusqlite::params_from_iter(params))
                        .map_err(|e| bad_run(run, StoreError::from(e)))?;
                }
            }
            let loaded = self.load_run(id).map_err(|e| bad_run(run, e))?;
            if let Some(problem) = impossible_workload(&loaded.spec) {
                return Err(BundleError::BadValue {
                    table: "runs",
                    column: "spec_json".into(),
                    run,
                    problem,
                });
            }
            counts.new_ids.push(id);
            run_ids.insert(run, id);
        }
        let ids = AdviceIds {
            runs: &run_ids,
            check: check_advice,
        };
        merge_advice(tx, src, &mut experiments, &mut counts, &ids)?;
        Ok(counts)
    }

    /// Rewrites a bundle run's row for this database: its experiment mapped (created when
    /// new), its uuid canonical, the exporting machine's columns cleared, `running` made
    /// `interrupted`, its label and target held to the rules of `run --label` (returned:
    /// the fields it had to change).
    #[allow(clippy::too_many_arguments)]
    fn localize_run(
        &self,
        tx: &Transaction<'_>,
        src: &Connection,
        cols: &[Column],
        values: &mut [Value],
        run: i64,
        uuid: &str,
        experiments: &mut HashMap<i64, i64>,
        counts: &mut MergeCounts,
    ) -> Result<Vec<&'static str>, BundleError> {
        let at = |name: &str| cols.iter().position(|c| c.name == name);
        let mut status_running = false;
        let mut cleaned = Vec::new();
        for (i, col) in cols.iter().enumerate() {
            match col.name.as_str() {
                "label" if sanitise(&mut values[i], MAX_TEXT_BYTES) => cleaned.push("label"),
                "target" if sanitise(&mut values[i], MAX_TARGET_BYTES) => cleaned.push("target"),
                "preset" if sanitise(&mut values[i], crate::spec::MAX_PRESET_NAME_CHARS) => {
                    cleaned.push("preset")
                }
                "uuid" => values[i] = Value::Text(uuid.to_string()),
                "experiment_id" => {
                    if let Value::Integer(bundle_exp) = values[i] {
                        values[i] = match experiments.get(&bundle_exp) {
                            Some(&local) => Value::Integer(local),
                            None => match local_experiment(tx, src, bundle_exp, run, counts)? {
                                Some(local) => {
                                    experiments.insert(bundle_exp, local);
                                    Value::Integer(local)
                                }
                                None => Value::Null,
                            },
                        };
                    }
                }
                "status" => status_running = values[i] == Value::Text("running".into()),
                name if LOCAL_RUN_COLUMNS.contains(&name) => values[i] = Value::Null,
                _ => {}
            }
        }
        if status_running {
            if let Some(i) = at("status") {
                values[i] = Value::Text("interrupted".into());
            }
            if let Some(i) = at("error")
                && values[i] == Value::Null
            {
                values[i] = Value::Text(INTERRUPTED_MESSAGE.into());
                if let Some(code) = at("error_code") {
                    values[code] = Value::Text("interrupted".into());
                }
            }
        }
        Ok(cleaned)
    }
}

/// Checks a stored advice's JSON before it is stored (see [`Store::merge_bundle`]).
pub type AdviceCheck<'a> = &'a dyn Fn(&serde_json::Value) -> Result<(), String>;

/// What an advice's JSON is rewritten and checked with.
struct AdviceIds<'a> {
    /// Bundle run id → this database's.
    runs: &'a HashMap<i64, i64>,
    check: AdviceCheck<'a>,
}

/// Rewrites every `run_id` and `run_ids` in `value` from the bundle's run ids to this
/// database's; the first id the bundle does not hold is the error.
fn localize_run_ids(value: &mut serde_json::Value, runs: &HashMap<i64, i64>) -> Result<(), i64> {
    use serde_json::Value as J;
    let local = |v: &mut J| match v.as_i64() {
        Some(id) => match runs.get(&id) {
            Some(&l) => {
                *v = J::from(l);
                Ok(())
            }
            None => Err(id),
        },
        None if v.is_null() => Ok(()),
        None => Err(-1),
    };
    match value {
        J::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v) {
                    ("run_id", v) => local(v)?,
                    ("run_ids", J::Array(ids)) => ids.iter_mut().try_for_each(local)?,
                    (_, v) => localize_run_ids(v, runs)?,
                }
            }
            Ok(())
        }
        J::Array(items) => items.iter_mut().try_for_each(|v| localize_run_ids(v, runs)),
        _ => Ok(()),
    }
}

/// Merges the bundle's stored advice (issue 35): matched by uuid (one already here is
/// skipped), its experiment mapped as its runs' was, its target held to the rules of a run's,
/// its JSON columns required to be JSON, the advice's run ids made this database's (every
/// run it cites must be in the bundle) and the advice checked by `mapping.check`.
fn merge_advice(
    tx: &Transaction<'_>,
    src: &Connection,
    experiments: &mut HashMap<i64, i64>,
    counts: &mut MergeCounts,
    mapping: &AdviceIds<'_>,
) -> Result<(), BundleError> {
    let cols = columns_without(tx, "advice", &["id"])?;
    let ids: Vec<i64> = {
        let mut stmt = src.prepare("SELECT id FROM advice ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let at = |name: &str| cols.iter().position(|c| c.name == name);
    let bad = |column: &str, advice: i64, problem: &str| BundleError::BadValue {
        table: "advice",
        column: column.into(),
        run: advice,
        problem: problem.into(),
    };
    for advice in ids {
        let Some(mut values) = read_rows(src, &cols, "advice", "id = ?1", advice, advice)?.pop()
        else {
            continue;
        };
        let uuid_at = at("uuid").ok_or_else(|| damaged("advice has no uuid column"))?;
        let uuid = match &values[uuid_at] {
            Value::Text(t) => Some(t.clone()),
            _ => None,
        };
        let uuid = canonical_uuid("advice", advice, uuid)?;
        let present: Option<i64> = tx
            .query_row("SELECT id FROM advice WHERE uuid = ?1", [&uuid], |r| {
                r.get(0)
            })
            .optional()?;
        if present.is_some() {
            continue;
        }
        values[uuid_at] = Value::Text(uuid);
        for (i, col) in cols.iter().enumerate() {
            match col.name.as_str() {
                "target" => {
                    sanitise(&mut values[i], MAX_TARGET_BYTES);
                }
                "fs_type" => {
                    sanitise(&mut values[i], MAX_TEXT_BYTES);
                }
                "inputs_json" => {
                    let valid: bool =
                        tx.query_row("SELECT json_valid(?1)", [&values[i]], |r| r.get(0))?;
                    if !valid {
                        return Err(bad(&col.name, advice, "is not JSON"));
                    }
                }
                "advice_json" => {
                    let Value::Text(text) = &values[i] else {
                        return Err(bad(&col.name, advice, "is not JSON text"));
                    };
                    let mut json: serde_json::Value = serde_json::from_str(text)
                        .map_err(|_| bad(&col.name, advice, "is not JSON"))?;
                    localize_run_ids(&mut json, mapping.runs).map_err(|id| {
                        let problem = match id {
                            -1 => "holds a run id that is not a whole number".to_string(),
                            id => format!("cites run {id}, which the bundle does not hold"),
                        };
                        bad(&col.name, advice, &problem)
                    })?;
                    (mapping.check)(&json).map_err(|why| bad(&col.name, advice, &why))?;
                    values[i] = Value::Text(json.to_string());
                }
                "experiment_id" => {
                    if let Value::Integer(bundle_exp) = values[i] {
                        values[i] = match experiments.get(&bundle_exp) {
                            Some(&local) => Value::Integer(local),
                            None => match local_experiment(tx, src, bundle_exp, advice, counts)? {
                                Some(local) => {
                                    experiments.insert(bundle_exp, local);
                                    Value::Integer(local)
                                }
                                None => Value::Null,
                            },
                        };
                    }
                }
                _ => {}
            }
        }
        tx.execute(
            &format!(
                "INSERT INTO advice ({}) VALUES ({})",
                column_list(&cols),
                placeholders(cols.len())
            ),
            rusqlite::params_from_iter(values),
        )?;
        counts.new_advice.push(tx.last_insert_rowid());
    }
    Ok(())
}

/// The local id of bundle experiment `bundle_exp` (matched by uuid, created when new);
/// `None` when the bundle's run points at an experiment the bundle does not hold.
fn local_experiment(
    tx: &Transaction<'_>,
    src: &Connection,
    bundle_exp: i64,
    run: i64,
    counts: &mut MergeCounts,
) -> Result<Option<i64>, BundleError> {
    let cols = columns_without(tx, "experiments", &["id"])?;
    let Some(mut values) = read_rows(src, &cols, "experiments", "id = ?1", bundle_exp, run)?.pop()
    else {
        return Ok(None);
    };
    let uuid_at = cols.iter().position(|c| c.name == "uuid").unwrap_or(0);
    let uuid = match &values[uuid_at] {
        Value::Text(t) => Some(t.clone()),
        _ => None,
    };
    let uuid = canonical_uuid("experiments", run, uuid)?;
    let found: Option<i64> = tx
        .query_row("SELECT id FROM experiments WHERE uuid = ?1", [&uuid], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = found {
        return Ok(Some(id));
    }
    values[uuid_at] = Value::Text(uuid);
    // The name is shown where runs are listed: control characters escaped, as a label's.
    if let Some(i) = cols.iter().position(|c| c.name == "name") {
        sanitise(&mut values[i], MAX_TEXT_BYTES);
    }
    tx.execute(
        &format!(
            "INSERT INTO experiments ({}) VALUES ({})",
            column_list(&cols),
            placeholders(cols.len())
        ),
        rusqlite::params_from_iter(values),
    )?;
    counts.new_experiments += 1;
    Ok(Some(tx.last_insert_rowid()))
}

fn bad_run(run: i64, source: StoreError) -> BundleError {
    BundleError::BadRun {
        run,
        source: Box::new(source),
    }
}
