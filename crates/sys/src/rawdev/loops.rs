//! Loop devices, by the numbers the kernel gives (`LOOP_GET_STATUS64`), never by the path
//! sysfs shows for their backing file (it may be deleted, or a path in another mount
//! namespace): what each attached loop device is over — a block device (its number) or a
//! file (its filesystem's device and its inode).

use std::os::fd::AsRawFd;
use std::path::Path;

use crate::probe::read_attribute;
use crate::scratch::DeviceNumber;

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `LOOP_GET_STATUS64` of `<linux/loop.h>` (a plain number, not an `_IOR` code).
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// What a loop device is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Backing {
    /// A block device (its number).
    Device(DeviceNumber),
    /// A file: the device of the filesystem holding it and its inode.
    File {
        /// `st_dev` of the file.
        dev: u64,
        /// `st_ino` of the file.
        ino: u64,
    },
}

/// One attached loop device.
#[derive(Debug)]
pub(super) struct Loop {
    /// Its kernel name (`loop3`).
    pub name: String,
    /// Its number.
    pub number: DeviceNumber,
    /// What it is over, or why that could not be read.
    pub backing: Result<Backing, String>,
}

/// A `dev_t` of the kernel's encoding (`huge_encode_dev`: the same as glibc's for majors
/// below 4096) as major and minor.
fn numbers(dev: u64) -> DeviceNumber {
    (
        nix::sys::stat::major(dev) as u32,
        nix::sys::stat::minor(dev) as u32,
    )
}

/// What the loop device `name` (number `number`) is over, asked of the kernel through
/// `/dev/NAME`, or through `node` (the device as the user named it: any open descriptor of
/// a loop device answers) when that cannot be opened.
fn backing_of(name: &str, number: DeviceNumber, node: Option<&Path>) -> Result<Backing, String> {
    let own = Path::new("/dev").join(name);
    match (ask(&own, number), node) {
        (Err(_), Some(node)) => ask(node, number),
        (answer, _) => answer,
    }
}

fn ask(path: &Path, number: DeviceNumber) -> Result<Backing, String> {
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("{} cannot be opened: {e}", path.display()))?;
    let st = nix::sys::stat::fstat(&file).map_err(|e| e.to_string())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFBLK || numbers(st.st_rdev) != number {
        return Err(format!(
            "{} is not loop device {}:{}",
            path.display(),
            number.0,
            number.1
        ));
    }
    // SAFETY: an all-zero loop_info64 is valid; the kernel fills it.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: `file` is an open loop device and `info` a loop_info64 the kernel may write.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("{} LOOP_GET_STATUS64: {e}", path.display()));
    }
    Ok(if info.lo_rdevice != 0 {
        Backing::Device(numbers(info.lo_rdevice))
    } else {
        Backing::File {
            dev: info.lo_device,
            ino: info.lo_inode,
        }
    })
}

use std::os::unix::fs::OpenOptionsExt as _;

/// Every attached loop device (`/sys/block/loop*` with a `loop/` directory) and what it is
/// over; the device the user named (`target`: its number and node) is asked through that
/// node too.
pub(super) fn attached(target: (DeviceNumber, &Path)) -> Vec<Loop> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().join("loop").is_dir() {
            continue;
        }
        let Some(number) = read_attribute(&entry.path(), "dev").and_then(|d| {
            let (major, minor) = d.split_once(':')?;
            Some((major.parse().ok()?, minor.parse().ok()?))
        }) else {
            continue;
        };
        let node = (number == target.0).then_some(target.1);
        let backing = backing_of(&name, number, node);
        out.push(Loop {
            name,
            number,
            backing,
        });
    }
    out.sort_by_key(|l| l.number);
    out
}

/// Whether `path` is the file `dev`:`ino`.
pub(super) fn is_file(path: &Path, dev: u64, ino: u64) -> bool {
    nix::sys::stat::stat(path).is_ok_and(|st| st.st_dev == dev && st.st_ino == ino)
}
