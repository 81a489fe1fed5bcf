//! A `fileio` run on a bare block device (issue 34): which specs can run there, and the
//! range they write. Each worker writes its own part of the range, `file_size` long, as it
//! writes its own file in a directory; nothing is prepared (no file to lay out).

use super::super::super::{
    KindSpec, MAX_FILE_SIZE, Setting, SpecError, WorkloadKind, WorkloadSpec, format_size,
    spec_error,
};
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

/// `spec` with a bare device's range of `size` bytes shared out: each worker's part (the
/// file size) is `size` over the threads, rounded down to whole blocks. A range too small
/// for one block per worker is refused, naming the range.
pub fn with_device_range(mut spec: WorkloadSpec, size: u64) -> Result<WorkloadSpec, SpecError> {
    let threads = u64::from(spec.common.threads.max(1));
    if let KindSpec::Fileio(f) = &mut spec.kind {
        let block = f.block_size.max(1);
        let part = size / threads / block * block;
        if part == 0 {
            return Err(spec_error(
                Setting::DeviceSize,
                format!(
                    "{} is less than one {} block for each of {threads} thread(s)",
                    format_size(size),
                    format_size(block)
                ),
                crate::hint!(
                    "give ",
                    (Setting::DeviceSize, format_size(block.saturating_mul(threads))),
                    " or more"
                ),
            ));
        }
        if part > MAX_FILE_SIZE {
            return Err(spec_error(
                Setting::DeviceSize,
                format!(
                    "{} over {threads} thread(s) is more than 64T for each",
                    format_size(size)
                ),
                crate::hint!("give a smaller ", Setting::DeviceSize),
            ));
        }
        f.file_size = part;
    }
    Ok(spec)
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

    #[test]
    fn the_range_is_shared_out_in_whole_blocks() {
        let mut spec = WorkloadSpec::default();
        spec.common.threads = 3;
        if let KindSpec::Fileio(f) = &mut spec.kind {
            f.block_size = 4096;
        }
        let out = with_device_range(spec.clone(), 10 << 20).unwrap();
        let KindSpec::Fileio(f) = &out.kind else {
            panic!("fileio")
        };
        assert_eq!(f.file_size, (10 << 20) / 3 / 4096 * 4096);
        let e = with_device_range(spec, 8192).unwrap_err();
        assert_eq!(e.field, Setting::DeviceSize);
    }
}
