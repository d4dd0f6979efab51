//! Deferred count-downs: a worker that runs several jobs of one scope in a row reports
//! their completions to the scope's [`CountLatch`] once, not once per job.
//!
//! Each scope job ends by counting its scope's latch down, an atomic read-modify-write on
//! a line that the spawning worker writes for every `spawn`. When another worker runs the
//! jobs, every completion moves that line between the two cores: with a million tiny
//! jobs, two workers were three times slower than one (`docs/performance.md`). Instead,
//! the worker keeps `(latch, n)` for the scope whose jobs it has just run and subtracts
//! `n` in one operation when it moves on.
//!
//! A deferred count keeps its scope from completing, so it must never be held while this
//! worker could wait for something else, or sit idle. The rule: counts are held only
//! between jobs **of the same scope** run by one scheduling loop. They are delivered
//!
//! * before any job that is not a scope job runs ([`WorkerThread::execute`]), and
//!   before a scope job of another scope runs ([`WorkerThread::scope_job_starts`]);
//! * before the worker searches other queues or parks (it ran out of local work);
//! * before any loop that runs jobs returns to the code that called it: the end of a
//!   wait, of a `join` popping its deque, or of a yield;
//! * right after a job, when a loop waits for the scope's own latch and the deferred
//!   counts are all the latch still waits for: the loop must see its latch set before it
//!   takes another job, as it would without deferring.
//!
//! So whenever code other than a job of scope `S` runs on this worker, no count is
//! deferred; and while a job of `S` runs, only counts of `S` may be deferred, which
//! cannot delay anything: `S` cannot complete before that running job anyway. The
//! owner of `S` waits no longer than for the run of `S`'s jobs this worker is in.

use super::WorkerThread;
use crate::job::{Chunk, JobArena};
use crate::latch::{CoreLatch, CountLatch};
use std::cell::Cell;
use std::ptr;

/// A worker's deferred count-downs: `count` completions of jobs of the scope whose latch
/// is `latch` (the pair `DeferredReleases` keeps for arena chunks), and the core latch
/// that scope's owner waits on, read once per run of jobs.
pub(super) struct DeferredCountDowns {
    latch: Cell<*const CountLatch>,
    count: Cell<usize>,
    /// `CountLatch::owner_latch` of `latch`.
    owner_latch: Cell<*const CoreLatch>,
}

impl Default for DeferredCountDowns {
    fn default() -> Self {
        DeferredCountDowns {
            latch: Cell::new(ptr::null()),
            count: Cell::new(0),
            owner_latch: Cell::new(ptr::null()),
        }
    }
}

impl WorkerThread {
    /// A scope job of `latch`'s scope is about to run its body: delivers counts deferred
    /// for any other scope first.
    #[inline]
    pub(crate) fn scope_job_starts(&self, latch: *const CountLatch) {
        if !ptr::eq(self.count_downs.latch.get(), latch) {
            self.flush_count_downs();
        }
    }

    /// A scope job of `latch`'s scope finished: its count-down waits in this worker until
    /// the next [`flush_count_downs`](Self::flush_count_downs).
    ///
    /// # Safety
    /// The caller is a job of `latch`'s scope that has not counted down yet: the count
    /// it hands over keeps the latch alive until it is delivered.
    #[inline]
    pub(crate) unsafe fn count_down_later(&self, latch: *const CountLatch) {
        if self.count_downs.count.get() == 0 || !ptr::eq(self.count_downs.latch.get(), latch) {
            self.flush_count_downs();
            self.count_downs.latch.set(latch);
            // Read once per run of jobs, not per job: the latch's line is the one the
            // spawning worker increments for every `spawn`.
            // SAFETY: the caller's count keeps the latch alive.
            self.count_downs
                .owner_latch
                .set(unsafe { (*latch).owner_latch() });
        }
        self.count_downs.count.set(self.count_downs.count.get() + 1);
    }

    /// A loop waiting for `latch` ran a job: if the counts deferred here are all that
    /// `latch` still waits for (the loop's own scope, whose last jobs it just ran),
    /// delivers them, so that the loop sees its latch set before it takes another job,
    /// exactly as without deferring. Taking one more job there could run one that blocks
    /// until the waiting code goes on (`tests/lazy_join.rs`, a wait inside the first half).
    #[inline]
    pub(crate) fn flush_count_downs_for(&self, latch: &CoreLatch) {
        let n = self.count_downs.count.get();
        if n == 0 || !ptr::eq(self.count_downs.owner_latch.get(), latch) {
            return;
        }
        // SAFETY: `n > 0` counts keep the deferred latch alive (`count_down_later`).
        if unsafe { (*self.count_downs.latch.get()).count_is(n) } {
            self.flush_count_downs_cold();
        }
    }

    /// Delivers the deferred count-downs, if any (see the module docs for when).
    #[inline]
    pub(crate) fn flush_count_downs(&self) {
        if self.count_downs.count.get() != 0 {
            self.flush_count_downs_cold();
        }
    }

    #[cold]
    fn flush_count_downs_cold(&self) {
        let latch = self.count_downs.latch.replace(ptr::null());
        let n = self.count_downs.count.replace(0);
        // SAFETY: the `n` counts were handed over by jobs of this latch's scope
        // (`count_down_later`); the scope cannot complete, so the latch is alive, until
        // they are delivered here.
        unsafe { CountLatch::count_down(latch, n) };
    }
}

/// The worker's side of the scope-job arena (`job::arena`): the chunk it spawns into, and
/// the chunk references of the jobs it ran, given back together.
impl WorkerThread {
    /// The arena this worker's scope spawns allocate from.
    pub(crate) fn job_arena(&self) -> &JobArena {
        &self.job_arena
    }

    /// A job of `chunk` ran on this worker: gives its reference back later.
    ///
    /// # Safety
    /// The caller hands over one reference to `chunk`.
    #[inline]
    pub(crate) unsafe fn release_later(&self, chunk: *const Chunk) {
        // SAFETY: forwarded.
        unsafe { self.job_releases.release(chunk) }
    }
}
