-- The identity (device and inode) of each run's private directory, recorded as soon as the
-- engine has made it: `fsynclab clean` removes a recorded directory only while the name
-- still is that very directory, not another one renamed into its place. NULL for a run
-- killed before it was recorded (clean then also requires no group/other permission bits,
-- as fsynclab makes it 0700).
ALTER TABLE runs ADD COLUMN run_dir_dev INTEGER;
ALTER TABLE runs ADD COLUMN run_dir_ino INTEGER;
