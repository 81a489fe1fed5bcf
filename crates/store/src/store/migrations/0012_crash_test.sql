-- Crash tests (issue 33): a run made on the recording device keeps what its power cuts found
-- (`crashlog::CrashReport` as JSON: cuts, states, acknowledged, lost, torn, stale, mount and
-- checker failures, the seed and the first failure). NULL for every other run.
ALTER TABLE runs ADD COLUMN crash_test_json TEXT;
