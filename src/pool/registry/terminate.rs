//! The terminate count: how many references keep a pool's workers alive (the pool handle,
//! and every `spawn*` job until it ran), and the `wait_idle` callers waiting for it to fall
//! back to the handle's one. Its own type so that the loom model (`tests/loom_lifecycle.rs`)
//! checks this very code.

use crate::sync::checked::{fence, AtomicUsize, Condvar, Mutex};
use crate::sync::Ordering;

/// A registry's terminate count and its `wait_idle` waiters.
pub(crate) struct TerminateCount {
    /// References: the pool handle's, plus one per `spawn*` job until it ran; 0 once the
    /// pool terminated.
    count: AtomicUsize,
    /// Threads inside `wait_idle`.
    waiters: AtomicUsize,
    /// Guards the `condvar` waits and notifications.
    lock: Mutex<()>,
    /// Wakes the `wait_idle` callers when the count falls back to the handle's one.
    condvar: Condvar,
}

/// What a [`TerminateCount::release`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// The last reference: the pool terminates (its workers must be told).
    Terminated,
    /// Other references remain.
    Alive,
}

impl TerminateCount {
    /// A count of `references` (1: the pool handle).
    pub(crate) fn new(references: usize) -> Self {
        TerminateCount {
            count: AtomicUsize::new(references),
            waiters: AtomicUsize::new(0),
            lock: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    /// `n` more references. Returns `false`, and changes nothing, if the count already
    /// reached zero (the pool terminated).
    #[inline]
    pub(crate) fn acquire(&self, n: usize) -> bool {
        let mut count = self.count.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                return false;
            }
            // Relaxed: a non-zero count means the caller's own reference (pool handle or
            // running spawn job) keeps it from reaching zero concurrently, as with
            // `Arc::clone`; the job itself is published by the deque push that follows.
            match self.count.compare_exchange_weak(
                count,
                count + n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => count = actual,
            }
        }
    }

    /// Drops one reference. When only the pool handle's is left, wakes `wait_idle`.
    pub(crate) fn release(&self) -> Released {
        match self.count.fetch_sub(1, Ordering::SeqCst) {
            1 => Released::Terminated,
            2 => {
                // A store-load pair with `wait_idle` (our decrement, then its waiter count;
                // its registration, then our count): the fences make at least one side see
                // the other's store. SeqCst accesses alone would do on hardware, but loom
                // models them as acquire/release and finds the lost wake-up they allow
                // there; SeqCst fences it models exactly (`tests/loom_lifecycle.rs`).
                // Only when the pool drains, so the common release pays nothing.
                fence(Ordering::SeqCst);
                if self.waiters.load(Ordering::SeqCst) > 0 {
                    let _guard = self.lock.lock();
                    self.condvar.notify_all();
                }
                Released::Alive
            }
            _ => Released::Alive,
        }
    }

    /// Blocks until only one reference (the pool handle's) is left. The caller must hold
    /// that reference and must not hold another.
    pub(crate) fn wait_idle(&self) {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // The other half of the store-load pair in `release`.
        fence(Ordering::SeqCst);
        let mut guard = self.lock.lock();
        while self.count.load(Ordering::SeqCst) > 1 {
            guard = self.condvar.wait(guard);
        }
        drop(guard);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}
