//! The Setup tab's block-device choice turned into the run's device request (issue 34): the
//! device, its typed confirmation, the range (offset and length; the lab shares the length
//! out among each run's threads). Every refusal of the device itself comes from the lab
//! when the run starts (`fsynclab::rawdev`), worded with the window's labels.

use std::path::PathBuf;

use fsynclab::lab::DeviceRequest;
use fsynclab::spec::{Setting, parse_size};

use crate::state::DeviceChoice;

/// The device request of the form; `None` when it runs in the target directory. A bad
/// offset or range, or a confirmation that is not the device's name, is refused naming its
/// field.
pub fn device_request(choice: &DeviceChoice) -> Result<Option<DeviceRequest>, String> {
    if !choice.on {
        return Ok(None);
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
    let range = size_of(&choice.size, Setting::DeviceSize)?;
    let confirm = choice.confirm.trim();
    if confirm != path {
        // The lab refuses it too; said here, on the Setup tab, before anything starts.
        return Err(format!(
            "type {path} again in \"Type the device's name to confirm\": the run overwrites \
             its range"
        ));
    }
    Ok(Some(DeviceRequest {
        path: PathBuf::from(path),
        confirm: (!confirm.is_empty()).then(|| PathBuf::from(confirm)),
        overwrite_signature: choice.overwrite_signature,
        offset,
        range,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_becomes_the_request_and_its_range() {
        let mut choice = DeviceChoice::default();
        assert_eq!(device_request(&choice).unwrap(), None);
        choice.on = true;
        assert!(
            device_request(&choice)
                .unwrap_err()
                .contains("Block device")
        );
        choice.path = " /dev/loop7 ".into();
        choice.offset = "16M".into();
        choice.size = "64M".into();
        let e = device_request(&choice).unwrap_err();
        assert!(e.contains("type /dev/loop7 again"), "{e}");
        choice.confirm = "/dev/loop8".into();
        assert!(device_request(&choice).is_err());
        choice.confirm = "/dev/loop7".into();
        let request = device_request(&choice).unwrap().unwrap();
        assert_eq!(request.path, PathBuf::from("/dev/loop7"));
        assert_eq!(request.confirm, Some(PathBuf::from("/dev/loop7")));
        assert_eq!((request.offset, request.range), (16 << 20, Some(64 << 20)));
        choice.offset = "lots".into();
        let e = device_request(&choice).unwrap_err();
        assert!(e.starts_with("Device offset"), "{e}");
        choice.offset = String::new();
        choice.size = String::new();
        let request = device_request(&choice).unwrap().unwrap();
        assert_eq!((request.offset, request.range), (0, None));
    }
}
