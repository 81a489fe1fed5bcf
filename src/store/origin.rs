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
