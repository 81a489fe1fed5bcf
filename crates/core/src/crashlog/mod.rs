//! The crash test's record of a block device (issue 33): every write, cache flush, discard
//! and zeroing the device received, in order, with the workload's acknowledgement marks
//! between them ([`entry`]); the power cuts planned from it ([`plan`]); the image of a
//! device after one of them ([`replay`]); and the records a crash-testing workload writes and
//! acknowledges, with what a crash state holds of each ([`record`]). Pure: the FUSE daemon that records the log and the
//! checks that mount the images are the system layer's.
//!
//! A log is two files: the entries, fixed-size and checksummed ([`entry::ENTRY_BYTES`]), and
//! the data the writes and marks carried, which an entry points into. A log cut short (the
//! recorder killed mid-entry) reads up to its last whole entry.

pub mod entry;
pub mod places;
pub mod plan;
pub mod record;
pub mod replay;
pub mod report;

pub use entry::{ENTRY_BYTES, Entry, EntryError, Op, read_entries};
pub use places::AckedFiles;
pub use plan::{CrashState, PlanOptions, plan_states, state_at};
pub use record::{
    ACK_BYTES, Ack, BEGIN_MARK, END_MARK, Found, RECORD_HEADER, RecordId, classify, fill_record,
    is_mark, run_mark,
};
pub use replay::{Image, MemImage, ReplayError, replay};
pub use report::{CrashReport, Failure, FirstFailure};
