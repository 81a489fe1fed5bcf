//! The crash test's recording device (issue 33): a FUSE filesystem of fsynclab's own that
//! serves one file, `image`, for a loop device to be backed by, and records every write,
//! cache flush (the loop driver's flush is an fsync of its backing file), discard and zeroing
//! it receives in a log (`fsynclab_core::crashlog`), in order; and a second file, `marks`, the
//! workload writes its acknowledgements into, so they take their place in the same order.
//!
//! Root mounts `/dev/fuse` directly (no `fusermount`). The service is one thread of a
//! process of its own (`daemon`) and write-through (no writeback cache: each write reaches it
//! as the block layer sent it).

mod check;
mod check_error;
mod daemon;
mod device;
mod fs;
mod keep;
mod lasting;
#[cfg(test)]
mod lasting_tests;
mod mapped;
mod recorder;
mod stale;
mod teardown;
mod tool;

pub use check::{CheckError, CheckOptions, CrashReport, Failure, FirstFailure, check};
pub use daemon::{DAEMON_COMMAND, DAEMON_LOG, DAEMON_SIZES, DaemonProgram, serve, serve_lasting};
pub use device::{CrashDevice, wait_released};
pub use fs::{IMAGE_NAME, MARKS_NAME, MAX_WRITE, RecordingFs, mount};
pub use keep::{
    BuiltState, KEPT_LOGS, NewImage, build_state, is_kept_name, keep_log, kept_log_dir,
};
pub use lasting::{
    DEVICE_SIZES, LASTING_PREFIX, LastingDevice, LastingInfo, LastingStatus, MAX_LASTING_NAME,
    XFS_MIN, check_lasting_name, device_sizes, size_fits,
};
pub use recorder::{DATA_FILE, IMAGE_FILE, LOG_FILE, Recorder, RecorderError};
pub use stale::{clean_stale, stale_dirs};
pub use tool::{DaemonField, DeviceError, checked_state_dir};
