-- fsynclab schema 1: experiments, runs and what each run measured.
-- Counts and nanoseconds are u64 in Rust, stored as INTEGER (they never exceed i64::MAX).
-- Child tables cascade, so deleting a run leaves no orphan rows.

CREATE TABLE experiments (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
);

CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    experiment_id     INTEGER REFERENCES experiments(id) ON DELETE SET NULL,
    label             TEXT,
    status            TEXT    NOT NULL
                      CHECK (status IN ('running', 'finished', 'failed', 'cancelled', 'interrupted')),
    error             TEXT,
    kind              TEXT    NOT NULL,
    preset            TEXT,
    preset_scale      REAL,
    target            TEXT    NOT NULL,
    fs_type           TEXT,
    mount_options     TEXT,
    device            TEXT,
    kernel_release    TEXT,
    -- Process that began the run: a 'running' row whose owner is gone was interrupted.
    owner_pid         INTEGER,
    owner_start_ticks INTEGER,
    created_at_ms     INTEGER NOT NULL,
    -- The columns below stay NULL until finish_run stores a result (wall_ns marks it).
    started_at_ms     INTEGER,
    wall_ns           INTEGER,
    writes            INTEGER,
    syncs             INTEGER,
    bytes             INTEGER,
    iops              REAL,
    mib_per_sec       REAL,
    write_p50_ns      INTEGER,
    write_p99_ns      INTEGER,
    sync_p50_ns       INTEGER,
    sync_p99_ns       INTEGER,
    device_flushes    INTEGER,
    flushes_per_sync  REAL,
    spec_json         TEXT    NOT NULL,
    system_json       TEXT    NOT NULL,
    device_json       TEXT,
    warnings_json     TEXT
);

CREATE INDEX runs_by_created    ON runs(created_at_ms DESC, id DESC);
CREATE INDEX runs_by_label      ON runs(label);
CREATE INDEX runs_by_status     ON runs(status);
CREATE INDEX runs_by_experiment ON runs(experiment_id);

CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag    TEXT    NOT NULL,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;

CREATE INDEX run_tags_by_tag ON run_tags(tag);

CREATE TABLE intervals (
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx            INTEGER NOT NULL,
    t_ms           INTEGER NOT NULL,
    dur_ms         INTEGER NOT NULL,
    writes         INTEGER NOT NULL,
    syncs          INTEGER NOT NULL,
    bytes          INTEGER NOT NULL,
    write_p50_ns   INTEGER,
    write_p99_ns   INTEGER,
    sync_p50_ns    INTEGER,
    sync_p99_ns    INTEGER,
    device_flushes INTEGER,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

CREATE TABLE thread_stats (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    thread  INTEGER NOT NULL,
    writes  INTEGER NOT NULL,
    syncs   INTEGER NOT NULL,
    bytes   INTEGER NOT NULL,
    busy_ns INTEGER NOT NULL,
    wall_ns INTEGER NOT NULL,
    UNIQUE (run_id, thread)
);

CREATE TABLE histograms (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name     TEXT    NOT NULL CHECK (name IN ('write', 'sync')),
    encoding TEXT    NOT NULL,
    data     BLOB    NOT NULL,
    PRIMARY KEY (run_id, name)
);
