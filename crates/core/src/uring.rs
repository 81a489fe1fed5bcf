//! [`UringUnavailable`]: why io_uring cannot be used here, as data (issue 32): the error
//! number of the probe and the `kernel.io_uring_disabled` setting. The front ends word it
//! (`fsynclab_analysis::words::uring`).

use serde::{Deserialize, Serialize};

/// Why io_uring cannot be used by this process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UringUnavailable {
    /// The probe's OS error number (ENOSYS: no io_uring; EPERM: not permitted), when it had
    /// one.
    pub errno: Option<i32>,
    /// `/proc/sys/kernel/io_uring_disabled` (0, 1: only the io_uring_group, 2: nobody), when
    /// readable.
    pub io_uring_disabled: Option<u8>,
}
