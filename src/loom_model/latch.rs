//! The latches outside threads wait on, for the loom model (`tests/loom_latch.rs`): the
//! `LockLatch` several threads wait on (a pool's start-up and shutdown), and the
//! `ParkLatch` one outside thread parks on (its `install` or `join` running on a worker).
//! Only with `--cfg loom`. Not an API.

use crate::latch::{Latch, LockLatch, ParkLatch};

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

/// A `ParkLatch`: its owner (the thread that created it) parks until a worker sets it.
#[derive(Debug)]
pub struct ModelParkLatch(ParkLatch);

impl Default for ModelParkLatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelParkLatch {
    /// A latch owned by the calling thread.
    pub fn new() -> Self {
        ModelParkLatch(ParkLatch::new())
    }
    /// The owner parks until set.
    pub fn wait(&self) {
        self.0.wait()
    }
    /// Sets it (unparking the owner).
    pub fn set(&self) {
        // SAFETY: borrowed, so alive for the whole call.
        unsafe { ParkLatch::set(&self.0) }
    }
}
