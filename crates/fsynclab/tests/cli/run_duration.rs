//! `--duration` is one deadline for the whole run: many real writers on a small machine
//! end near it. In its own test binary so its 64 busy threads do not disturb the timing
//! tests of the library's unit tests running beside it.

use fsynclab::spec::FlatSpec;
use std::sync::mpsc;

use fsynclab::engine::{CancelToken, RunContext, run};
use fsynclab::metrics::RunStatus;
use fsynclab::spec::SyncMethod;

#[test]
fn many_threads_end_near_the_duration_on_a_real_target() {
    // Before the shared deadline each thread ran the full second from whenever it was
    // first scheduled after the start gate.
    let dir = tempfile::tempdir().unwrap();
    let spec = FlatSpec {
        threads: 64,
        block_size: 4096,
        file_size: 64 << 10,
        duration_s: Some(1.0),
        sync: SyncMethod::Fdatasync,
        ..FlatSpec::default()
    }
    .typed();
    let ctx = RunContext::new(1, dir.path().to_path_buf());
    let (tx, _rx) = mpsc::channel();
    let r = run(&spec, &ctx, &tx, &CancelToken::new()).unwrap();
    assert_eq!(r.status, RunStatus::Finished, "{:?}", r.error);
    let wall_s = r.wall_ns as f64 / 1e9;
    assert!(
        (0.9..2.5).contains(&wall_s),
        "a 1 s run of 64 threads took {wall_s:.2} s from first start to last end"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
