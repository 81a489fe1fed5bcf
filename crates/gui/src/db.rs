//! The database worker: one thread owns the [`Store`] and answers requests over a
//! channel, so the UI thread never blocks on SQLite. Replies wake the UI with
//! `request_repaint`.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, OnceLock};

use super::task::spawn_named;
use fsynclab::analysis::{Comparison, Ranking};
use fsynclab::lab::{self, SideSpec};
use fsynclab::store::{Experiment, RunFilter, RunRow, Store, StoredRun};

/// What the UI asks of the database.
#[derive(Clone, Debug)]
pub enum DbRequest {
    /// Runs matching a filter, newest first.
    ListRuns(RunFilter),
    /// One run in full.
    LoadRun(i64),
    /// Experiments, newest first.
    ListExperiments,
    /// A comparison of two sides.
    Compare {
        /// Baseline.
        baseline: SideSpec,
        /// Candidate.
        candidate: SideSpec,
    },
    /// A ranking of the variants of the runs these selections name.
    Rank(Vec<SideSpec>),
    /// Set or clear a run's label.
    SetLabel {
        /// Runs to relabel.
        ids: Vec<i64>,
        /// New label (`None` clears it).
        label: Option<String>,
    },
    /// Delete runs.
    Delete(Vec<i64>),
}

/// The database's answer.
#[derive(Debug)]
pub enum DbReply {
    /// Rows for [`DbRequest::ListRuns`].
    Runs(Vec<RunRow>),
    /// A run for [`DbRequest::LoadRun`].
    Run(Box<StoredRun>),
    /// Experiments.
    Experiments(Vec<Experiment>),
    /// A comparison.
    Comparison(Box<Comparison>),
    /// A ranking, and how its selection is named.
    Ranking(Box<(Ranking, String)>),
    /// Runs were relabelled or deleted: listings should be refreshed.
    Changed,
    /// A request failed; the message names the problem and the fix.
    Error(String),
}

/// The UI's end of the database worker.
pub struct DbClient {
    tx: Sender<DbRequest>,
    rx: Receiver<DbReply>,
    repaint: Arc<OnceLock<egui::Context>>,
    path: PathBuf,
}

impl DbClient {
    /// Opens the database at `path` on a new worker thread. Opening errors, and a worker
    /// thread that cannot be started, arrive as a [`DbReply::Error`] (the window still
    /// opens and says what is wrong).
    pub fn spawn(path: PathBuf) -> Self {
        let (tx, requests) = mpsc::channel::<DbRequest>();
        let (replies, rx) = mpsc::channel::<DbReply>();
        let repaint: Arc<OnceLock<egui::Context>> = Arc::new(OnceLock::new());
        let wake = repaint.clone();
        let db_path = path.clone();
        let refused = replies.clone();
        let spawned = spawn_named("fsynclab-db", move || {
            let send = |reply: DbReply| {
                let _ = replies.send(reply);
                if let Some(ctx) = wake.get() {
                    ctx.request_repaint();
                }
            };
            // The history reads without a write lock (a read-only file works too);
            // edits open a writable connection when first asked for.
            let store = match Store::open_read_only(&db_path) {
                Ok(s) => s,
                Err(e) => {
                    send(DbReply::Error(crate::names::words(&e)));
                    return;
                }
            };
            // Directories left by killed runs go at every start of the window.
            if let Ok(cleaned) = lab::clean_run_dirs(&store) {
                let n = cleaned.removed.len();
                if n > 0 {
                    eprintln!(
                        "note: removed {n} {} left by runs that ended without cleaning up",
                        if n == 1 { "directory" } else { "directories" }
                    );
                }
                // Another user's database: say why nothing is cleaned, in the window's words.
                if let Some(foreign) = cleaned.foreign {
                    use fsynclab::spec::Worded;
                    send(DbReply::Error(format!(
                        "leftover run directories not removed: {}",
                        foreign.worded(&crate::names::GuiLabels)
                    )));
                }
            }
            let mut writer: Option<Store> = None;
            for request in requests {
                let reply = match request {
                    DbRequest::SetLabel { .. } | DbRequest::Delete(_) => {
                        match writable(&mut writer, &db_path) {
                            Ok(w) => answer(w, request),
                            Err(e) => DbReply::Error(crate::names::words(&e)),
                        }
                    }
                    _ => answer(&store, request),
                };
                send(reply);
            }
        });
        if let Err(e) = spawned {
            // The window opens and says why it has no history (as for a bad file).
            let _ = refused.send(DbReply::Error(format!(
                "cannot start the database thread: {e}; close other programs or raise the \
                 thread limit (ulimit -u), then reopen the window"
            )));
        }
        Self {
            tx,
            rx,
            repaint,
            path,
        }
    }

    /// Lets replies wake this egui context.
    pub fn set_context(&self, ctx: &egui::Context) {
        let _ = self.repaint.set(ctx.clone());
    }

    /// The database file.
    pub fn path(&self) -> &PathBuf {
        &self.path
    }

    /// Queues a request (never blocks).
    pub fn request(&self, request: DbRequest) {
        let _ = self.tx.send(request);
    }

    /// Replies received since the last call (never blocks).
    pub fn poll(&self) -> Vec<DbReply> {
        self.rx.try_iter().collect()
    }
}

/// The worker's writable connection, opened on first use.
fn writable<'a>(
    writer: &'a mut Option<Store>,
    path: &std::path::Path,
) -> Result<&'a Store, fsynclab::store::StoreError> {
    let store = match writer.take() {
        Some(store) => store,
        None => Store::open(path)?,
    };
    Ok(writer.insert(store))
}

fn answer(store: &Store, request: DbRequest) -> DbReply {
    let result = match request {
        DbRequest::ListRuns(filter) => store
            .list_runs(&filter)
            .map(DbReply::Runs)
            .map_err(|e| e.to_string()),
        DbRequest::LoadRun(id) => store
            .load_run(id)
            .map(|r| DbReply::Run(Box::new(r)))
            .map_err(|e| e.to_string()),
        DbRequest::ListExperiments => store
            .list_experiments()
            .map(DbReply::Experiments)
            .map_err(|e| e.to_string()),
        DbRequest::Compare {
            baseline,
            candidate,
        } => lab::compare_sides(store, &baseline, &candidate)
            .map(|c| DbReply::Comparison(Box::new(c)))
            .map_err(|e| e.to_string()),
        DbRequest::Rank(sides) => lab::rank_sides(store, &sides)
            .map(|r| DbReply::Ranking(Box::new(r)))
            .map_err(|e| e.to_string()),
        DbRequest::SetLabel { ids, label } => ids
            .iter()
            .try_for_each(|id| store.set_label(*id, label.as_deref()))
            .map(|()| DbReply::Changed)
            .map_err(|e| e.to_string()),
        DbRequest::Delete(ids) => ids
            .iter()
            .try_for_each(|id| store.delete_run(*id))
            .map(|()| DbReply::Changed)
            .map_err(|e| e.to_string()),
    };
    result.unwrap_or_else(DbReply::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_thread_that_cannot_start_is_reported_not_ignored() {
        let dir = tempfile::tempdir().unwrap();
        super::super::task::refuse_spawns(true);
        let db = DbClient::spawn(dir.path().join("runs.sqlite"));
        super::super::task::refuse_spawns(false);
        db.request(DbRequest::ListExperiments);
        let replies = db.poll();
        assert!(
            matches!(
                replies.as_slice(),
                [DbReply::Error(e)] if e.contains("cannot start the database thread")
            ),
            "{replies:?}"
        );
    }
}
