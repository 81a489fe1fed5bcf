//! Background work for the window: [`Task`] runs a closure on a named thread, keeps its
//! result for the UI to poll without blocking, and wakes the window when it is done. A
//! thread that cannot be started is an error the caller shows; a thread that ends without
//! a result (it panicked) is [`TaskLost`], never a silent hang.

use std::io;
use std::sync::mpsc::{self, Receiver, TryRecvError};

/// Work running on its own thread; its result arrives once.
#[derive(Debug)]
pub struct Task<T> {
    rx: Receiver<T>,
}

/// The thread of a [`Task`] ended without a result (it panicked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the background thread stopped without an answer (it panicked: a bug in fsynclab; the terminal \
     that started the window shows the panic message — please report it)"
)]
pub struct TaskLost;

impl<T: Send + 'static> Task<T> {
    /// Runs `work` on a new thread named `name`. When `work` returns, its value is kept
    /// for [`Task::poll`] and `repaint` (if any) is asked to repaint, so the window shows
    /// it without waiting for the next input. The error is the reason the thread could
    /// not be started.
    pub fn spawn(
        name: &str,
        repaint: Option<&egui::Context>,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<Task<T>> {
        let (tx, rx) = mpsc::channel();
        let repaint = repaint.cloned();
        spawn_named(name, move || {
            let _ = tx.send(work());
            if let Some(ctx) = repaint {
                ctx.request_repaint();
            }
        })?;
        Ok(Task { rx })
    }
}

impl<T> Task<T> {
    /// The result when the work is done, `None` while it runs; never blocks.
    pub fn poll(&self) -> Option<Result<T, TaskLost>> {
        match self.rx.try_recv() {
            Ok(value) => Some(Ok(value)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(TaskLost)),
        }
    }

    /// Polls the task in `slot` and empties the slot once it is done (or lost); `None`
    /// while it runs or when there is none.
    pub fn take_done(slot: &mut Option<Task<T>>) -> Option<Result<T, TaskLost>> {
        let done = slot.as_ref()?.poll()?;
        *slot = None;
        Some(done)
    }
}

/// Starts `work` on a new thread named `name` (the one way the window starts threads:
/// long-lived workers such as the database's use it directly).
pub fn spawn_named(name: &str, work: impl FnOnce() + Send + 'static) -> io::Result<()> {
    #[cfg(test)]
    if REFUSE_SPAWNS.with(std::cell::Cell::get) {
        return Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "thread limit reached (refused by a test)",
        ));
    }
    std::thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .map(drop)
}

#[cfg(test)]
thread_local! {
    /// When set, [`spawn_named`] on this thread fails as `pthread_create` does at the
    /// thread limit.
    static REFUSE_SPAWNS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes [`spawn_named`] on this thread fail (`true`) or work again (tests only).
#[cfg(test)]
pub(crate) fn refuse_spawns(refuse: bool) {
    REFUSE_SPAWNS.with(|r| r.set(refuse));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Polls until `task` is done (tests only: the UI never waits).
    fn wait<T>(task: &Task<T>) -> Result<T, TaskLost> {
        let start = Instant::now();
        loop {
            if let Some(done) = task.poll() {
                return done;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "task hung");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_task_runs_on_its_named_thread_and_its_result_arrives_once() {
        let (go, gate) = mpsc::channel::<()>();
        let task = Task::spawn("fsynclab-test-task", None, move || {
            gate.recv().unwrap();
            std::thread::current().name().map(str::to_string)
        })
        .unwrap();
        // Still running: polling does not block and reports nothing.
        assert!(task.poll().is_none());
        go.send(()).unwrap();
        assert_eq!(wait(&task), Ok(Some("fsynclab-test-task".into())));
        // Taken: the channel is closed now, and the slot helper clears its slot.
        let mut slot = Some(Task::spawn("fsynclab-test-task", None, || 7).unwrap());
        let start = Instant::now();
        let done = loop {
            if let Some(done) = Task::take_done(&mut slot) {
                break done;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "task hung");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(done, Ok(7));
        assert!(slot.is_none());
        assert!(Task::take_done(&mut slot).is_none());
    }

    #[test]
    fn a_finished_task_asks_the_window_to_repaint() {
        let ctx = egui::Context::default();
        let repaints = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = repaints.clone();
        ctx.set_request_repaint_callback(move |_| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let task = Task::spawn("fsynclab-test-repaint", Some(&ctx), || "done").unwrap();
        assert_eq!(wait(&task), Ok("done"));
        // The repaint comes right after the result is sent.
        let start = Instant::now();
        while repaints.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no repaint asked"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_thread_that_panics_is_lost_not_pending_forever() {
        let task = Task::spawn("fsynclab-test-panic", None, || -> u32 {
            panic!("deliberate panic in a background task")
        })
        .unwrap();
        assert_eq!(wait(&task), Err(TaskLost));
    }

    #[test]
    fn a_thread_that_cannot_start_is_an_error_for_the_caller() {
        refuse_spawns(true);
        let refused = Task::spawn("fsynclab-test-refused", None, || 1);
        let worker = spawn_named("fsynclab-test-refused", || {});
        refuse_spawns(false);
        let e = refused.unwrap_err();
        assert!(e.to_string().contains("thread limit"), "{e}");
        assert!(worker.is_err());
        assert_eq!(
            wait(&Task::spawn("fsynclab-test-again", None, || 2).unwrap()),
            Ok(2)
        );
    }
}
