//! A scope's count latch for the loom model (`tests/loom_scope.rs`); only with
//! `--cfg loom`. Not an API. The owner is the thread that creates it and waits outside any
//! pool (a `ParkLatch`), as for `in_place_scope` called from a non-worker thread.

use crate::latch::CountLatch;
use crate::pool::worker::WorkerThread;

/// A scope's count of outstanding jobs, plus one for its body.
pub struct ModelCountLatch(CountLatch);

impl std::fmt::Debug for ModelCountLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelCountLatch").finish_non_exhaustive()
    }
}

impl ModelCountLatch {
    /// A latch with `count` outstanding jobs, owned by the calling thread.
    pub fn new(count: usize) -> Self {
        ModelCountLatch(CountLatch::with_count(count, None::<&WorkerThread>))
    }
    /// A job spawns one more job (`Scope::spawn` from inside the scope).
    pub fn increment(&self) {
        self.0.increment()
    }
    /// `n` jobs finished (one job, or a worker's deferred run of `n`).
    ///
    /// # Safety
    /// The caller holds `n` counts, and the latch outlives the call.
    pub unsafe fn count_down(&self, n: usize) {
        // SAFETY: forwarded.
        unsafe { CountLatch::count_down(&self.0, n) }
    }
    /// The owner waits until the count is zero.
    pub fn wait(&self) {
        self.0.wait(None::<&WorkerThread>)
    }
}
