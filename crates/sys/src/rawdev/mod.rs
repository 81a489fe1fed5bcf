//! A block device measured with no filesystem in between (issue 34): the checks before
//! fsynclab would write to one, and the facts a run on one records. Nothing here writes.

mod checks;
mod facts;

pub use checks::{RawDeviceError, RawTarget, check_raw_device, parse_blkid_export, parse_swaps};
pub use facts::{DeviceFacts, read_facts};
