//! [`ScratchManager::create`]: checks everything first, then image, loop device, mkfs, mount
//! and `recipe.json`, undoing every step made when a later one fails.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::device::{check_device, existing_ancestor};
use super::layout::{DISK_IMAGE, MOUNT_DIR, RECIPE_FILE, euid};
use super::marks::MARKER_FILE;
use super::roots::Roots;
use super::system::{
    self, MOUNT_PACKAGE, detach, loop_backing_path, read_kernel_log, read_loop_dio, require_tool,
    run, unmount,
};
use super::{
    Backing, CreateRequest, MIN_SIZE_BYTES, ScratchError, ScratchManager, ScratchRecipe,
    check_mkfs_options, check_mount_options, require_root, validate_name, with_eager_init,
};
use crate::probe::list_mounts;

/// Undoes a half-made filesystem when dropped while armed (or when [`Rollback::undo`] is
/// called, which reports what it could not undo).
struct Rollback {
    armed: bool,
    recipe_dir: Option<PathBuf>,
    image: Option<PathBuf>,
    /// The loop device and the backing file it was attached to.
    loop_device: Option<(String, PathBuf)>,
    mounted: Option<PathBuf>,
    umount: PathBuf,
    losetup: PathBuf,
}

fn still_mounted(mount_point: &Path) -> bool {
    list_mounts().map_or(true, |mounts| {
        mounts
            .iter()
            .any(|m| Path::new(&m.mount_point) == mount_point)
    })
}

impl Rollback {
    /// Undoes every step made (each tried even when an earlier one fails), disarms, and
    /// returns what could not be undone.
    fn undo(&mut self) -> Vec<String> {
        self.armed = false;
        let mut left = Vec::new();
        if let Some(mount_point) = self.mounted.take() {
            // `mounted` is set before mount runs: a failed umount of a point that is not
            // mounted is fine.
            if let Err(e) = unmount(&self.umount, &mount_point.to_string_lossy())
                && still_mounted(&mount_point)
            {
                left.push(format!("{} is still mounted ({e})", mount_point.display()));
            }
        }
        if let Some((device, backing)) = self.loop_device.take()
            && let Err(e) = detach(&self.losetup, &device, &backing)
        {
            left.push(format!("{device} is still attached ({e})"));
        }
        let mut remove = |path: &Path, result: std::io::Result<()>| {
            if let Err(e) = result
                && e.kind() != std::io::ErrorKind::NotFound
            {
                left.push(format!("{} is left ({e})", path.display()));
            }
        };
        if let Some(image) = self.image.take() {
            remove(&image, std::fs::remove_file(&image));
        }
        if let Some(dir) = self.recipe_dir.take() {
            // Only empty directories and our own files: never recurse into a mount.
            for file in [
                RECIPE_FILE.to_string(),
                format!("{RECIPE_FILE}.tmp"),
                MARKER_FILE.to_string(),
            ] {
                let path = dir.join(file);
                remove(&path, std::fs::remove_file(&path));
            }
            let mount_dir = dir.join(MOUNT_DIR);
            remove(&mount_dir, std::fs::remove_dir(&mount_dir));
            remove(&dir, std::fs::remove_dir(&dir));
        }
        left
    }
}

impl Drop for Rollback {
    fn drop(&mut self) {
        if self.armed {
            // Dropped during an unwind or an early return: nobody reads the list, so it
            // goes to the log (RUST_LOG) rather than nowhere.
            for left in self.undo() {
                log::warn!("scratch set-up not fully undone: {left}");
            }
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Free bytes in `dir` (or its nearest existing ancestor), as root may use them.
fn available_bytes(dir: &Path) -> Result<u64, ScratchError> {
    let existing = existing_ancestor(dir).unwrap_or_else(|| PathBuf::from("/"));
    let stat = nix::sys::statvfs::statvfs(&existing)
        .map_err(|errno| ScratchError::io("measure free space in", &existing, errno.into()))?;
    Ok(stat.blocks_available().saturating_mul(stat.fragment_size()))
}

impl ScratchManager {
    /// Makes a scratch filesystem: checks root, tools, name, size and free space (or the
    /// device's safety) before creating anything; then image, loop device, mkfs, mount and
    /// finally `recipe.json`. Any failure after the first step removes everything made.
    pub fn create(&self, req: &CreateRequest) -> Result<ScratchRecipe, ScratchError> {
        // The options first: a refused one is the user's to fix whoever runs fsynclab.
        let mkfs_args = check_mkfs_options(req.fs, &req.mkfs_opts)?;
        let mount_opts = check_mount_options(req.fs, &req.mount_opts)?;
        require_root(euid())?;
        let mkfs = require_tool(req.fs.mkfs_tool(), req.fs.package())?;
        let mount = require_tool("mount", MOUNT_PACKAGE)?;
        let umount = require_tool("umount", MOUNT_PACKAGE)?;
        let losetup = require_tool("losetup", MOUNT_PACKAGE)?;
        // Held until the recipe is written or everything made is undone (declared before
        // the rollback, so dropped after it).
        let (roots, _lock) = self.lock()?;
        if let Some(name) = &req.name {
            validate_name(name)?;
            if self.name_taken(name) {
                return Err(ScratchError::Exists { name: name.clone() });
            }
        }
        let size_bytes = self.checked_size(req, &roots)?;

        // Checks passed: from here on everything made is undone on failure.
        let mut rollback = Rollback {
            armed: true,
            recipe_dir: None,
            image: None,
            loop_device: None,
            mounted: None,
            umount,
            losetup: losetup.clone(),
        };
        let name = self.claim_name(req, &roots.state, &mut rollback)?;
        let recipe_dir = roots.state.join(&name);
        let mount_point = recipe_dir.join(MOUNT_DIR);
        std::fs::create_dir(&mount_point)
            .map_err(|e| ScratchError::io("create", &mount_point, e))?;

        let (image, loop_device, loop_direct_io, device) =
            attach_backing(req, &roots, &name, size_bytes, &losetup, &mut rollback)?;

        let mut args: Vec<String> = req
            .fs
            .mkfs_base_args()
            .iter()
            .map(|arg| arg.to_string())
            .collect();
        args.extend(with_eager_init(req.fs, mkfs_args));
        args.push(device.clone());
        run(&mkfs, &args)?;

        // Set first: a mount(8) that mounted but exited non-zero is undone too.
        rollback.mounted = Some(mount_point.clone());
        if let Err(mut err) = self.mount(req, &mount_opts, &mount, &device, &mount_point) {
            let left = rollback.undo();
            if let ScratchError::MountFailed { left_over, .. } = &mut err
                && !left.is_empty()
            {
                *left_over = Some((left.join(", "), name.clone()));
            }
            return Err(err);
        }

        let recipe = ScratchRecipe {
            name,
            fs: req.fs,
            mkfs_opts: req.mkfs_opts.clone(),
            mount_opts: req.mount_opts.clone(),
            backing: req.backing.clone(),
            size_bytes,
            image,
            loop_device,
            loop_direct_io,
            device,
            mount_point,
            created_at_ms: now_ms(),
        };
        write_recipe(&recipe_dir, &recipe)?;
        rollback.armed = false;
        Ok(recipe)
    }

    /// The filesystem's size: the device's (checked as safe to format) or the requested
    /// image size, when it is large enough and fits where the image goes.
    fn checked_size(&self, req: &CreateRequest, roots: &Roots) -> Result<u64, ScratchError> {
        Ok(match &req.backing {
            Backing::Device { path } => {
                check_device(path, req.destroy_data_on.as_deref(), &self.protect)?
            }
            Backing::Disk | Backing::Ram => {
                if req.size_bytes < MIN_SIZE_BYTES {
                    return Err(ScratchError::TooSmall {
                        size_bytes: req.size_bytes,
                    });
                }
                let image_dir = match req.backing {
                    Backing::Ram => &roots.ram,
                    _ => &roots.state,
                };
                let available = available_bytes(image_dir)?;
                if req.size_bytes > available {
                    return Err(ScratchError::NoSpace {
                        needed: req.size_bytes,
                        available,
                        dir: image_dir.clone(),
                        alternative: if req.backing == Backing::Ram {
                            "disk"
                        } else {
                            "ram"
                        }
                        .to_string(),
                    });
                }
                req.size_bytes
            }
        })
    }

    /// Creates `<state_dir>/<name>` atomically: the requested name, or the first free
    /// `<fs>-<n>`.
    fn claim_name(
        &self,
        req: &CreateRequest,
        state: &Path,
        rollback: &mut Rollback,
    ) -> Result<String, ScratchError> {
        let candidates: Box<dyn Iterator<Item = String>> = match &req.name {
            Some(name) => Box::new(std::iter::once(name.clone())),
            None => Box::new((1..=10_000).map(|n| format!("{}-{n}", req.fs.as_str()))),
        };
        for name in candidates {
            if req.name.is_none() && self.name_taken(&name) {
                continue;
            }
            let dir = state.join(&name);
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    rollback.recipe_dir = Some(dir.clone());
                    write_marker(&dir, &name)?;
                    return Ok(name);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if req.name.is_some() {
                        return Err(ScratchError::Exists { name });
                    }
                }
                Err(e) => return Err(ScratchError::io("create", &dir, e)),
            }
        }
        Err(ScratchError::Exists {
            name: format!("{}-*", req.fs.as_str()),
        })
    }

    /// `mount -t FS [-o OPTS] DEVICE MOUNT_POINT` with the checked `options`; on failure,
    /// the kernel's new lines about the device or filesystem go into
    /// [`ScratchError::MountFailed`].
    fn mount(
        &self,
        req: &CreateRequest,
        options: &str,
        mount: &Path,
        device: &str,
        mount_point: &Path,
    ) -> Result<(), ScratchError> {
        let marker = read_kernel_log().and_then(|log| log.lines().last().map(str::to_string));
        let mut args = vec!["-t".to_string(), req.fs.as_str().to_string()];
        if !options.is_empty() {
            args.push("-o".to_string());
            args.push(options.to_string());
        }
        args.push(device.to_string());
        args.push(mount_point.to_string_lossy().into_owned());
        run(mount, &args).map(|_| ()).map_err(|failure| {
            let device_name = device.rsplit('/').next().unwrap_or(device);
            let mut needles = vec![device_name, req.fs.as_str()];
            needles.extend(options.split(',').map(|o| o.split('=').next().unwrap_or(o)));
            let kernel_message = read_kernel_log()
                .and_then(|log| system::kernel_lines_after(marker.as_deref(), &log, &needles));
            ScratchError::MountFailed {
                options: req.mount_opts.clone(),
                stderr: one_line(&failure.stderr).trim_end_matches('.').to_string(),
                kernel_message,
                left_over: None,
            }
        })
    }
}

/// Joins a multi-line tool message into one line for an error message.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Marks a fresh scratch directory as fsynclab's before anything else is made in it, so
/// cleanup and `destroy --all` recognise it even when a kill leaves it half-made.
fn write_marker(recipe_dir: &Path, name: &str) -> Result<(), ScratchError> {
    let path = recipe_dir.join(MARKER_FILE);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| ScratchError::io("create", &path, e))?;
    writeln!(file, "fsynclab scratch filesystem {name}")
        .and_then(|()| file.sync_all())
        .map_err(|e| ScratchError::io("write", &path, e))
}

/// Writes `recipe.json` through a temporary file and a rename, so a reader never sees half.
fn write_recipe(recipe_dir: &Path, recipe: &ScratchRecipe) -> Result<(), ScratchError> {
    let path = recipe_dir.join(RECIPE_FILE);
    let temp = recipe_dir.join(format!("{RECIPE_FILE}.tmp"));
    let json = serde_json::to_vec_pretty(recipe).map_err(|e| ScratchError::BadRecipe {
        path: path.clone(),
        source: Box::new(e),
    })?;
    let mut file =
        std::fs::File::create(&temp).map_err(|e| ScratchError::io("create", &temp, e))?;
    file.write_all(&json)
        .and_then(|()| file.sync_all())
        .map_err(|e| ScratchError::io("write", &temp, e))?;
    std::fs::rename(&temp, &path).map_err(|e| ScratchError::io("rename", &temp, e))
}

/// What [`attach_backing`] made: the image, its loop device, the loop's direct I/O, and
/// the device mkfs formats.
type Attached = (Option<PathBuf>, Option<String>, Option<bool>, String);

/// The device the filesystem is made on: the user's device, or a new sparse image (RAM or
/// disk) attached to a loop device that is checked to be backed by that image. What it
/// makes is recorded in `rollback`. Returns (image, loop device, its direct I/O, device).
fn attach_backing(
    req: &CreateRequest,
    roots: &Roots,
    name: &str,
    size_bytes: u64,
    losetup: &Path,
    rollback: &mut Rollback,
) -> Result<Attached, ScratchError> {
    let recipe_dir = roots.state.join(name);
    Ok(match &req.backing {
        Backing::Device { path } => (None, None, None, path.to_string_lossy().into_owned()),
        Backing::Disk | Backing::Ram => {
            let image = if req.backing == Backing::Ram {
                roots.ram.join(format!("{name}.img"))
            } else {
                recipe_dir.join(DISK_IMAGE)
            };
            // O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file or a planted symlink.
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&image)
                .map_err(|e| ScratchError::io("create", &image, e))?;
            rollback.image = Some(image.clone());
            // Sparse: blocks are allocated as the filesystem writes them.
            file.set_len(size_bytes)
                .map_err(|e| ScratchError::io("size", &image, e))?;
            drop(file);
            let mut args = vec!["--find".to_string(), "--show".to_string()];
            if req.loop_direct_io {
                args.push("--direct-io=on".to_string());
            }
            args.push(image.to_string_lossy().into_owned());
            let loop_node = run(losetup, &args)?.trim().to_string();
            // Before mkfs: the loop must be backed by our image, not by whatever a
            // swapped path pointed at.
            let backing = loop_backing_path(&loop_node);
            rollback.loop_device = Some((
                loop_node.clone(),
                backing.clone().unwrap_or_else(|| image.clone()),
            ));
            if backing.as_deref() != Some(image.as_path()) {
                return Err(ScratchError::Unsafe {
                    path: image,
                    reason: format!(
                        "losetup attached {loop_node} to {} instead; not formatting it",
                        backing.map_or("nothing".into(), |b| b.display().to_string())
                    ),
                });
            }
            let dio = read_loop_dio(&loop_node);
            (Some(image), Some(loop_node.clone()), dio, loop_node)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_messages_are_joined() {
        assert_eq!(
            one_line("mount: bad option.\n  dmesg(1) may have more.\n"),
            "mount: bad option. dmesg(1) may have more."
        );
    }
}
