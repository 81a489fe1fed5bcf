//! fsynclab's measuring engine: every workload kind, the psync and io_uring backends, the
//! samplers and the live events a front end draws (`engine`).

#![warn(missing_docs)]

// The layers below, under the paths the engine has always used (`crate::spec`, …).
#[cfg(any(test, feature = "test-support"))]
use fsynclab_core::test_hooks;
#[cfg(test)]
use fsynclab_core::test_support;
use fsynclab_core::{cleanup, clock, crashlog, metrics, spec, target, uring};
use fsynclab_sys::{pathwalk, probe};

pub mod engine;
