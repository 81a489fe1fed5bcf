//! What a run records while it goes: interval samples appended at most every second with
//! the counts so far, the private directory it is about to create, and, after a kill, what
//! `fsynclab clean` may remove. Writes that meet another process's lock wait and retry.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::open::is_busy;
use super::{Store, StoreError, now_ms, to_int, to_opt_int};
use crate::metrics::IntervalSample;

/// How long a write that finds the database locked by another process keeps retrying
/// (each try already waits the 5 s busy timeout) before giving up.
pub const WRITE_PATIENCE: Duration = Duration::from_secs(120);

/// How far a run got, as streamed while it ran (sums of the stored intervals).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunProgress {
    /// Wall-clock start of the timed part, ms since the Unix epoch, when known.
    pub started_at_ms: Option<i64>,
    /// Wall-clock time of the last save, ms since the Unix epoch.
    pub at_ms: i64,
    /// End of the last stored interval, ms into the timed part.
    pub t_ms: u64,
    /// Writes so far.
    pub writes: u64,
    /// Sync calls so far.
    pub syncs: u64,
    /// Bytes so far.
    pub bytes: u64,
}

impl RunProgress {
    /// Seconds from the start of the timed part to the last save (the end of the last
    /// stored interval when the start is unknown).
    pub fn elapsed_s(&self) -> f64 {
        match self.started_at_ms {
            Some(start) if self.at_ms >= start => (self.at_ms - start) as f64 / 1000.0,
            _ => self.t_ms as f64 / 1000.0,
        }
    }

    /// Adds one interval sample to the totals.
    pub fn add(&mut self, sample: &IntervalSample) {
        self.t_ms = self.t_ms.max(sample.t_ms);
        self.writes = self.writes.saturating_add(sample.writes);
        self.syncs = self.syncs.saturating_add(sample.syncs);
        self.bytes = self.bytes.saturating_add(sample.bytes);
    }
}

/// A run's private directory as recorded before it was created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunDir {
    /// The run.
    pub run_id: i64,
    /// The target directory it was created in.
    pub target: PathBuf,
    /// Its name inside the target (`fsynclab-<id>` or `fsynclab-<id>-<n>`).
    pub name: String,
    /// Device and inode of the target when the run began.
    pub target_dev: u64,
    /// See `target_dev`.
    pub target_ino: u64,
    /// The files were kept on purpose (`--keep`): never cleaned.
    pub keep_files: bool,
    /// Device and inode of the run directory itself, once the engine made it (`None`
    /// for a run killed before that was recorded).
    pub dir_dev_ino: Option<(u64, u64)>,
}

impl RunDir {
    /// The directory's path.
    pub fn path(&self) -> PathBuf {
        self.target.join(&self.name)
    }

    /// Whether the target is still the directory the run recorded (same device and inode,
    /// not a link), so that nothing is removed from a directory put in its place.
    pub fn target_unchanged(&self) -> bool {
        std::fs::symlink_metadata(&self.target)
            .is_ok_and(|m| m.is_dir() && m.dev() == self.target_dev && m.ino() == self.target_ino)
    }
}

/// What `fsynclab clean` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CleanOutcome {
    /// Directories removed.
    pub removed: Vec<PathBuf>,
    /// Directories left, each with the reason (worded by the front ends).
    pub skipped: Vec<(PathBuf, crate::cleanup::CleanRefusal)>,
    /// Set when nothing was cleaned because the database belongs to another user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign: Option<ForeignDatabase>,
}

/// The database belongs to another user (root cleaning with a user's database): its
/// records are not trusted to name directories to remove, since they could name any
/// `fsynclab-<id>` directory root made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ForeignDatabase {
    /// The database file's owner.
    pub owner_uid: u32,
    /// This process's effective user.
    pub uid: u32,
}

impl crate::spec::Worded for ForeignDatabase {
    fn worded(&self, names: &dyn crate::spec::SettingNames) -> String {
        format!(
            "the database is owned by uid {}, not by this user (uid {}): its records are not \
             trusted to name directories to remove; {}",
            self.owner_uid,
            self.uid,
            names.action(crate::spec::Action::CleanAsOwner)
        )
    }
}

/// A recorded directory with what tells whether its run's owner is gone.
type RecordedDir = (RunDir, Owner);

/// The owner columns of a run.
struct Owner {
    interrupted: bool,
    pid: Option<i64>,
    start_ticks: Option<i64>,
}

impl Store {
    /// Runs `write` until it does not meet another process's lock, for up to
    /// [`WRITE_PATIENCE`]; the lock-wait notice is called once when waiting starts.
    pub(super) fn retry_locked<T>(
        &self,
        mut write: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let start = Instant::now();
        let mut told = false;
        loop {
            match write() {
                Err(StoreError::Sqlite(e)) if is_busy(&e) => {
                    if start.elapsed() >= WRITE_PATIENCE {
                        return Err(StoreError::LockedTooLong {
                            path: self.path.clone().unwrap_or_default(),
                            waited_s: start.elapsed().as_secs(),
                        });
                    }
                    if !told {
                        told = true;
                        if let Some(notice) = &self.lock_wait {
                            (notice.0)();
                        }
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                other => return other,
            }
        }
    }

    /// Appends interval samples `first_idx..` of a running run and its progress so far,
    /// in one transaction (the run's persister calls this at most every second). Samples
    /// already stored under the same index are replaced, so a retry never duplicates.
    pub fn append_intervals(
        &self,
        run_id: i64,
        first_idx: usize,
        samples: &[IntervalSample],
        progress: &RunProgress,
    ) -> Result<(), StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO intervals (run_id, idx, t_ms, dur_ms, writes, syncs, bytes, \
                 write_p50_ns, write_p99_ns, sync_p50_ns, sync_p99_ns, device_flushes, \
                 kernel_commits, kernel_flushes, inflight) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            )?;
            for (offset, sample) in samples.iter().enumerate() {
                let idx = u64::try_from(first_idx + offset).unwrap_or(u64::MAX);
                insert.execute(super::runs::interval_params(run_id, idx, sample)?)?;
            }
        }
        tx.execute(
            "UPDATE runs SET progress_at_ms = ?2, progress_t_ms = ?3, progress_writes = ?4, \
             progress_syncs = ?5, progress_bytes = ?6 WHERE id = ?1",
            params![
                run_id,
                progress.at_ms,
                to_int("progress t_ms", progress.t_ms)?,
                to_int("progress writes", progress.writes)?,
                to_int("progress syncs", progress.syncs)?,
                to_int("progress bytes", progress.bytes)?,
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Records the start of the timed part (ms since the Unix epoch) while the run goes.
    pub fn set_started(&self, run_id: i64, started_at_ms: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET started_at_ms = ?2 WHERE id = ?1 AND wall_ns IS NULL",
            (run_id, started_at_ms),
        )?;
        Ok(())
    }

    /// Records the device and inode of run `run_id`'s directory as the engine made it
    /// (from the descriptor it holds, the engine's `EngineEvent::RunDirCreated`), so
    /// `fsynclab clean` never mistakes another directory renamed to its name for it.
    pub fn set_run_dir_identity(&self, run_id: i64, dev: u64, ino: u64) -> Result<(), StoreError> {
        self.retry_locked(|| {
            self.conn.execute(
                "UPDATE runs SET run_dir_dev = ?2, run_dir_ino = ?3 WHERE id = ?1",
                params![
                    run_id,
                    to_opt_int("run directory device", Some(dev))?,
                    to_opt_int("run directory inode", Some(ino))?,
                ],
            )?;
            Ok(())
        })
    }

    /// The progress streamed for a run, `None` when nothing was streamed.
    pub fn run_progress(&self, run_id: i64) -> Result<Option<RunProgress>, StoreError> {
        type Columns = (
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let row: Option<(Columns, Option<i64>)> = self
            .conn
            .query_row(
                "SELECT progress_at_ms, progress_t_ms, progress_writes, progress_syncs, \
                 progress_bytes, started_at_ms FROM runs WHERE id = ?1",
                [run_id],
                |r| {
                    Ok((
                        (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
                        r.get(5)?,
                    ))
                },
            )
            .optional()?;
        let Some(((Some(at_ms), t_ms, writes, syncs, bytes), started_at_ms)) = row else {
            return Ok(None);
        };
        let count = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok()).unwrap_or(0);
        Ok(Some(RunProgress {
            started_at_ms,
            at_ms,
            t_ms: count(t_ms),
            writes: count(writes),
            syncs: count(syncs),
            bytes: count(bytes),
        }))
    }

    /// Chooses and records run `run_id`'s directory in `target` before anything creates
    /// it: `fsynclab-<id>`, or `fsynclab-<id>-<n>` when that name is taken (checked with
    /// `lstat`, so a link counts as taken). Returns the name.
    pub fn plan_run_dir(
        &self,
        run_id: i64,
        target: &Path,
        keep_files: bool,
    ) -> Result<String, StoreError> {
        let meta = std::fs::symlink_metadata(target).map_err(|source| StoreError::RunDir {
            path: target.to_path_buf(),
            source,
        })?;
        let name = (1..=1000)
            .map(|n| match n {
                1 => format!("fsynclab-{run_id}"),
                n => format!("fsynclab-{run_id}-{n}"),
            })
            .find(|name| std::fs::symlink_metadata(target.join(name)).is_err())
            .unwrap_or_else(|| format!("fsynclab-{run_id}-1001"));
        self.retry_locked(|| {
            self.conn.execute(
                "UPDATE runs SET run_dir_name = ?2, target_dev = ?3, target_ino = ?4, \
                 keep_files = ?5 WHERE id = ?1",
                params![
                    run_id,
                    name,
                    to_opt_int("target device", Some(meta.dev()))?,
                    to_opt_int("target inode", Some(meta.ino()))?,
                    keep_files,
                ],
            )?;
            Ok(())
        })?;
        Ok(name)
    }

    /// Records that run `run_id`'s directory is gone, so nothing removes it twice.
    pub fn mark_dir_removed(&self, run_id: i64) -> Result<(), StoreError> {
        self.retry_locked(|| {
            self.conn.execute(
                "UPDATE runs SET dir_removed_at_ms = ?2 WHERE id = ?1 AND dir_removed_at_ms IS NULL",
                (run_id, now_ms()),
            )?;
            Ok(())
        })
    }

    /// Run `run_id`'s directory while it may still exist (recorded, not known removed).
    pub fn run_dir(&self, run_id: i64) -> Result<Option<RunDir>, StoreError> {
        Ok(self
            .run_dirs("AND id = ?1", [run_id])?
            .into_iter()
            .next()
            .map(|(dir, _)| dir))
    }

    /// Directories `fsynclab clean` may remove: recorded, not known removed, not kept with
    /// `--keep`, and whose run's owner is gone (its lock is free, or it has a final status
    /// and no process holds its lock).
    pub fn leftover_run_dirs(&self) -> Result<Vec<RunDir>, StoreError> {
        Ok(self
            .run_dirs("AND keep_files = 0", [])?
            .into_iter()
            .filter(|(dir, owner)| {
                self.owner_gone(dir.run_id, owner.interrupted, owner.pid, owner.start_ticks)
            })
            .map(|(dir, ..)| dir)
            .collect())
    }

    fn run_dirs<P: rusqlite::Params>(
        &self,
        clause: &str,
        args: P,
    ) -> Result<Vec<RecordedDir>, StoreError> {
        let sql = format!(
            "SELECT id, target, run_dir_name, target_dev, target_ino, owner_pid, \
             owner_start_ticks, keep_files, status = 'interrupted', run_dir_dev, run_dir_ino \
             FROM runs WHERE run_dir_name IS NOT NULL \
             AND dir_removed_at_ms IS NULL AND target_dev IS NOT NULL \
             AND target_ino IS NOT NULL {clause} ORDER BY id"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(args, |r| {
            let dev: i64 = r.get(3)?;
            let ino: i64 = r.get(4)?;
            let dir_dev: Option<i64> = r.get(9)?;
            let dir_ino: Option<i64> = r.get(10)?;
            Ok((
                RunDir {
                    run_id: r.get(0)?,
                    target: PathBuf::from(r.get::<_, String>(1)?),
                    name: r.get(2)?,
                    target_dev: dev as u64,
                    target_ino: ino as u64,
                    keep_files: r.get(7)?,
                    dir_dev_ino: dir_dev.zip(dir_ino).map(|(d, i)| (d as u64, i as u64)),
                },
                Owner {
                    interrupted: r.get(8)?,
                    pid: r.get(5)?,
                    start_ticks: r.get(6)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
