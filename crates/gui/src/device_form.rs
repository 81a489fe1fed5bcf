//! The Setup tab's block-device choice turned into the run's device request (issue 34): the
//! device, its typed confirmation, the range (offset, and the length shared out over the
//! threads as each worker's part). Every refusal of the device itself comes from the lab
//! when the run starts (`fsynclab::rawdev`), worded with the window's labels.

use std::path::PathBuf;

use fsynclab::lab::DeviceRequest;
use fsynclab::spec::kinds::fileio::with_device_range;
use fsynclab::spec::{Setting, WorkloadSpec, parse_size};

use crate::state::DeviceChoice;

/// The workload with the device's range applied, and the device request; `None` when the
/// form runs in the target directory. A bad offset or range is refused naming its field.
pub fn device_part(
    choice: &DeviceChoice,
    spec: WorkloadSpec,
) -> Result<(WorkloadSpec, Option<DeviceRequest>), String> {
    if !choice.on {
        return Ok((spec, None));
    }
    let path = choice.path.trim();
    if path.is_empty() {
        return Err(
            "type the block device to run on in \"Block device\" (e.g. /dev/sdb)".to_string(),
        );
    }
    let size_of = |text: &str, setting: Setting| -> Result<Option<u64>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        parse_size(text).map(Some).map_err(|e| {
            format!(
                "{}: {text}: {e}; write e.g. 0, 16M or 1G",
                crate::names::label(setting)
            )
        })
    };
    let offset = size_of(&choice.offset, Setting::DeviceOffset)?.unwrap_or(0);
    let spec = match size_of(&choice.size, Setting::DeviceSize)? {
        Some(size) => with_device_range(spec, size).map_err(|e| crate::names::words(&e))?,
        None => spec,
    };
    let confirm = choice.confirm.trim();
    if confirm != path {
        // The lab refuses it too; said here, on the Setup tab, before anything starts.
        return Err(format!(
            "type {path} again in \"Type the device's name to confirm\": the run overwrites \
             its range"
        ));
    }
    Ok((
        spec,
        Some(DeviceRequest {
            path: PathBuf::from(path),
            confirm: (!confirm.is_empty()).then(|| PathBuf::from(confirm)),
            overwrite_signature: choice.overwrite_signature,
            offset,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_becomes_the_request_and_its_range() {
        let spec = WorkloadSpec::default();
        let mut choice = DeviceChoice::default();
        assert_eq!(
            device_part(&choice, spec.clone()).unwrap(),
            (spec.clone(), None)
        );
        choice.on = true;
        assert!(
            device_part(&choice, spec.clone())
                .unwrap_err()
                .contains("Block device")
        );
        choice.path = " /dev/loop7 ".into();
        choice.offset = "16M".into();
        choice.size = "64M".into();
        assert!(
            device_part(&choice, spec.clone())
                .unwrap_err()
                .contains("type /dev/loop7 again")
        );
        choice.confirm = "/dev/loop8".into();
        assert!(device_part(&choice, spec.clone()).is_err());
        choice.confirm = "/dev/loop7".into();
        let (ranged, request) = device_part(&choice, spec.clone()).unwrap();
        let request = request.unwrap();
        assert_eq!(request.path, PathBuf::from("/dev/loop7"));
        assert_eq!(request.confirm, Some(PathBuf::from("/dev/loop7")));
        assert_eq!(request.offset, 16 << 20);
        assert_eq!(ranged, with_device_range(spec.clone(), 64 << 20).unwrap());
        choice.offset = "lots".into();
        assert!(
            device_part(&choice, spec.clone())
                .unwrap_err()
                .starts_with("Device offset")
        );
        choice.offset = "0".into();
        choice.size = "1k".into();
        assert!(
            device_part(&choice, spec)
                .unwrap_err()
                .contains("Device range")
        );
    }
}
