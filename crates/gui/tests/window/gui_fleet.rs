//! The Fleet tab driven headless with egui_kittest: the hosts list edited (add, type,
//! remove), a bad host and a bad target said inline with Run off, a check against a
//! closed port shown as unreachable, and a fleet run on two real `fio --server` processes
//! whose experiments open on the Compare tab.

use crate::gui_common;

use std::time::Duration;

use crate::common::fio_server::{ClosedPort, FioServer, fio_present};
use crate::gui_common::{retype, step_until};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use fsynclab_gui::{LabApp, Tab};

fn harness(dir: &tempfile::TempDir) -> Harness<'static, LabApp> {
    gui_common::harness_on(&dir.path().join("gui.sqlite"), Tab::Fleet)
}

fn shows(h: &Harness<'static, LabApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

#[test]
fn hosts_are_edited_and_checked_and_bad_input_is_said_inline() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(&dir);
    h.run_steps(3);
    assert!(shows(&h, "Fleet: one fio job on many machines"));

    // A bad host is said on its row; the Run button stays off.
    retype(&mut h, "Host 1", "db1,8766");
    assert!(
        shows(&h, "fio reads it as the port separator"),
        "no host message"
    );
    assert!(shows(&h, "fix the hosts marked above"));
    assert!(h.get_by_label("Run fleet").accesskit_node().is_disabled());

    // Add a second row, type a closed port into it, remove the bad first row.
    h.get_by_label("Add host").click();
    h.run_steps(2);
    let closed_port = ClosedPort::new();
    let port = closed_port.port;
    let closed = format!("127.0.0.1:{port}");
    retype(&mut h, "Host 2", &closed);
    h.query_all_by_label("Remove").next().unwrap().click();
    h.run_steps(2);
    assert_eq!(h.state().state.fleet.hosts, vec![closed.clone()]);
    assert!(!shows(&h, "port separator"));

    // The target on the servers is checked as text.
    assert!(shows(&h, "Target on the servers: target '': it is empty"));
    retype(&mut h, "Target on the servers", "/mnt/a:/mnt/b");
    assert!(shows(&h, "list of directories"));
    retype(&mut h, "Target on the servers", "/mnt/test");
    assert!(!shows(&h, "list of directories"));
    assert!(!h.get_by_label("Run fleet").accesskit_node().is_disabled());

    // The check shows the closed port as unreachable.
    h.get_by_label("Check servers").click();
    step_until(&mut h, "the check's answer", Duration::from_secs(20), |h| {
        shows(h, "unreachable:")
    });
    assert!(shows(&h, &format!("no fio server listens on port {port}")));
}

#[test]
fn a_fleet_run_on_two_servers_shows_progress_and_opens_compare() {
    if !fio_present("gui fleet run") {
        return;
    }
    let (a, b) = (FioServer::start(), FioServer::start());
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let job = dir.path().join("small.fio");
    std::fs::write(
        &job,
        "[w]\nrw=write\nbs=4k\nsize=256k\nfsync=4\nioengine=psync\n",
    )
    .unwrap();
    let mut h = harness(&dir);
    {
        let form = &mut h.state_mut().state.fleet;
        form.hosts = vec![a.host(), b.host()];
        form.use_job_file = true;
        form.job_file = job.display().to_string();
        form.target = target.path().display().to_string();
        form.label = "gui".into();
    }
    h.run_steps(3);
    h.get_by_label("Run fleet").click();
    step_until(&mut h, "both hosts stored", Duration::from_secs(60), |h| {
        h.query_all_by_label_contains("repetition 1 stored: run")
            .count()
            == 2
    });
    step_until(&mut h, "the compare button", Duration::from_secs(20), |h| {
        shows(h, "Compare 127.0.0.1:")
    });
    assert!(shows(&h, "Device flushes: not measured"));
    h.query_all_by_label_contains("Compare 127.0.0.1:")
        .next()
        .unwrap()
        .click();
    h.run_steps(3);
    let state = &h.state().state;
    assert_eq!(state.tab, Tab::Compare);
    assert!(
        state.compare_baseline.starts_with("exp:"),
        "{}",
        state.compare_baseline
    );
    assert!(state.compare_candidate.starts_with("exp:"));
    assert_ne!(state.compare_baseline, state.compare_candidate);
    step_until(&mut h, "the comparison", Duration::from_secs(30), |h| {
        h.state().cache.comparison.is_some() || h.state().cache.comparison_error.is_some()
    });
    assert!(
        h.state().cache.comparison_error.is_none(),
        "{:?}",
        h.state().cache.comparison_error
    );
}
