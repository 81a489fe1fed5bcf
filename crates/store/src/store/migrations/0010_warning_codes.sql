-- Typed run warnings (issue 32): `warnings_json` now holds each warning as its code and
-- parameters (`{"code": "low_space", "needed": …, "free": …}`; docs/EXPORT.md lists the
-- codes), worded by the front ends. Rows stored before keep their sentences, shown as they
-- were. runs.warning_codes: the run's warning codes, space-separated, in order ('' for a run
-- without warnings; NULL for runs stored before this migration), so SQL can filter on them:
-- WHERE ' ' || warning_codes || ' ' LIKE '% low_space %'.
ALTER TABLE runs ADD COLUMN warning_codes TEXT;
