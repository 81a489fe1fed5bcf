//! The refusals that say something else uses a device — or, through loop devices, what is
//! below it: it holds `/` or a protected path, it or a partition is mounted, it has holders,
//! it is active swap, a loop device is over it, or (a loop device over a file) that file is
//! protected or shared with another loop device.

use std::path::{Path, PathBuf};

use super::error::RawDeviceError;
use crate::probe::MountInfo;
use crate::scratch::DeviceNumber;

/// The device names of `/proc/swaps` (its first column, `\040` for a space).
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(|name| name.replace("\\040", " "))
        .collect()
}

/// The refusals that say something else uses the device (or, through loop devices, what is
/// below it): it holds `/` or a protected path, it or a partition is mounted, it has
/// holders, it is active swap; a loop device over it (one not on the way down); and, where
/// a loop device is over a file, that file being protected or shared with another loop
/// device. Walks down through loop devices (a loop over a loop over a disk: each level).
pub(super) fn in_use_below(
    node: &Path,
    number: DeviceNumber,
    protect: &[PathBuf],
    mounts: &[MountInfo],
) -> Result<(), RawDeviceError> {
    let loops = super::loops::attached((number, node));
    let root = nix::unistd::geteuid().is_root();
    let mut chain = vec![number];
    let mut here = number;
    loop {
        let family = crate::scratch::device_family(here);
        in_use(node, &family, protect, mounts)?;
        let mut over = Vec::new();
        for l in loops.iter().filter(|l| !chain.contains(&l.number)) {
            match &l.backing {
                Ok(super::loops::Backing::Device(below)) if family.contains(below) => {
                    over.push(l.name.clone());
                }
                Ok(_) => {}
                // Another user cannot open loop devices: what they are over is theirs to see.
                Err(why) if root => {
                    return Err(RawDeviceError::LoopUnknown {
                        device: node.to_path_buf(),
                        name: l.name.clone(),
                        why: why.clone(),
                    });
                }
                Err(_) => {}
            }
        }
        if !over.is_empty() {
            return Err(RawDeviceError::BacksLoop {
                device: node.to_path_buf(),
                loops: over,
            });
        }
        let Some(this) = loops.iter().find(|l| l.number == here) else {
            return Ok(());
        };
        match &this.backing {
            Err(why) => {
                return Err(RawDeviceError::LoopUnknown {
                    device: node.to_path_buf(),
                    name: this.name.clone(),
                    why: why.clone(),
                });
            }
            Ok(super::loops::Backing::Device(below)) => {
                if chain.contains(below) || chain.len() > 8 {
                    return Ok(());
                }
                chain.push(*below);
                here = *below;
            }
            Ok(super::loops::Backing::File { dev, ino }) => {
                if let Some(protected) = protect
                    .iter()
                    .find(|p| super::loops::is_file(p, *dev, *ino))
                {
                    return Err(RawDeviceError::HoldsProtected {
                        device: node.to_path_buf(),
                        protected: protected.clone(),
                    });
                }
                let shared: Vec<String> = loops
                    .iter()
                    .filter(|l| l.number != here)
                    .filter(|l| matches!(l.backing, Ok(super::loops::Backing::File { dev: d, ino: i }) if d == *dev && i == *ino))
                    .map(|l| l.name.clone())
                    .collect();
                if !shared.is_empty() {
                    return Err(RawDeviceError::SharedBacking {
                        device: node.to_path_buf(),
                        loops: shared,
                    });
                }
                return Ok(());
            }
        }
    }
}

/// [`in_use_below`]'s checks of one device family.
fn in_use(
    node: &Path,
    family: &[DeviceNumber],
    protect: &[PathBuf],
    mounts: &[MountInfo],
) -> Result<(), RawDeviceError> {
    for protected in std::iter::once(&PathBuf::from("/")).chain(protect) {
        if crate::scratch::holds_path(protected, family, mounts) {
            return Err(RawDeviceError::HoldsProtected {
                device: node.to_path_buf(),
                protected: protected.clone(),
            });
        }
    }
    if let Some(m) = crate::scratch::mounted_entry(mounts, family, crate::scratch::resolve_source) {
        return Err(RawDeviceError::Mounted {
            device: node.to_path_buf(),
            source_name: m.source.clone(),
            mount_point: m.mount_point.clone(),
        });
    }
    let held = holders(family);
    if !held.is_empty() {
        return Err(RawDeviceError::Holders {
            device: node.to_path_buf(),
            holders: held,
        });
    }
    let swaps = parse_swaps(&std::fs::read_to_string("/proc/swaps").unwrap_or_default());
    if let Some(entry) = swaps
        .into_iter()
        .find(|name| crate::scratch::resolve_source(name).is_some_and(|n| family.contains(&n)))
    {
        return Err(RawDeviceError::Swap {
            device: node.to_path_buf(),
            entry,
        });
    }
    Ok(())
}

/// The names under `/sys/dev/block/MAJ:MIN/holders` of each of `family`.
fn holders(family: &[DeviceNumber]) -> Vec<String> {
    let mut names: Vec<String> = family
        .iter()
        .flat_map(|(major, minor)| {
            std::fs::read_dir(format!("/sys/dev/block/{major}:{minor}/holders"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}
