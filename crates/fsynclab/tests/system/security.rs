//! Attacks by an unprivileged local user on what root's fsynclab does (docs/SECURITY.md):
//! each test sets up what the attacker could have prepared (a throwaway user made with
//! `useradd`, or directories owned by `nobody`), lets root's fsynclab (or the library, for
//! the state a race would leave) act on it, and checks that nothing outside the user's
//! own files was written, chowned or mounted over. Needs root (never skipped with CI=true).

use std::path::Path;

use crate::common;
use crate::common::users::{SudoScene, ThrowawayUser as Attacker, owner};

/// fio's JSON output, for a command that stores a run (`import`).
const FIO_OUTPUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/fio/seed000-jsonplus.json"
);

/// `nobody`: owns the attacker's directories where no login is needed.
const NOBODY: u32 = 65534;

/// A throwaway user with `home`, and the sudo identity root's fsynclab sees when that user
/// runs it through `sudo`.
fn attacker_under_sudo(tag: &str, home: &Path) -> (Attacker, fsynclab::probe::SudoUser) {
    let user = Attacker::new(tag, home);
    let sudo =
        fsynclab::probe::sudo_user_from(0, Some(&user.uid.to_string()), Some(&user.name), |_| {
            Some((user.name.clone(), user.gid, home.to_path_buf()))
        })
        .unwrap()
        .unwrap();
    (user, sudo)
}

/// The attacker's move: `path` renamed to `away`, and a link to `to` put in its place.
fn swap_for_link(path: &Path, away: &Path, to: &Path) {
    std::fs::rename(path, away).unwrap();
    std::os::unix::fs::symlink(to, path).unwrap();
}

/// Under sudo the scratch state directory (mount points, records of what root made) stays
/// root's: in the user's data directory the user could rename it, or `fsynclab` above it,
/// and put a link there after the checks, so that root mounts a scratch filesystem over
/// `/etc` (mount follows links).
#[test]
fn sudo_keeps_the_scratch_state_out_of_the_users_directory() {
    if !common::require_root("sudo_keeps_the_scratch_state_out...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, root_home) = (dir.path().join("home"), dir.path().join("roothome"));
    std::fs::create_dir(&root_home).unwrap();
    let user = Attacker::new("s", &home);

    let out = user
        .sudo_fsynclab(&root_home)
        .args(["scratch", "destroy", "--all"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let theirs = home.join(".local/share/fsynclab/scratch");
    assert!(
        !theirs.exists(),
        "root's scratch state was made in the user's directory: {}",
        theirs.display()
    );
    let ours = root_home.join(".local/share/fsynclab/scratch");
    assert_eq!(owner(&ours), 0, "{err}");
}

/// `sudo -E` keeps the user's `XDG_DATA_HOME`: a state directory below a directory another
/// user owns is refused (exit 1, as every unsafe state directory), naming that directory,
/// before anything is made in it.
#[test]
fn a_scratch_state_below_another_users_directory_is_refused() {
    if !common::require_root("a_scratch_state_below_another_users...", "chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let data = theirs.join("data");

    let out = common::bare_cmd()
        .env("XDG_DATA_HOME", &data)
        .env_remove("SUDO_UID")
        .env_remove("SUDO_USER")
        .args(["scratch", "destroy", "--all"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&theirs.display().to_string()) && err.contains("swap it for a link"),
        "{err}"
    );
    assert!(
        !data.exists(),
        "something was made below {}",
        theirs.display()
    );
}

/// The user swaps `~/.local` for a link to root's own data directory between the check
/// and the hand-over after the command: root's database must stay root's.
#[test]
fn a_data_dir_swapped_for_a_link_never_hands_roots_files_over() {
    if !common::require_root("a_data_dir_swapped_for_a_link...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (user, sudo) = attacker_under_sudo("l", &home);
    // The check: the real directories are made and handed over.
    let data = fsynclab::store::user_data_dir(&sudo).unwrap();
    assert_eq!(owner(&data), user.uid);

    // Root's own data directory, with its database and a run's lock file.
    let victim = dir.path().join("root-local");
    let victim_data = victim.join("share/fsynclab");
    std::fs::create_dir_all(victim_data.join("fsynclab.sqlite.locks")).unwrap();
    let precious = [
        victim_data.join("fsynclab.sqlite"),
        victim_data.join("fsynclab.sqlite.locks/run-1.lock"),
    ];
    for file in &precious {
        std::fs::write(file, b"root's").unwrap();
    }
    // The swap.
    swap_for_link(&home.join(".local"), &home.join(".local-away"), &victim);
    user.own(&home.join(".local"));

    sudo.give_database("fsynclab.sqlite");
    for path in precious
        .iter()
        .chain([&victim_data.join("fsynclab.sqlite.locks")])
    {
        assert_eq!(owner(path), 0, "{} was handed over", path.display());
    }
}

/// Files the user planted where root's database files go: a hard link to one of their
/// own files, a FIFO (which must not hang the hand-over) and a symlink to a root file.
/// Only root's single-link regular files and directories are handed over.
#[test]
fn planted_database_files_are_not_followed_or_chowned() {
    if !common::require_root("planted_database_files...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (user, sudo) = attacker_under_sudo("p", &home);
    let data = fsynclab::store::user_data_dir(&sudo).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"root's").unwrap();
    std::os::unix::fs::symlink(&victim, data.join("fsynclab.sqlite")).unwrap();
    user.own(&data.join("fsynclab.sqlite"));
    nix::unistd::mkfifo(
        &data.join("fsynclab.sqlite-wal"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    user.own(&data.join("fsynclab.sqlite-wal"));
    // A root file with two links (one the user could have made to a file they may write).
    let twice = dir.path().join("twice");
    std::fs::write(&twice, b"root's").unwrap();
    std::fs::hard_link(&twice, data.join("fsynclab.sqlite-shm")).unwrap();

    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        sudo.give_database("fsynclab.sqlite");
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the hand-over hung on the planted FIFO");
    assert_eq!(owner(&victim), 0, "the symlink was followed");
    assert_eq!(owner(&twice), 0, "a hard-linked root file was handed over");
}

/// The user swaps `~/.local` for a link to a directory of their choice in the instant
/// between fsynclab's checks of their data directory and SQLite's open (made deterministic
/// by the test-support hook `store::race::before_sqlite_open`). Root's database, its
/// `-wal`, `-shm` and the run lock files (made then, and lazily later by a second
/// connection and a run) must all go to the directory that was checked, none to theirs.
#[test]
fn a_data_dir_swapped_before_sqlite_opens_it_is_not_followed() {
    use fsynclab::store::DB_FILE_NAME;
    if !common::require_root("a_data_dir_swapped_before_sqlite...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (user, sudo) = attacker_under_sudo("r", &home);
    let data = fsynclab::store::user_data_dir(&sudo).unwrap();
    // Where the user wants root's files (a stand-in for /etc or root's own data).
    let theirs = dir.path().join("elsewhere/share/fsynclab");
    std::fs::create_dir_all(&theirs).unwrap();
    let db = data.join(DB_FILE_NAME);
    let (at, to, uid, gid) = (
        home.clone(),
        dir.path().join("elsewhere"),
        user.uid,
        user.gid,
    );
    fsynclab::store::race::before_sqlite_open(&db, move || {
        swap_for_link(&at.join(".local"), &at.join(".local-away"), &to);
        std::os::unix::fs::lchown(at.join(".local"), Some(uid), Some(gid)).unwrap();
    });

    let id = open_begin_and_check(&db, &home.join(".local"), dir.path(), &theirs);
    let checked = home.join(".local-away/share/fsynclab");
    assert_database_and_lock_in(&checked, DB_FILE_NAME, id);
}

/// During a run the user swaps `fsynclab.sqlite.locks` (in their data directory) for a
/// link to a directory holding a root file named like the run's lock: when the run ends,
/// root removes its own lock file, never the one the link leads to.
#[test]
fn a_locks_dir_swapped_during_a_run_never_removes_files_elsewhere() {
    use fsynclab::store::{DB_FILE_NAME, NewRun, Store};
    if !common::require_root("a_locks_dir_swapped_during_a_run...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (user, sudo) = attacker_under_sudo("k", &home);
    let data = fsynclab::store::user_data_dir(&sudo).unwrap();
    let store = Store::open(&data.join(DB_FILE_NAME)).unwrap();
    let new = NewRun::new(Default::default(), Default::default(), dir.path());
    let id = store.begin_run(&new).unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let precious = victim.join(format!("run-{id}.lock"));
    std::fs::write(&precious, b"root's").unwrap();
    let locks = data.join(format!("{DB_FILE_NAME}.locks"));
    swap_for_link(&locks, &data.join("locks-away"), &victim);
    user.own(&locks);

    store
        .fail_run(id, &fsynclab::metrics::Recorded::Text("stopped".into()))
        .unwrap();
    assert!(
        precious.exists(),
        "root removed {} through the swapped link",
        precious.display()
    );
    assert!(
        !data.join(format!("locks-away/run-{id}.lock")).exists(),
        "the run's own lock file was left"
    );
}

/// A user allowed `sudo fsynclab` names where its output goes (`export-fio-job --output`,
/// and the same writer serves `report --out` and `export --out`): root's rights must not
/// come with it. A root-only directory is refused (nothing created, exit non-zero), a
/// root-owned file is not replaced even with `--force`, and a file written in the user's
/// own directory is the user's.
#[test]
fn output_files_under_sudo_are_written_with_the_users_rights() {
    if !common::require_root("output_files_under_sudo...", "useradd, setfsuid") {
        return;
    }
    use std::os::unix::fs::PermissionsExt as _;
    let scene = SudoScene::new("o");
    let (dir, home, user, root_only) = (&scene.dir, &scene.home, &scene.user, &scene.root_only);
    let export = |out: &Path, force: bool| {
        let mut cmd = scene.sudo_fsynclab();
        cmd.args(["export-fio-job", "--preset", "fsync-methods", "--output"])
            .arg(out);
        if force {
            cmd.arg("--force");
        }
        cmd.output().expect("export-fio-job")
    };

    let out = export(&root_only.join("job.fio"), false);
    assert!(!out.status.success(), "written into a root-only directory");
    assert_eq!(std::fs::read_dir(root_only).unwrap().count(), 0);

    let roots_file = dir.path().join("roots.conf");
    std::fs::write(&roots_file, b"root's").unwrap();
    let out = export(&roots_file, true);
    assert!(!out.status.success(), "replaced a root-owned file");
    assert_eq!(std::fs::read(&roots_file).unwrap(), b"root's");

    // A home made unsafe on purpose (so fsynclab distrusts it for the database) does not
    // bring root's rights back.
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = export(&root_only.join("job.fio"), false);
    assert!(
        !out.status.success(),
        "written as root once the home was distrusted"
    );
    assert_eq!(std::fs::read_dir(root_only).unwrap().count(), 0);
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700)).unwrap();

    // A bundle of the user's runs goes through its own writer: the same rule.
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let ran = scene
        .sudo_fsynclab()
        .args([
            "run",
            "--quiet",
            "--kernel-trace",
            "off",
            "--set",
            "duration_s=0.2",
        ])
        .arg("--target")
        .arg(&target)
        .output()
        .expect("run");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let bundle = |out: &Path| {
        let mut cmd = scene.sudo_fsynclab();
        cmd.args(["export", "--all", "--format", "bundle", "--out"])
            .arg(out);
        cmd.output().expect("export")
    };
    let out = bundle(&root_only.join("runs.bundle"));
    assert!(
        !out.status.success(),
        "bundle written into a root-only directory"
    );
    assert_eq!(std::fs::read_dir(root_only).unwrap().count(), 0);
    let out = bundle(&home.join("runs.bundle"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        owner(&home.join("runs.bundle")),
        user.uid,
        "the bundle is the user's"
    );

    let mine = home.join("job.fio");
    let out = export(&mine, false);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(owner(&mine), user.uid, "the job file is the user's");
}

/// `sudo fsynclab --db ~/lab/runs.sqlite`: the user swaps `lab` for a link to a directory
/// of their choice in the instant between fsynclab's checks of the explicit path and
/// SQLite's open (the test-support hook `store::race::before_sqlite_open`). The database,
/// its `-wal`/`-shm` and the run lock files must all go to the directory that was
/// checked: before, SQLite resolved the path again and root wrote them in the user's
/// chosen directory.
#[test]
fn an_explicit_db_dir_swapped_before_sqlite_opens_it_is_not_followed() {
    if !common::require_root("an_explicit_db_dir_swapped...", "useradd, chown") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let user = Attacker::new("d", &home);
    let lab = home.join("lab");
    std::fs::create_dir(&lab).unwrap();
    user.own(&lab);
    let theirs = dir.path().join("elsewhere");
    std::fs::create_dir(&theirs).unwrap();
    let db = fsynclab::store::anchor_database(&lab.join("runs.sqlite"), Some((user.uid, user.gid)))
        .unwrap();
    let (at, to, uid, gid) = (lab.clone(), theirs.clone(), user.uid, user.gid);
    fsynclab::store::race::before_sqlite_open(&db, move || {
        swap_for_link(&at, &at.with_file_name("lab-away"), &to);
        std::os::unix::fs::lchown(&at, Some(uid), Some(gid)).unwrap();
    });

    let id = open_begin_and_check(&db, &lab, dir.path(), &theirs);
    let checked = home.join("lab-away");
    assert_database_and_lock_in(&checked, "runs.sqlite", id);
}

/// What an explicit `--db` may name as root: under sudo only a directory of the invoking
/// user's own (a root-only directory, or one reached through the user's link to it, is
/// refused with exit 2 and nothing is made there; a new directory in their home is made
/// and theirs); as plain root a directory another user owns is refused, root's works.
#[test]
fn an_explicit_db_as_root_goes_only_where_the_rules_allow() {
    if !common::require_root("an_explicit_db_as_root...", "useradd, chown") {
        return;
    }
    let scene = SudoScene::new("e");
    let (home, user, root_home, root_only) =
        (&scene.home, &scene.user, &scene.root_home, &scene.root_only);
    let link = home.join("to-root");
    std::os::unix::fs::symlink(root_only, &link).unwrap();
    user.own(&link);
    // A command that stores (an import): a reading one makes no database.
    let list = |mut cmd: std::process::Command, db: &Path| {
        cmd.arg("--db")
            .arg(db)
            .arg("import")
            .arg(FIO_OUTPUT)
            .output()
            .expect("import")
    };
    for db in [root_only.join("runs.sqlite"), link.join("runs.sqlite")] {
        let out = list(user.sudo_fsynclab(root_home), &db);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", db.display());
        assert!(
            err.contains("not safe for root") && err.contains("--db"),
            "{err}"
        );
        assert!(
            common::entries(root_only).is_empty(),
            "made in {}",
            db.display()
        );
    }
    // A reading command walks and checks the same way, and makes nothing where the
    // database does not exist yet.
    let read = |db: &Path| {
        let mut cmd = user.sudo_fsynclab(root_home);
        cmd.arg("--db").arg(db).arg("list").output().expect("list")
    };
    let out = read(&root_only.join("runs.sqlite"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = read(&home.join("new/dir/runs.sqlite"));
    common::assert_success(&out, "sudo fsynclab list of a database not made yet");
    assert!(
        !home.join("new").exists(),
        "a reading command made a directory"
    );
    let mine = home.join("lab/runs.sqlite");
    let out = list(user.sudo_fsynclab(root_home), &mine);
    common::assert_success(&out, "sudo fsynclab --db in the user's own directory");
    assert!(mine.is_file());
    assert_eq!(
        owner(&home.join("lab")),
        user.uid,
        "the directory made is the user's"
    );

    // Plain root (no sudo): the attacker's directory is refused, root's own works.
    let plain = |db: &Path| {
        let mut cmd = common::bare_cmd();
        cmd.env_remove("SUDO_UID")
            .env_remove("SUDO_USER")
            .env("HOME", root_home);
        list(cmd, db)
    };
    let out = plain(&home.join("lab/other.sqlite"));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!home.join("lab/other.sqlite").exists());
    let out = plain(&root_only.join("runs.sqlite"));
    common::assert_success(&out, "root's --db in root's directory");
    assert_eq!(owner(&root_only.join("runs.sqlite")), 0);
}

/// A plain user's own `--db` is theirs to choose: not checked, not anchored, works.
#[test]
fn a_plain_users_own_db_keeps_working() {
    use std::os::unix::fs::PermissionsExt as _;
    if !common::require_root("a_plain_users_own_db...", "useradd, setpriv") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.path().join("home");
    let user = Attacker::new("u", &home);
    let db = home.join("any/where/runs.sqlite");
    // A command that stores (an import of a copy the user may read).
    let output = dir.path().join("fio.json");
    std::fs::copy(FIO_OUTPUT, &output).unwrap();
    std::fs::set_permissions(&output, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            &user.uid.to_string(),
            "--regid",
            &user.gid.to_string(),
        ])
        .args(["--clear-groups", "--"])
        .arg(assert_cmd::cargo::cargo_bin("fsynclab"))
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&output)
        .env("HOME", &home)
        .env_remove("SUDO_UID")
        .env_remove("SUDO_USER")
        .env_remove("FSYNCLAB_DB")
        .output()
        .expect("setpriv");
    common::assert_success(&out, "a user's own --db");
    assert_eq!(owner(&db), user.uid);
}

/// A user allowed only `sudo fsynclab` names a root-only file as a preset, a fio job, fio
/// output or a bundle: it must be read with the user's rights, so it is refused (permission
/// denied) and nothing of it is quoted. Before, root read it and the parse error quoted its
/// keys (`unknown field `secretkey``), values and positions (`/etc/shadow:1:26`), and a
/// root-only database could be imported into the user's own.
#[test]
fn input_files_under_sudo_are_read_with_the_users_rights() {
    if !common::require_root("input_files_under_sudo...", "useradd, setfsuid") {
        return;
    }
    let scene = SudoScene::new("i");
    let (dir, home, user, root_home, root_only) = (
        &scene.dir,
        &scene.home,
        &scene.user,
        &scene.root_home,
        &scene.root_only,
    );
    let secret = root_only.join("secret.toml");
    std::fs::write(&secret, "secretkey = \"hunter2\"\n").unwrap();
    let fio_out = root_only.join("fio.json");
    std::fs::copy(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures/fio/A-ext4.out"),
        &fio_out,
    )
    .unwrap();
    // Root's own database with a run, as a bundle-shaped file.
    let roots_db = root_only.join("roots.sqlite");
    let ran = common::bare_cmd()
        .env_remove("SUDO_UID")
        .arg("--db")
        .arg(&roots_db)
        .args([
            "run",
            "--quiet",
            "--kernel-trace",
            "off",
            "--set",
            "duration_s=0.2",
        ])
        .arg("--target")
        .arg(dir.path())
        .output()
        .unwrap();
    common::assert_success(&ran, "root's own run");
    let attempts: [Vec<std::ffi::OsString>; 4] = [
        vec![
            "export-fio-job".into(),
            "--preset".into(),
            secret.clone().into(),
        ],
        vec![
            "run".into(),
            "--fio-job".into(),
            secret.clone().into(),
            "--target".into(),
            home.clone().into(),
        ],
        vec!["import".into(), fio_out.into()],
        vec!["import".into(), roots_db.into()],
    ];
    for args in attempts {
        let out = user.sudo_fsynclab(root_home).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{args:?} read a root-only file: {err}"
        );
        assert!(
            !err.contains("secretkey") && !err.contains("hunter2") && !err.contains(":1:"),
            "{args:?} quoted the root-only file: {err}"
        );
        assert!(
            err.contains("with your own rights"),
            "{args:?}: the refusal does not say why: {err}"
        );
    }
    let data = home.join(".local/share/fsynclab/fsynclab.sqlite");
    if data.exists() {
        let out = user
            .sudo_fsynclab(root_home)
            .args(["list", "--json"])
            .output()
            .unwrap();
        let runs = common::payload(&out.stdout, "runs");
        assert_eq!(runs.as_array().map(Vec::len), Some(0), "imported: {runs}");
    }
}

/// Opens the store at `db` (a race hook swaps `swapped` for a link inside the open), then
/// opens by path what later steps open — the persister's connection, a run's lock file —
/// and asserts root made nothing in `theirs` while the store was open or after. The run id.
fn open_begin_and_check(db: &Path, swapped: &Path, target: &Path, theirs: &Path) -> i64 {
    use fsynclab::store::{NewRun, Store};
    let store = Store::open(db).unwrap();
    assert!(
        std::fs::read_link(swapped).is_ok(),
        "the swap did not happen"
    );
    let second = store.reopen().unwrap().unwrap();
    let new = NewRun::new(Default::default(), Default::default(), target);
    let id = store.begin_run(&new).unwrap();
    drop(second);
    let planted = common::entries(theirs);
    drop(store);
    let planted_after = common::entries(theirs);
    assert!(
        planted.is_empty() && planted_after.is_empty(),
        "root made {planted:?} / {planted_after:?} in the user's chosen directory"
    );
    id
}

/// Root's database `name` and run `id`'s lock file are in `checked`: the directory as it was
/// checked, wherever the user's swap moved it.
fn assert_database_and_lock_in(checked: &Path, name: &str, id: i64) {
    assert!(
        checked.join(name).is_file(),
        "{name} not in {}",
        checked.display()
    );
    let lock = checked.join(format!("{name}.locks/run-{id}.lock"));
    assert!(lock.is_file(), "{} missing", lock.display());
}
