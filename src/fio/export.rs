//! fio job files out: a [`crate::spec::WorkloadSpec`] as a fio job that does the same work.
