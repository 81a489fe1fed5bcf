//! What needs root or the system: loop devices, mounts, tracefs, fio servers, other users.
//! With CI=true none of these skips; outside CI a test without root says why it skips.

// The helpers every test binary shares (the lab directory, the binary, the skip rule).
#[path = "../../../../tests/common/mod.rs"]
mod common;
mod schema_doc_common;
mod scratch_common;

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
mod security_target;
mod uring_disabled;
mod uring_loop;
