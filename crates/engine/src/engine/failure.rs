//! [`IoFailure`]: an I/O call of a run that failed on one of its files, kept as data (the
//! workload kind, the operation, the file, the offset and the cause) in
//! `fsynclab_core::failure`, worded only by the front ends (`fsynclab_analysis::words::failures`).

use std::io;

pub use crate::metrics::IoFailure;

/// An owned copy of `e`: the same errno, or the same kind and text.
pub fn copy_io_error(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}
