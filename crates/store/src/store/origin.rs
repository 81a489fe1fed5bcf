//! Where a run's workload came from, when it was not the form, a preset or flags: a fio job
//! file the engine ran, or a result fio measured that was imported (issue 12).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What produced a run's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OriginKind {
    /// fsynclab's engine ran a fio job file (`run --fio-job`): the figures are fsynclab's.
    #[default]
    FioJob,
    /// fio measured and fsynclab imported fio's JSON output (`import`, `fleet`).
    FioImport,
}

impl OriginKind {
    /// The stored name (`fio-job`, `fio-import`).
    pub fn as_str(self) -> &'static str {
        match self {
            OriginKind::FioJob => "fio-job",
            OriginKind::FioImport => "fio-import",
        }
    }
}

/// The origin of a run, stored as `origin_json` (`None` on runs made from the form, a preset
/// or flags, and on runs stored before schema 6).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOrigin {
    /// What produced the figures.
    pub kind: OriginKind,
    /// The file it was read from, as the user named it.
    pub file: Option<String>,
    /// The job's section name in that file (`writers`).
    pub job: Option<String>,
    /// The job file's text exactly as read (a fio job file run by the engine; the job file
    /// fleet sent to fio).
    pub job_text: Option<String>,
    /// The job's options as fio reported them in its JSON (`"bs": "4k"`), for imports.
    pub job_options: BTreeMap<String, String>,
    /// The measuring tool's version as it reported it (`fio-3.33`), for imports.
    pub tool_version: Option<String>,
    /// The host fio ran on, as it reported it (client mode: the server), for imports.
    pub hostname: Option<String>,
}

impl super::Store {
    /// Ids of imported runs (origin `fio-import`) with this start time, job and host: what
    /// an import of the same fio output finds already stored.
    pub fn find_imported(
        &self,
        started_at_ms: i64,
        job: &str,
        hostname: Option<&str>,
    ) -> Result<Vec<i64>, super::StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM runs WHERE started_at_ms = ?1 AND origin_json IS NOT NULL \
             AND json_extract(origin_json, '$.kind') = 'fio-import' \
             AND json_extract(origin_json, '$.job') = ?2 \
             AND json_extract(origin_json, '$.hostname') IS ?3 ORDER BY id",
        )?;
        let ids = stmt.query_map(rusqlite::params![started_at_ms, job, hostname], |row| {
            row.get(0)
        })?;
        Ok(ids.collect::<Result<_, _>>()?)
    }
}
