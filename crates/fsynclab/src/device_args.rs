//! `run --device`: the flags of a run on a bare block device (issue 34) and the request they
//! make: `--size` is the range every run writes (the lab shares it out among each run's
//! threads: it sets the file size), `--offset` where the range starts.

use std::path::PathBuf;

use clap::Args;

use fsynclab::lab::DeviceRequest;
use fsynclab::spec;

/// The flags of a run on a bare block device.
#[derive(Debug, Args)]
pub struct DeviceArgs {
    /// Run on this block device, with no filesystem in between (fileio only): pwrite and
    /// flush timing of the device itself. Refused when mounted, held, swap, or carrying a
    /// signature (see --overwrite-signature); needs --destroy-data-on.
    #[arg(
        long,
        value_name = "DEV",
        conflicts_with_all = ["target", "crash_check", "fio_job"],
        help_heading = "Device"
    )]
    pub device: Option<PathBuf>,
    /// Repeat the device's exact name to confirm that the data in the run's range is
    /// destroyed (with --device, or a --fio-job whose filename= is a device).
    #[arg(long, value_name = "DEV", help_heading = "Device")]
    pub destroy_data_on: Option<PathBuf>,
    /// With --device: the first byte of the range written (a multiple of the device's
    /// logical block size; k, M, G suffixes) [default: 0].
    #[arg(long, value_name = "SIZE", value_parser = spec::parse_size, requires = "device", help_heading = "Device")]
    pub offset: Option<u64>,
    /// With --device: the length of the range written; each thread writes its own equal
    /// part of it, so it sets the file size to SIZE / threads (whole blocks)
    /// [default: threads × the file size].
    #[arg(long, value_name = "SIZE", value_parser = spec::parse_size, requires = "device", help_heading = "Device")]
    pub size: Option<u64>,
    /// With --device (or a --fio-job on a device): write over a filesystem or
    /// partition-table signature found on it (its data is lost).
    #[arg(long, requires = "destroy_data_on", help_heading = "Device")]
    pub overwrite_signature: bool,
}

impl DeviceArgs {
    /// The device request, when `--device` was given.
    pub fn request(&self) -> Option<DeviceRequest> {
        self.device.as_ref().map(|path| DeviceRequest {
            path: path.clone(),
            confirm: self.destroy_data_on.clone(),
            overwrite_signature: self.overwrite_signature,
            offset: self.offset.unwrap_or(0),
            range: self.size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_become_the_request() {
        let args = |size| DeviceArgs {
            device: Some("/dev/loop9".into()),
            destroy_data_on: Some("/dev/loop9".into()),
            offset: None,
            size,
            overwrite_signature: false,
        };
        let request = args(Some(1 << 30)).request().unwrap();
        assert_eq!((request.offset, request.range), (0, Some(1 << 30)));
        assert_eq!(request.confirm, Some("/dev/loop9".into()));
        assert_eq!(args(None).request().unwrap().range, None);
    }
}
