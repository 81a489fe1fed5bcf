//! Stored advice (issue 35): the commit advisor's answer kept beside the experiment of its
//! runs, and the stored crash tests' verdicts it reads per strategy and filesystem type.
//! The store keeps the answer as JSON text; the analysis crate owns its shape.

use super::{Store, StoreError, now_ms};

/// An answer to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAdvice<'a> {
    /// The experiment holding the advisor's runs.
    pub experiment_id: Option<i64>,
    /// The directory measured.
    pub target: &'a str,
    /// Its filesystem type.
    pub fs_type: Option<&'a str>,
    /// What was asked, as JSON.
    pub inputs_json: &'a str,
    /// The answer, as JSON.
    pub advice_json: &'a str,
}

/// A stored answer.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredAdvice {
    /// Its id.
    pub id: i64,
    /// When it was stored, ms since the epoch.
    pub created_at_ms: i64,
    /// The experiment of its runs (`None` once that experiment was deleted).
    pub experiment_id: Option<i64>,
    /// The directory measured.
    pub target: String,
    /// Its filesystem type.
    pub fs_type: Option<String>,
    /// What was asked, as JSON.
    pub inputs_json: String,
    /// The answer, as JSON.
    pub advice_json: String,
}

/// One crash-tested group-commit run: what a strategy's durability verdict is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct CrashVerdictRow {
    /// The run.
    pub run_id: i64,
    /// Its strategy as stored (`leader`, `delay:500`...).
    pub strategy: String,
    /// Acknowledged records the crash test judged.
    pub acknowledged: u64,
    /// Acknowledged records lost, torn or found at an older version in some crash state.
    pub lost: u64,
}

impl Store {
    /// Stores an answer and returns its id.
    pub fn save_advice(&self, advice: &NewAdvice<'_>) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO advice (created_at_ms, experiment_id, target, fs_type, inputs_json, \
             advice_json, uuid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            (
                now_ms(),
                advice.experiment_id,
                advice.target,
                advice.fs_type,
                advice.inputs_json,
                advice.advice_json,
                super::runs::new_uuid(),
            ),
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Deletes experiment `id` if no run belongs to it (an advice refused before its first
    /// run was stored); whether it was deleted.
    pub fn delete_empty_experiment(&self, id: i64) -> Result<bool, StoreError> {
        let n = self.conn.execute(
            "DELETE FROM experiments WHERE id = ?1 \
             AND NOT EXISTS (SELECT 1 FROM runs WHERE experiment_id = ?1)",
            [id],
        )?;
        Ok(n > 0)
    }

    /// The stored answer `id`.
    pub fn advice(&self, id: i64) -> Result<StoredAdvice, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, created_at_ms, experiment_id, target, fs_type, inputs_json, advice_json \
             FROM advice WHERE id = ?1",
        )?;
        let mut rows = stmt.query_map([id], read_row)?;
        match rows.next() {
            Some(row) => Ok(row?),
            None => Err(StoreError::AdviceNotFound { id }),
        }
    }

    /// Every stored answer, newest first.
    pub fn list_advice(&self) -> Result<Vec<StoredAdvice>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, created_at_ms, experiment_id, target, fs_type, inputs_json, advice_json \
             FROM advice ORDER BY created_at_ms DESC, id DESC",
        )?;
        let rows = stmt.query_map([], read_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The crash-tested runs of `kind` with a strategy (grouplog) on a filesystem of type
    /// `fs_type`, oldest first. A run whose findings do not read is left out.
    pub fn crash_verdicts(
        &self,
        kind: &str,
        fs_type: &str,
    ) -> Result<Vec<CrashVerdictRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, json_extract(spec_json, '$.grouplog.strategy'), \
             json_extract(crash_test_json, '$.acknowledged'), \
             json_extract(crash_test_json, '$.lost') + json_extract(crash_test_json, '$.torn') \
             + json_extract(crash_test_json, '$.stale') \
             FROM runs WHERE kind = ?1 AND fs_type = ?2 AND crash_test_json IS NOT NULL \
             AND json_valid(crash_test_json) ORDER BY id",
        )?;
        let rows = stmt.query_map((kind, fs_type), |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, Option<String>>(1)?,
                row.get::<_, Option<i64>>(2)?,
                row.get::<_, Option<i64>>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            if let (run_id, Some(strategy), Some(acknowledged), Some(lost)) = row? {
                out.push(CrashVerdictRow {
                    run_id,
                    strategy,
                    acknowledged: u64::try_from(acknowledged).unwrap_or(0),
                    lost: u64::try_from(lost).unwrap_or(0),
                });
            }
        }
        Ok(out)
    }
}

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredAdvice> {
    Ok(StoredAdvice {
        id: row.get(0)?,
        created_at_ms: row.get(1)?,
        experiment_id: row.get(2)?,
        target: row.get(3)?,
        fs_type: row.get(4)?,
        inputs_json: row.get(5)?,
        advice_json: row.get(6)?,
    })
}
