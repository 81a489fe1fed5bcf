-- Background load around each run (the noise guard): NoiseInfo as JSON, NULL when not recorded.
ALTER TABLE runs ADD COLUMN noise_json TEXT;
