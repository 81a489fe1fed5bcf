//! fio job files in: `[global]` and job sections, `${ENV}` substitution, fio's size suffixes,
//! and the translation of one job into a [`crate::spec::WorkloadSpec`].
