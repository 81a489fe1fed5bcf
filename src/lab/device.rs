//! Runs on a bare block device (issue 34): the request's device, checked once per launch by
//! [`crate::rawdev::check_raw_device`] and held `O_EXCL` until the launch ends, the range
//! each run writes checked against its size and logical block, and what a run records of it.
//! A run here is a normal run (stored, compared, exported) whose target is the device node;
//! no run directory is made, so `clean` has nothing to find.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::{self, DeviceRegion};
use crate::probe::{self, SystemInfo};
use crate::rawdev::RawTarget;
use crate::spec::kinds::fileio::{device_problem, device_range_bytes, with_device_range};
use crate::spec::{Setting, SpecError, WorkloadSpec, format_size};

use super::{LabError, RunRequest};

/// A bare block device to run on, as the front end took it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRequest {
    /// The device (a path to a block device node; a link is followed only when root or the
    /// invoking user made it).
    pub path: PathBuf,
    /// The typed confirmation: must repeat `path` exactly.
    pub confirm: Option<PathBuf>,
    /// Write over a filesystem or partition-table signature found on it.
    pub overwrite_signature: bool,
    /// The first byte of the range the runs write (a multiple of the logical block size).
    pub offset: u64,
    /// The range's length: every run splits it among its own threads (each thread's part,
    /// the file size, is the range over the threads in whole blocks). `None`: each run's
    /// range is its threads × its file size.
    pub range: Option<u64>,
}

/// A launch's groups of specs, each with its series variant's label.
type Groups = Vec<(Option<String>, Vec<WorkloadSpec>)>;

/// The launch's specs (the request's and every group's: each sweep point, each series
/// variant) with the device's range shared out among each one's threads, validated again;
/// unchanged without a device range. A sweep over the file size is refused with a range
/// (the range sets it).
pub(crate) fn apply_range(
    mut launch: super::Launch,
    mut groups: Groups,
    sweep: Option<&super::SweepSpec>,
) -> Result<(super::Launch, Groups), LabError> {
    let Some(range) = launch.request().device.as_ref().and_then(|d| d.range) else {
        return Ok((launch, groups));
    };
    if let Some(s) = sweep.filter(|s| s.field == Setting::FILE_SIZE.key()) {
        return Err(spec_error(SpecError {
            field: Setting::DeviceSize,
            problem: format!(
                "a sweep over {} while the device's range sets each thread's part",
                s.field
            ),
            fix: crate::hint!(
                "drop ",
                Setting::DeviceSize,
                " or the sweep over ",
                Setting::FILE_SIZE
            ),
        }));
    }
    let ranged = |spec: &WorkloadSpec| -> Result<WorkloadSpec, LabError> {
        let spec = with_device_range(spec.clone(), range).map_err(spec_error)?;
        spec.validate().map_err(spec_error)?;
        Ok(spec)
    };
    let request = launch.request_mut();
    request.spec = ranged(&request.spec)?;
    for (_, specs) in &mut groups {
        for spec in specs.iter_mut() {
            *spec = ranged(spec)?;
        }
    }
    Ok((launch, groups))
}

/// Where the runs of a launch happen: a checked directory, or a checked device.
#[derive(Clone, Debug)]
pub(crate) enum Place {
    /// A directory, checked and held open.
    Dir(engine::CheckedTarget),
    /// A block device, checked and held `O_EXCL`.
    Device(HeldDevice),
}

impl Place {
    /// The target as recorded: the directory's or the device node's real path.
    pub fn path(&self) -> &Path {
        match self {
            Place::Dir(t) => t.path(),
            Place::Device(d) => &d.raw.node,
        }
    }
}

/// A device that passed every check, held `O_EXCL` while any clone lives.
#[derive(Clone, Debug)]
pub(crate) struct HeldDevice {
    raw: Arc<RawTarget>,
    offset: u64,
}

impl HeldDevice {
    /// What the probe records for a run of `spec` here: the machine, the device's disk and
    /// [`crate::probe::RawDevice`] (the node, the range, serial and firmware).
    pub fn probe(&self, spec: &WorkloadSpec) -> SystemInfo {
        let mut system = probe::collect_device(&self.raw.node, self.raw.device.clone());
        system.clock_source = Some(engine::clock_source().to_string());
        system.raw_device = Some(probe::RawDevice {
            node: self.raw.node.clone(),
            size_bytes: self.raw.size_bytes,
            offset: self.offset,
            length: device_range_bytes(spec),
            serial: self.raw.serial.clone(),
            firmware: self.raw.firmware.clone(),
            signature_overwritten: self.raw.signature.clone(),
        });
        system
    }

    /// Where the engine writes.
    pub fn region(&self) -> DeviceRegion {
        let (major, minor) = self.raw.number;
        DeviceRegion {
            node: self.raw.node.clone(),
            rdev: nix::sys::stat::makedev(u64::from(major), u64::from(minor)),
            offset: self.offset,
        }
    }
}

/// The user the device's path may be linked through besides root: sudo's invoking user as
/// root, else this user.
fn trusted_uid() -> u32 {
    if nix::unistd::geteuid().is_root() {
        probe::invoking_user_ids().map_or(0, |(uid, _)| uid)
    } else {
        nix::unistd::getuid().as_raw()
    }
}

/// Checks `device` for the runs of `request` (every spec of the launch in `specs`): each
/// refusal of [`crate::rawdev::check_raw_device`] (the database's device protected), then
/// the range: the offset a multiple of the logical block size, every run's range
/// (`threads × file_size` from the offset) inside the device, and with `O_DIRECT` each
/// worker's part starting on a logical block.
pub(crate) fn check_device(
    request: &RunRequest,
    device: &DeviceRequest,
    specs: &[&WorkloadSpec],
    database: Option<&Path>,
) -> Result<HeldDevice, LabError> {
    for spec in specs {
        if let Some(e) = device_problem(spec) {
            return Err(spec_error(e));
        }
    }
    if request.keep_files {
        return Err(spec_error(SpecError {
            field: Setting::Keep,
            problem: "a run on a bare block device makes no files to keep".into(),
            fix: crate::hint!("leave out ", Setting::Keep),
        }));
    }
    // The database and its write-ahead log (a loop device over either is refused too).
    let protect: Vec<PathBuf> = database
        .into_iter()
        .flat_map(|db| {
            let with = |suffix: &str| {
                let mut name = db.as_os_str().to_os_string();
                name.push(suffix);
                PathBuf::from(name)
            };
            [db.to_path_buf(), with("-wal"), with("-shm")]
        })
        .collect();
    let raw = crate::rawdev::check_raw_device(
        &device.path,
        device.confirm.as_deref(),
        device.overwrite_signature,
        &protect,
        trusted_uid(),
    )?;
    let logical = raw
        .device
        .as_ref()
        .and_then(|d| d.logical_block_size)
        .map_or(512, u64::from);
    if !device.offset.is_multiple_of(logical) {
        return Err(spec_error(SpecError {
            field: Setting::DeviceOffset,
            problem: format!(
                "{} bytes is not a multiple of {}'s logical block size ({logical} bytes)",
                device.offset,
                raw.node.display()
            ),
            fix: crate::hint!(
                "use a multiple of ",
                logical.to_string(),
                " for ",
                Setting::DeviceOffset
            ),
        }));
    }
    for spec in specs {
        check_range(spec, device.offset, &raw, logical, device.range.is_some())?;
    }
    Ok(HeldDevice {
        raw: Arc::new(raw),
        offset: device.offset,
    })
}

/// The range of a run of `spec` from `offset` must lie inside the device; with `O_DIRECT`
/// each worker's part must start on a logical block. `ranged`: the range was given (its
/// setting is named first), else it is the spec's threads × file size.
fn check_range(
    spec: &WorkloadSpec,
    offset: u64,
    raw: &RawTarget,
    logical: u64,
    ranged: bool,
) -> Result<(), LabError> {
    let length = device_range_bytes(spec);
    let threads = u64::from(spec.common.threads.max(1));
    let part = length / threads;
    if offset.saturating_add(length) > raw.size_bytes {
        let fix = if ranged {
            crate::hint!("lower ", Setting::DeviceSize, " or ", Setting::DeviceOffset)
        } else {
            crate::hint!(
                "lower ",
                Setting::FILE_SIZE,
                ", ",
                Setting::THREADS,
                " or ",
                Setting::DeviceOffset
            )
        };
        return Err(spec_error(SpecError {
            field: if ranged {
                Setting::DeviceSize
            } else {
                Setting::FILE_SIZE
            },
            problem: format!(
                "{threads} thread(s) × {} from byte {offset} end past the end of {} ({})",
                format_size(part),
                raw.node.display(),
                format_size(raw.size_bytes)
            ),
            fix,
        }));
    }
    let block = spec.fileio().map_or(logical, |f| f.block_size);
    if spec.open_flags().direct && !block.is_multiple_of(logical) {
        return Err(spec_error(SpecError {
            field: Setting::BLOCK_SIZE,
            problem: format!(
                "{block} bytes is not a multiple of {}'s logical block size ({logical} bytes), \
                 which O_DIRECT needs",
                raw.node.display()
            ),
            fix: crate::hint!(
                "use a multiple of ",
                logical.to_string(),
                " for ",
                Setting::BLOCK_SIZE
            ),
        }));
    }
    if spec.open_flags().direct && !part.is_multiple_of(logical) {
        let fix = if ranged {
            crate::hint!(
                "make ",
                Setting::DeviceSize,
                format!(" a multiple of {threads} × {logical}")
            )
        } else {
            crate::hint!(
                "make ",
                Setting::FILE_SIZE,
                format!(" a multiple of {logical}")
            )
        };
        return Err(spec_error(SpecError {
            field: if ranged {
                Setting::DeviceSize
            } else {
                Setting::FILE_SIZE
            },
            problem: format!(
                "each worker's part ({part} bytes) does not start on a logical block ({logical} \
                 bytes), which O_DIRECT needs"
            ),
            fix,
        }));
    }
    Ok(())
}

fn spec_error(e: SpecError) -> LabError {
    LabError::Engine(engine::EngineError::Spec(e))
}
