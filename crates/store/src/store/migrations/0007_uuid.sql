-- Stable identities that survive export and import (issue 13): every run and experiment gets
-- a random (version 4) UUID, lowercase hyphenated text. New rows get one from fsynclab (the
-- uuid crate); rows stored before this migration get one here, made from SQLite's
-- randomblob() and shaped as a v4 UUID (version nibble 4, variant 8/9/a/b), one per row.
-- `fsynclab import` of a bundle matches runs and experiments by these: a run whose uuid is
-- already present is not imported again.
ALTER TABLE runs ADD COLUMN uuid TEXT;
ALTER TABLE experiments ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
    substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
UPDATE experiments SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
    substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);
CREATE UNIQUE INDEX experiments_by_uuid ON experiments(uuid);
