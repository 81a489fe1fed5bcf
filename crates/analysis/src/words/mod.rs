//! The words of what the measuring code hands over as data (issue 32): a run's failure
//! ([`failures`]), its warnings ([`warnings`]) and why it has no device counters
//! ([`notes`]), why `clean` left a directory ([`cleanup`]), why its target cannot be used ([`target`]) why io_uring cannot be used ([`uring`]) or why its kernel trace was off or incomplete ([`trace`]). The bottom of this crate: the comparisons (`analysis`) and the reports
//! (`report`) both word typed outcomes here, and the front ends through `report`'s
//! re-exports, naming settings their own way.

pub mod cleanup;
pub mod failures;
pub mod notes;
pub mod target;
pub mod trace;
pub mod uring;
pub mod warnings;
