//! The latch several outside threads wait on (a pool's start-up and shutdown) for the
//! loom model (`tests/loom_latch.rs`); only with `--cfg loom`. Not an API.

use crate::latch::{Latch, LockLatch};

/// A `LockLatch`: any number of waiters, one setter.
#[derive(Debug)]
pub struct ModelLockLatch(LockLatch);

impl Default for ModelLockLatch {
    fn default() -> Self {
        ModelLockLatch(LockLatch::new())
    }
}

impl ModelLockLatch {
    /// Blocks until set.
    pub fn wait(&self) {
        self.0.wait()
    }
    /// Sets it (waking every waiter).
    pub fn set(&self) {
        // SAFETY: borrowed, so alive for the whole call.
        unsafe { LockLatch::set(&self.0) }
    }
}
