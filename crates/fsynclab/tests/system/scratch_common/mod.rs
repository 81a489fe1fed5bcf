//! Fixtures shared by the scratch-filesystem tests (crates/fsynclab/tests/system/scratch.rs, crates/fsynclab/tests/system/scratch_safety.rs).
#![allow(dead_code, unused_imports)]

pub use std::fs::OpenOptions;
pub use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
pub use std::path::{Path, PathBuf};
pub use std::process::Command;

pub use fsynclab::probe::{MountInfo, list_mounts};
pub use fsynclab::scratch::{
    Backing, CreateRequest, FsKind, ScratchError, ScratchManager, list_loop_devices,
};
/// Whether the test may run: root, or else a printed skip (a failure under `CI=true`);
/// the rule of every test that needs root (`common::require_root`).
pub fn root_or_skip(test: &str) -> bool {
    super::common::scratch_or_skip(test, "losetup, mkfs, mount")
}

pub fn sh(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A test's own state and RAM directories; dropping it destroys whatever is left.
pub struct Lab {
    pub manager: ScratchManager,
    pub state: tempfile::TempDir,
    pub ram_dir: PathBuf,
    /// Mount points and loop devices the test made by hand, undone at drop.
    pub own_mounts: Vec<PathBuf>,
    pub own_loops: Vec<String>,
}

impl Lab {
    pub fn new(test: &str) -> Lab {
        let state = tempfile::tempdir().expect("tempdir");
        let ram_dir = PathBuf::from(format!(
            "/dev/shm/fsynclab-test-{}-{test}",
            std::process::id()
        ));
        let manager = ScratchManager::with_roots(state.path().to_path_buf(), ram_dir.clone());
        Lab {
            manager,
            state,
            ram_dir,
            own_mounts: Vec::new(),
            own_loops: Vec::new(),
        }
    }

    pub fn state_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.state.path()).expect("canonical state dir")
    }

    /// Attaches a fresh ext4 image of `size_mb` outside the state dir, as a user would.
    pub fn foreign_loop(&mut self, dir: &Path, size_mb: u64) -> String {
        let image = dir.join("foreign.img");
        let file = std::fs::File::create(&image).expect("foreign image");
        file.set_len(size_mb << 20).expect("size");
        sh("mkfs.ext4", &["-F", "-q", image.to_str().expect("utf-8")]);
        let node = sh(
            "losetup",
            &["--find", "--show", image.to_str().expect("utf-8")],
        );
        self.own_loops.push(node.clone());
        node
    }

    pub fn mount_by_hand(&mut self, source: &str, fs: &str, at: &Path) {
        std::fs::create_dir_all(at).expect("mount point");
        sh("mount", &["-t", fs, source, at.to_str().expect("utf-8")]);
        self.own_mounts.push(at.to_path_buf());
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for mount in self.own_mounts.iter().rev() {
            super::common::unmount_or_detach(mount);
        }
        for node in &self.own_loops {
            let _ = Command::new("losetup").args(["-d", node]).status();
        }
        let _ = self.manager.destroy_all();
        let _ = std::fs::remove_dir_all(&self.ram_dir);
    }
}

pub fn mount_at(point: &Path) -> Option<MountInfo> {
    list_mounts()
        .expect("mountinfo")
        .into_iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == point)
}

/// Nothing of the lab's left: no mount under the state dir, no loop backed by a file under
/// the state or RAM dir (sysfs and `losetup -a`), no files.
pub fn assert_nothing_left(lab: &Lab) {
    let state = lab.state_dir();
    let leftover: Vec<String> = list_mounts()
        .expect("mountinfo")
        .into_iter()
        .filter(|m| Path::new(&m.mount_point).starts_with(&state))
        .map(|m| m.mount_point)
        .collect();
    assert!(leftover.is_empty(), "mounts left: {leftover:?}");
    let loops: Vec<_> = list_loop_devices()
        .into_iter()
        .filter(|lo| {
            lo.backing_file.starts_with(&state) || lo.backing_file.starts_with(&lab.ram_dir)
        })
        .collect();
    assert!(loops.is_empty(), "loops left: {loops:?}");
    let losetup = sh("losetup", &["-a"]);
    assert!(
        !losetup.contains(state.to_str().expect("utf-8")),
        "losetup -a still lists the state dir: {losetup}"
    );
    let entries: Vec<_> = std::fs::read_dir(&state)
        .expect("state dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != ".lock")
        .map(|e| e.path())
        .collect();
    assert!(
        entries.is_empty(),
        "files left in the state dir: {entries:?}"
    );
    if let Ok(entries) = std::fs::read_dir(&lab.ram_dir) {
        let entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        assert!(entries.is_empty(), "files left in the RAM dir: {entries:?}");
    }
}

pub fn request(fs: FsKind, size_mb: u64, name: &str) -> CreateRequest {
    CreateRequest {
        name: Some(name.to_string()),
        ..CreateRequest::new(fs, size_mb << 20)
    }
}
