-- The kernel's account of a run (issue 14) and io_uring's queue depth (issue 16).
-- runs.kernel_trace_json: the run's kernel trace summary (metrics::KernelTrace as JSON: whether
-- tracing was on, the events used, events dropped, flush counts and latency, journal commits,
-- log forces, D-state time); NULL for runs stored before this migration or traced by nothing.
-- intervals.kernel_commits / kernel_flushes: journal (or log) commits and block-layer flushes
-- the tracer saw in the interval; NULL when tracing was off.
-- intervals.inflight: the mean number of requests in flight over the interval (io_uring
-- engine); NULL for synchronous runs.
ALTER TABLE runs ADD COLUMN kernel_trace_json TEXT;
ALTER TABLE intervals ADD COLUMN kernel_commits INTEGER;
ALTER TABLE intervals ADD COLUMN kernel_flushes INTEGER;
ALTER TABLE intervals ADD COLUMN inflight REAL;
