-- No run lost (issue 10): where each run's private directory is, recorded before it is made,
-- and how far a run got, recorded as it goes.
-- run_dir_name: `fsynclab-<id>` (or `fsynclab-<id>-<n>`) inside `target`; NULL for runs
-- stored before this migration. target_dev/target_ino identify the target directory so a
-- later clean removes nothing from a directory that was replaced. dir_removed_at_ms is set
-- once the directory is known to be gone (removed by the run or by `fsynclab clean`);
-- keep_files marks a run whose files were kept on purpose (--keep): never cleaned.
ALTER TABLE runs ADD COLUMN run_dir_name TEXT;
ALTER TABLE runs ADD COLUMN target_dev INTEGER;
ALTER TABLE runs ADD COLUMN target_ino INTEGER;
ALTER TABLE runs ADD COLUMN keep_files INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN dir_removed_at_ms INTEGER;
-- Progress streamed while the run goes (at most every second): wall-clock time of the last
-- save, the end of the last stored interval (ms into the timed part) and the counts so far.
ALTER TABLE runs ADD COLUMN progress_at_ms INTEGER;
ALTER TABLE runs ADD COLUMN progress_t_ms INTEGER;
ALTER TABLE runs ADD COLUMN progress_writes INTEGER;
ALTER TABLE runs ADD COLUMN progress_syncs INTEGER;
ALTER TABLE runs ADD COLUMN progress_bytes INTEGER;
