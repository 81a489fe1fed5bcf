-- The durable-operation latency (issue 31): from a write's start to the moment it is durable
-- (metrics::RunResult::durable_lat; spec::durable_op says what the operation is).
-- runs.durable_p99_ns: its 99th percentile; runs.durable_ops_per_sec: durable operations per
-- second. NULL for runs whose workload has no durable operation (buffered writes,
-- sync_file_range, fileserver, imports) and for runs stored before this migration. The whole
-- histogram is the `histograms` row named 'durable' (absent in those cases).
ALTER TABLE runs ADD COLUMN durable_p99_ns INTEGER;
ALTER TABLE runs ADD COLUMN durable_ops_per_sec REAL;
-- SQLite cannot alter a CHECK constraint: the table is rebuilt to admit the 'durable' name.
CREATE TABLE histograms_new (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name     TEXT    NOT NULL CHECK (name IN ('write', 'sync', 'durable')),
    encoding TEXT    NOT NULL,
    data     BLOB    NOT NULL,
    PRIMARY KEY (run_id, name)
);
INSERT INTO histograms_new (run_id, name, encoding, data)
    SELECT run_id, name, encoding, data FROM histograms;
DROP TABLE histograms;
ALTER TABLE histograms_new RENAME TO histograms;
