-- Typed run failures (issue 32): `runs.error` now holds a failure as its code and
-- parameters (`{"code": "io", "operation": "write", "path": …, "cause": {"os": 28}, …}`;
-- docs/EXPORT.md lists the codes), worded by the front ends. Rows stored before keep their
-- sentences, shown as they were. runs.error_code: the failure's code ('text' for a sentence
-- stored by a later write of an earlier release's failure; NULL for a run without a failure
-- and for runs stored before this migration), so SQL can filter on it.
ALTER TABLE runs ADD COLUMN error_code TEXT;
