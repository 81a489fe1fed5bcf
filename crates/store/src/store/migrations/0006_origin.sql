-- Where a run's workload came from when it was not the form, a preset or flags (issue 12):
-- a fio job file the engine ran (its text kept as read), or a result fio measured and
-- fsynclab imported (fio version, host, job options, the file it came from). RunOrigin as
-- JSON; NULL for every other run and for runs stored before this migration.
ALTER TABLE runs ADD COLUMN origin_json TEXT;
