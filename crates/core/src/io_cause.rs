//! [`IoCause`]: what an I/O call returned, as data (issue 32; re-exported by `failure` and
//! `metrics`). A leaf: it imports nothing of the crate.

use std::io;

use serde::{Deserialize, Serialize};

/// What an I/O call returned, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoCause {
    /// The kernel's error number.
    Os(i32),
    /// A write completed fewer bytes than asked, with no error.
    ShortWrite,
    /// The call was interrupted (a cancel during a long fill).
    Interrupted,
    /// A value out of the call's range (an offset beyond what the kernel takes).
    InvalidInput,
    /// io_uring completed a request fsynclab did not have in flight (a bug in fsynclab).
    UnknownCompletion,
    /// Any other error without an OS error number.
    Other,
}

impl IoCause {
    /// The cause of `e`: its errno, or what kind of error it was.
    pub fn of(e: &io::Error) -> Self {
        if let Some(errno) = e.raw_os_error() {
            return IoCause::Os(errno);
        }
        match e.kind() {
            io::ErrorKind::WriteZero => IoCause::ShortWrite,
            io::ErrorKind::Interrupted => IoCause::Interrupted,
            io::ErrorKind::InvalidInput => IoCause::InvalidInput,
            _ => IoCause::Other,
        }
    }

    /// The OS error number, when the kernel returned one.
    pub fn errno(self) -> Option<i32> {
        match self {
            IoCause::Os(errno) => Some(errno),
            _ => None,
        }
    }
}

/// The neutral words of a cause: the OS's text of the errno, else what happened.
impl std::fmt::Display for IoCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoCause::Os(errno) => write!(f, "{}", io::Error::from_raw_os_error(*errno)),
            IoCause::ShortWrite => f.write_str("short write"),
            IoCause::Interrupted => f.write_str("interrupted"),
            IoCause::InvalidInput => f.write_str("invalid input"),
            IoCause::UnknownCompletion => f.write_str("io_uring completed an unknown request"),
            IoCause::Other => f.write_str("an error without an OS error number"),
        }
    }
}
