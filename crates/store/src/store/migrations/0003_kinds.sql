-- Figures of the workload kinds beyond fileio: per-operation latency (histograms encoded as
-- in `histograms`), timed phases and group-commit accounting, as one JSON object; NULL for
-- fileio runs and runs stored before this migration.
ALTER TABLE runs ADD COLUMN detail_json TEXT;
