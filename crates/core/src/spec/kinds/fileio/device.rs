//! A `fileio` run on a bare block device (issue 34): which specs can run there, and the
//! range they write. Each worker writes its own part of the range, `file_size` long, as it
//! writes its own file in a directory; nothing is prepared (no file to lay out).

use super::super::super::{KindSpec, Setting, SpecError, WorkloadKind, WorkloadSpec, spec_error};
use super::{FileioMode, Spec};

/// Why `spec` cannot run on a bare block device: only `fileio` runs whose workers each
/// write their own part of the range (fio mode, no shared files) can. `None`: it can.
pub fn device_problem(spec: &WorkloadSpec) -> Option<SpecError> {
    let KindSpec::Fileio(f) = &spec.kind else {
        return Some(spec_error(
            Setting::Kind,
            format!(
                "a {} run writes files and directories, which a bare block device does not have",
                spec.kind().as_str()
            ),
            crate::hint!(
                (Setting::Kind, WorkloadKind::Fileio.as_str()),
                ", or give a directory as ",
                Setting::Target
            ),
        ));
    };
    device_problem_of(f)
}

fn device_problem_of(f: &Spec) -> Option<SpecError> {
    if f.mode == FileioMode::Sysbench {
        return Some(spec_error(
            Setting::MODE,
            "sysbench mode shares its files between workers; on a bare block device each \
             worker writes its own part of the range",
            crate::hint!((Setting::MODE, "fio")),
        ));
    }
    if let Some(n) = f.shared_files {
        return Some(spec_error(
            Setting::SHARED_FILES,
            format!(
                "{n} shared file(s): on a bare block device each worker writes its own part of \
                 the range"
            ),
            crate::hint!("leave ", Setting::SHARED_FILES, " unset"),
        ));
    }
    None
}

/// The bytes a run of `spec` writes on a bare block device: one `file_size` part per
/// worker (0 for a spec [`device_problem`] refuses).
pub fn device_range_bytes(spec: &WorkloadSpec) -> u64 {
    match &spec.kind {
        KindSpec::Fileio(f) => f.file_size.saturating_mul(u64::from(spec.common.threads)),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fileio_with_its_own_parts_runs_on_a_device() {
        let mut spec = WorkloadSpec::default();
        assert!(device_problem(&spec).is_none(), "the default fileio spec");
        let KindSpec::Fileio(f) = &spec.kind else {
            panic!("the default is fileio")
        };
        assert_eq!(
            device_range_bytes(&spec),
            f.file_size * u64::from(spec.common.threads)
        );
        if let KindSpec::Fileio(f) = &mut spec.kind {
            f.shared_files = Some(2);
        }
        assert_eq!(device_problem(&spec).unwrap().field, Setting::SHARED_FILES);
        if let KindSpec::Fileio(f) = &mut spec.kind {
            f.shared_files = None;
            f.mode = FileioMode::Sysbench;
        }
        assert_eq!(device_problem(&spec).unwrap().field, Setting::MODE);
    }
}
