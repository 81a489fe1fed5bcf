//! Tests of `engine::dirfd`: run-directory removal by descriptor, swaps and planted links.

use super::*;
use std::os::unix::fs::symlink;

/// The identity `clean` would have recorded for run directory `dir`.
fn ids_of(dir: &Path) -> RunDirIds {
    use std::os::unix::fs::MetadataExt;
    let ids = |p: &Path| {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.dev(), m.ino())
    };
    RunDirIds {
        target: Some(ids(dir.parent().unwrap())),
        run_dir: Some(ids(dir)),
    }
}

#[test]
fn a_directory_renamed_into_the_run_dirs_name_is_not_emptied() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("fsynclab-6");
    std::fs::create_dir(&run).unwrap();
    let recorded = ids_of(&run);
    // Someone moves the run's directory away and renames another one to its name.
    std::fs::rename(&run, root.path().join("moved")).unwrap();
    let (victim_dir, before) = victim(root.path());
    std::fs::rename(&victim_dir, &run).unwrap();
    let e = remove_run_dir(root.path(), "fsynclab-6", &recorded).unwrap_err();
    assert_eq!(e, CleanRefusal::NotTheRunsDirectory);
    std::fs::rename(&run, &victim_dir).unwrap();
    assert_eq!(snapshot(&victim_dir), before, "victim untouched");
    // Not recorded (killed as it was made): a directory others may read is left.
    std::fs::rename(&victim_dir, &run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let unrecorded = RunDirIds {
        run_dir: None,
        ..recorded
    };
    let e = remove_run_dir(root.path(), "fsynclab-6", &unrecorded).unwrap_err();
    assert_eq!(e, CleanRefusal::UnrecordedMode { mode: 0o755 });
    std::fs::rename(&run, &victim_dir).unwrap();
    assert_eq!(snapshot(&victim_dir), before, "victim untouched");
    // A 0700 one, as fsynclab makes it, is removed.
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(run.join("thread-0.dat"), b"x").unwrap();
    remove_run_dir(root.path(), "fsynclab-6", &unrecorded).unwrap();
    assert!(!run.exists());
}

#[test]
fn a_target_replaced_since_the_run_is_refused_on_the_descriptor() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("t");
    std::fs::create_dir_all(target.join("fsynclab-2")).unwrap();
    let recorded = ids_of(&target.join("fsynclab-2"));
    std::fs::rename(&target, root.path().join("t-old")).unwrap();
    std::fs::create_dir_all(target.join("fsynclab-2")).unwrap();
    std::fs::write(target.join("fsynclab-2/keep"), b"x").unwrap();
    let e = remove_run_dir(
        &target,
        "fsynclab-2",
        &RunDirIds {
            run_dir: None,
            ..recorded
        },
    )
    .unwrap_err();
    assert!(matches!(e, CleanRefusal::TargetChanged { .. }), "{e:?}");
    assert!(target.join("fsynclab-2/keep").exists());
}

/// A victim tree outside the run directory, and its listing with contents.
fn victim(root: &Path) -> (PathBuf, Vec<(PathBuf, Vec<u8>)>) {
    let v = root.join("victim");
    std::fs::create_dir_all(v.join("sub")).unwrap();
    std::fs::write(v.join("a"), b"precious").unwrap();
    std::fs::write(v.join("sub/b"), b"also precious").unwrap();
    (v.clone(), snapshot(&v))
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.push((p.clone(), Vec::new()));
            out.extend(snapshot(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn run_dir_names() {
    for ok in ["fsynclab-1", "fsynclab-42-2", "fsynclab-007"] {
        assert!(is_run_dir_name(ok), "{ok}");
    }
    for bad in [
        "fsynclab-",
        "fsynclab-1-",
        "fsynclab--1",
        "fsynclab-1-2-3",
        "fsynclab-x",
        "fsynclab-1/..",
        "../fsynclab-1",
        "fsynclab-1 ",
        "home",
        "",
    ] {
        assert!(!is_run_dir_name(bad), "{bad}");
    }
}

#[test]
fn walker_removes_nested_trees_and_unlinks_symlinks_without_following() {
    let root = tempfile::tempdir().unwrap();
    let (victim_dir, before) = victim(root.path());
    let run = root.path().join("fsynclab-5");
    std::fs::create_dir_all(run.join("client-0/d00/deeper")).unwrap();
    std::fs::write(run.join("client-0/d00/f1"), b"x").unwrap();
    std::fs::write(run.join("client-0/d00/deeper/f2"), b"y").unwrap();
    symlink(&victim_dir, run.join("client-0/link-to-victim")).unwrap();
    symlink(&victim_dir, run.join("client-0/d00/deeper/link2")).unwrap();
    symlink(victim_dir.join("a"), run.join("file-link")).unwrap();
    remove_run_dir(root.path(), "fsynclab-5", &ids_of(&run)).unwrap();
    assert!(!run.exists());
    assert_eq!(snapshot(&victim_dir), before, "victim untouched");
}

#[test]
fn a_symlink_in_place_of_the_run_dir_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let (victim_dir, before) = victim(root.path());
    symlink(&victim_dir, root.path().join("fsynclab-9")).unwrap();
    let e = remove_run_dir(root.path(), "fsynclab-9", &RunDirIds::default()).unwrap_err();
    assert_eq!(e, CleanRefusal::NotADirectory);
    assert_eq!(snapshot(&victim_dir), before);
    assert!(root.path().join("fsynclab-9").is_symlink());
    // Missing: nothing to do. Foreign names: refused before anything is opened.
    remove_run_dir(root.path(), "fsynclab-10", &RunDirIds::default()).unwrap();
    let e = remove_run_dir(root.path(), "victim", &RunDirIds::default()).unwrap_err();
    assert_eq!(
        e,
        CleanRefusal::NotRunDirName {
            name: "victim".into()
        }
    );
    assert_eq!(snapshot(&victim_dir), before);
}

#[test]
fn a_directory_swapped_in_after_opening_is_not_removed_by_name() {
    let root = tempfile::tempdir().unwrap();
    let target = DirHandle::open(root.path()).unwrap();
    target.mkdir("fsynclab-3").unwrap();
    let ours = target.open_subdir("fsynclab-3").unwrap();
    let st = ours.stat().unwrap();
    std::fs::write(ours.path().join("t0.dat"), b"x").unwrap();
    // Someone renames ours away and puts their own directory in its place.
    std::fs::rename(root.path().join("fsynclab-3"), root.path().join("moved")).unwrap();
    std::fs::create_dir(root.path().join("fsynclab-3")).unwrap();
    let mut problems = Vec::new();
    remove_contents(&ours, &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!root.path().join("moved/t0.dat").exists(), "ours emptied");
    let warning = remove_name_if_same(&target, "fsynclab-3", &st).unwrap_err();
    assert_eq!(warning, crate::metrics::RunDirLeft::Replaced);
    assert!(root.path().join("fsynclab-3").is_dir(), "theirs kept");
    // Renamed away with nothing in its place: said so too.
    std::fs::remove_dir(root.path().join("fsynclab-3")).unwrap();
    let warning = remove_name_if_same(&target, "fsynclab-3", &st).unwrap_err();
    assert_eq!(warning, crate::metrics::RunDirLeft::RenamedAway);
}

#[test]
fn a_directory_owned_by_someone_else_is_refused() {
    if !crate::test_support::root_or_skip("a_directory_owned_by_someone_else_is_refused", "chown") {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let theirs = root.path().join("fsynclab-4");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("keep"), b"x").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let e = remove_run_dir(root.path(), "fsynclab-4", &ids_of(&theirs)).unwrap_err();
    assert!(
        matches!(e, CleanRefusal::ForeignOwner { uid: 65534, .. }),
        "{e:?}"
    );
    assert!(theirs.join("keep").exists());
}
