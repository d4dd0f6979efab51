//! A pool's terminate count for the loom model (`tests/loom_lifecycle.rs`); only with
//! `--cfg loom`. Not an API.

use crate::pool::registry::{Released, TerminateCount};

/// The references that keep a pool alive (the handle, each `spawn` job until it ran),
/// and `wait_idle`.
pub struct ModelTerminateCount(TerminateCount);

impl std::fmt::Debug for ModelTerminateCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTerminateCount")
            .finish_non_exhaustive()
    }
}

impl ModelTerminateCount {
    /// A count of `references`.
    pub fn new(references: usize) -> Self {
        ModelTerminateCount(TerminateCount::new(references))
    }
    /// A `spawn` (the caller holds a reference); `false` once terminated.
    pub fn acquire(&self, n: usize) -> bool {
        self.0.acquire(n)
    }
    /// A job ran, or the handle was dropped; `true` if that terminated the pool.
    pub fn release(&self) -> bool {
        self.0.release() == Released::Terminated
    }
    /// `ThreadPool::wait_idle`: until only the handle's reference is left.
    pub fn wait_idle(&self) {
        self.0.wait_idle()
    }
}
