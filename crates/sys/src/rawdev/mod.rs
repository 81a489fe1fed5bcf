//! A block device measured with no filesystem in between (issue 34): the checks before
//! fsynclab would write to one, and what it records about it. Nothing here writes.

mod checks;
mod error;
mod in_use;
mod loops;
mod words;

pub use checks::{RawTarget, check_raw_device, parse_blkid_export};
pub use error::RawDeviceError;
pub use in_use::parse_swaps;
