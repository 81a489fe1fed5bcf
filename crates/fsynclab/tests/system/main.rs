//! What needs root or the system: loop devices, mounts, tracefs, fio servers, other users.
//! With CI=true none of these skips; outside CI a test without root says why it skips.

// The helpers every test binary shares (the lab directory, the binary, the skip rule).
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod schema_doc_common;
mod scratch_common;

/// `clean` sweeps the trace instance of every dead run on the machine, not only its own
/// lab's: a test that kills a traced run and checks what removed its instance holds this
/// from the kill to the check, and every other test's `clean` holds it while it runs.
pub fn clean_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

mod advise;
mod advise_device;
mod cli_scratch;
mod cli_sudo;
mod crashcheck;
mod crashdev;
mod crashfs;
mod crashtest_cli;
mod crashtest_kill;
mod crashtest_run;
mod dirfd_attack;
mod fleet;
mod ktrace;
mod option_attacks;
mod rawdev;
mod rawdev_more;
mod rawdev_run;
mod schema_doc;
mod scratch;
mod scratch_safety;
mod security;
mod security_default_db;
mod security_target;
mod uring_disabled;
mod uring_loop;
