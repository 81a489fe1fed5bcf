//! Where a crash-testing workload's acknowledged records lie, so the checker can read each
//! acknowledgement's place in a crash state: in a few files named up front (fileio's files,
//! grouplog's log, smallfiles' `current` files), or each record a file of its own
//! (smallfiles).

use super::record::Ack;

/// The files a workload's acknowledgements name (paths relative to its run directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AckedFiles {
    /// The records lie in these files; an acknowledgement's `file` indexes them.
    Listed(Vec<String>),
    /// Each record is a whole file: in directory `dirs[ack.file]`, named `prefix` and its
    /// sequence number in `digits` zero-padded digits.
    PerRecord {
        /// The directories, by the acknowledgements' `file`.
        dirs: Vec<String>,
        /// What a record's file name starts with.
        prefix: &'static str,
        /// The digits of the sequence number after it.
        digits: usize,
    },
}

impl AckedFiles {
    /// The file holding `ack`'s record, relative to the run directory (`None`: an index
    /// past the list).
    pub fn path(&self, ack: &Ack) -> Option<String> {
        match self {
            AckedFiles::Listed(files) => files.get(ack.file as usize).cloned(),
            AckedFiles::PerRecord {
                dirs,
                prefix,
                digits,
            } => dirs
                .get(ack.file as usize)
                .map(|dir| format!("{dir}/{prefix}{:0digits$}", ack.id.seq)),
        }
    }

    /// Every name it lists (files or directories), for checking they are plain relative
    /// paths.
    pub fn names(&self) -> &[String] {
        match self {
            AckedFiles::Listed(files) => files,
            AckedFiles::PerRecord { dirs, .. } => dirs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashlog::RecordId;

    fn ack(file: u32, seq: u64) -> Ack {
        let id = RecordId {
            run: 1,
            thread: file,
            seq,
            version: 0,
        };
        Ack {
            id,
            file,
            offset: 0,
            len: 64,
        }
    }

    #[test]
    fn an_acknowledgement_names_its_file() {
        let listed = AckedFiles::Listed(vec!["a".into(), "b".into()]);
        assert_eq!(listed.path(&ack(1, 9)).as_deref(), Some("b"));
        assert_eq!(listed.path(&ack(2, 9)), None);
        let per = AckedFiles::PerRecord {
            dirs: vec!["thread-0".into()],
            prefix: "f",
            digits: 3,
        };
        assert_eq!(per.path(&ack(0, 7)).as_deref(), Some("thread-0/f007"));
        assert_eq!(per.path(&ack(1, 7)), None);
        assert_eq!(per.names(), ["thread-0".to_string()]);
    }
}
