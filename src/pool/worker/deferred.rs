//! Deferred work: counts a worker owes to scopes and arena chunks, delivered together.
//!
//! Two kinds of completion are deferred, with one shape, a [`Tally`] of `(target, n)`:
//!
//! * **Count-downs.** Each scope job ends by counting its scope's [`CountLatch`] down, an
//!   atomic read-modify-write on a line that the spawning worker writes for every
//!   `spawn`. When another worker runs the jobs, every completion would move that line
//!   between the two cores, and tiny jobs would run slower on two workers than on one
//!   (`docs/performance.md`). The worker keeps `(latch, n)` for the scope whose jobs
//!   it has just run and subtracts `n` in one operation when it moves on.
//! * **Chunk releases.** A scope job allocated in another worker's arena gives its
//!   reference to the chunk back (`job::arena`); the worker keeps `(chunk, n)` and
//!   subtracts `n` at once, for the same reason.
//!
//! Jobs defer ([`WorkerThread::count_down_later`], [`WorkerThread::release_later`]);
//! only a [`JobRun`] delivers, and a `JobRun` is the only way to run a job on a worker.
//! Dropping it delivers everything, so a loop that runs jobs cannot return to its caller
//! still holding a count: the settling is in one place, the handle's `Drop`.
//!
//! A deferred count-down keeps its scope from completing, so it must never be held while
//! this worker could wait for something else, or sit idle. The rule: counts are held only
//! between jobs **of the same scope** run by one loop. They are delivered
//!
//! * before any job that is not a scope job runs ([`JobRun::execute`]), and before a
//!   scope job of another scope runs ([`WorkerThread::scope_job_starts`]);
//! * before the worker searches other queues or parks (the wait loop's
//!   [`RunJobs::settle`] when it runs out of local work);
//! * when the loop that ran the jobs ends (the `JobRun` drops): the end of a wait, of a
//!   `join` popping its deque, of a yield, of a worker's last jobs;
//! * right after a job, when a loop waits for the scope's own latch and the deferred
//!   counts are all the latch still waits for ([`RunJobs::settle_for`]): the loop must
//!   see its latch set before it takes another job, as it would without deferring.
//!
//! So whenever code other than a job of scope `S` runs on this worker, no count is
//! deferred; and while a job of `S` runs, only counts of `S` may be deferred, which
//! cannot delay anything: `S` cannot complete before that running job anyway. The
//! owner of `S` waits no longer than for the run of `S`'s jobs this worker is in.
//! Chunk releases only free memory; nobody waits for them.

use super::WorkerThread;
use crate::job::{Chunk, JobRef};
use crate::latch::{CoreLatch, CountLatch};
use std::cell::Cell;
use std::ptr;

/// Something that takes `n` deferred counts in one operation.
trait Deliver {
    /// # Safety
    /// The caller hands over `n` counts for `this`, which keep it alive until this call.
    unsafe fn deliver(this: *const Self, n: usize);
}

impl Deliver for CountLatch {
    unsafe fn deliver(this: *const Self, n: usize) {
        // SAFETY: forwarded.
        unsafe { CountLatch::count_down(this, n) }
    }
}

impl Deliver for Chunk {
    unsafe fn deliver(this: *const Self, n: usize) {
        // SAFETY: forwarded.
        unsafe { Chunk::release(this, n) }
    }
}

/// `n` counts owed to `target`, delivered together. `target` is null exactly when `n`
/// is zero (`settle_cold` clears both, `add` sets both).
struct Tally<T: Deliver> {
    /// What the counts are owed to; null while none are held.
    target: Cell<*const T>,
    /// The counts held.
    n: Cell<usize>,
}

impl<T: Deliver> Tally<T> {
    /// A tally that holds nothing.
    const fn new() -> Self {
        Tally {
            target: Cell::new(ptr::null()),
            n: Cell::new(0),
        }
    }

    /// Whether counts for `target` (not null) are held: one comparison, as `target` is
    /// null while none are.
    #[inline]
    fn holds(&self, target: *const T) -> bool {
        ptr::eq(self.target.get(), target)
    }

    /// One more count for `target` (not null), after delivering those held for another
    /// target. Returns whether `target` is new (nothing was held for it).
    ///
    /// # Safety
    /// The caller hands over one count for `target`.
    #[inline]
    unsafe fn add(&self, target: *const T) -> bool {
        let new = !self.holds(target);
        if new {
            self.settle();
            self.target.set(target);
        }
        self.n.set(self.n.get() + 1);
        new
    }

    /// Delivers the held counts, if any.
    #[inline]
    fn settle(&self) {
        if self.n.get() != 0 {
            self.settle_cold();
        }
    }

    /// Delivers the held counts, which must be more than zero.
    #[cold]
    fn settle_cold(&self) {
        let target = self.target.replace(ptr::null());
        let n = self.n.replace(0);
        // SAFETY: the `n` counts were handed over by `add`, and keep `target` alive until
        // they are delivered here.
        unsafe { T::deliver(target, n) };
    }
}

/// A worker's deferred work: count-downs for one scope, releases for one chunk.
pub(super) struct DeferredWork {
    /// Count-downs owed to one scope's latch.
    count_downs: Tally<CountLatch>,
    /// `CountLatch::owner_latch` of the count-downs' latch, read once per run of jobs.
    owner_latch: Cell<*const CoreLatch>,
    /// References owed to one arena chunk.
    releases: Tally<Chunk>,
}

impl DeferredWork {
    /// Deferred work that holds nothing.
    pub(super) const fn new() -> Self {
        DeferredWork {
            count_downs: Tally::new(),
            owner_latch: Cell::new(ptr::null()),
            releases: Tally::new(),
        }
    }
}

impl DeferredWork {
    /// Delivers everything held.
    #[inline]
    fn settle(&self) {
        self.count_downs.settle();
        self.releases.settle();
    }

    /// Delivers the count-downs if they are all that `latch` (a scope owner's latch) still
    /// waits for: see [`RunJobs::settle_for`].
    #[inline]
    fn settle_for(&self, latch: &CoreLatch) {
        let target = self.count_downs.target.get();
        if target.is_null() || !ptr::eq(self.owner_latch.get(), latch) {
            return;
        }
        // SAFETY: the held counts keep the deferred latch alive (`count_down_later`).
        if unsafe { (*target).count_is(self.count_downs.n.get()) } {
            self.count_downs.settle_cold();
        }
    }
}

impl Drop for DeferredWork {
    fn drop(&mut self) {
        self.settle();
    }
}

/// The deferring side, called by the jobs.
impl WorkerThread {
    /// A scope job of `latch`'s scope is about to run its body: delivers counts deferred
    /// for any other scope first.
    #[inline]
    pub(crate) fn scope_job_starts(&self, latch: *const CountLatch) {
        if !self.deferred.count_downs.holds(latch) {
            self.deferred.count_downs.settle();
        }
    }

    /// A scope job of `latch`'s scope finished: its count-down waits in this worker until
    /// the loop that runs it settles.
    ///
    /// # Safety
    /// The caller is a job of `latch`'s scope that has not counted down yet: the count
    /// it hands over keeps the latch alive until it is delivered.
    #[inline]
    pub(crate) unsafe fn count_down_later(&self, latch: *const CountLatch) {
        // SAFETY: the caller's count, handed over.
        if unsafe { self.deferred.count_downs.add(latch) } {
            // Read once per run of jobs, not per job: the latch's line is the one the
            // spawning worker increments for every `spawn`.
            // SAFETY: the count just added keeps the latch alive.
            let owner_latch = unsafe { (*latch).owner_latch() };
            self.deferred.owner_latch.set(owner_latch);
        }
    }

    /// A job of `chunk` ran on this worker: gives its reference back later.
    ///
    /// # Safety
    /// The caller hands over one reference to `chunk`.
    #[inline]
    pub(crate) unsafe fn release_later(&self, chunk: *const Chunk) {
        // SAFETY: forwarded.
        unsafe { self.deferred.releases.add(chunk) };
    }

    /// A run of jobs on this worker: see [`JobRun`].
    #[inline]
    pub(crate) fn run_jobs(&self) -> JobRun<'_> {
        JobRun { worker: self }
    }
}

/// What a loop that runs jobs needs: running one, and delivering what they deferred. The
/// real one is [`JobRun`]; the loom model's has nothing to defer. Why a trait: the wait
/// loop ([`Waiter`](super::Waiter)) is shared with the loom model, whose worker runs its
/// jobs without a `WorkerThread`.
pub(crate) trait RunJobs {
    /// Runs a job taken from any queue (the caller counted where it came from).
    fn execute(&self, job: JobRef);
    /// Delivers everything deferred: before searching other queues or parking.
    fn settle(&self);
    /// After a job, in a loop waiting for `latch`: if the count-downs deferred here are
    /// all that `latch` still waits for (the loop's own scope, whose last jobs it just
    /// ran), delivers them, so that the loop sees its latch set before it takes another
    /// job, exactly as without deferring. Taking one more job there could run one that
    /// blocks until the waiting code goes on (`tests/lazy_join.rs`, a wait inside the
    /// first half).
    fn settle_for(&self, latch: &CoreLatch);
}

/// One loop's run of jobs on a worker: the only way to execute a job there. Dropping it
/// delivers everything the jobs deferred, so the loop's caller never runs while a count
/// is held. Nested loops (a `join` inside a job) have their own; they share the worker's
/// deferred work.
pub(crate) struct JobRun<'w> {
    /// The worker the jobs run on, whose deferred work this run delivers.
    worker: &'w WorkerThread,
}

impl RunJobs for JobRun<'_> {
    /// A job that is not a scope job first gets the count-downs deferred by the scope
    /// jobs before it.
    #[inline]
    fn execute(&self, job: JobRef) {
        if !job.is_scope_job() {
            self.worker.deferred.count_downs.settle();
        }
        self.worker.execute_job(job);
    }

    #[inline]
    fn settle(&self) {
        self.worker.deferred.settle();
    }

    #[inline]
    fn settle_for(&self, latch: &CoreLatch) {
        self.worker.deferred.settle_for(latch);
    }
}

impl Drop for JobRun<'_> {
    #[inline]
    fn drop(&mut self) {
        self.settle();
    }
}
