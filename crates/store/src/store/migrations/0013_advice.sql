-- The commit advisor (issue 35): each `advise` keeps its answer here, beside the experiment
-- holding its runs (every point a normal run). `inputs_json`: what was asked (target, budget,
-- quick, writers, strategies); `advice_json`: the whole answer (analysis::Advice as JSON:
-- points, frontier, recommendations, sync parallelism, methods, flush latency). `uuid`: its
-- identity across databases (bundles carry advice with the experiment of its runs).
CREATE TABLE advice (
    id            INTEGER PRIMARY KEY,
    created_at_ms INTEGER NOT NULL,
    experiment_id INTEGER REFERENCES experiments(id) ON DELETE SET NULL,
    target        TEXT    NOT NULL,
    fs_type       TEXT,
    inputs_json   TEXT    NOT NULL,
    advice_json   TEXT    NOT NULL,
    uuid          TEXT    NOT NULL
);

CREATE INDEX advice_by_created ON advice(created_at_ms DESC, id DESC);
CREATE UNIQUE INDEX advice_by_uuid ON advice(uuid);
