//! The sleep/wake protocol's pieces for the loom model (`tests/loom_sleep.rs`); only with
//! `--cfg loom`. Not an API.

use crate::latch::CoreLatch;
use crate::metrics::WorkerCounters;
use crate::sleep::{IdleState, Sleep};
use crate::sync::unchecked::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};

/// A pool's sleep state for `n` workers.
pub struct ModelSleep {
    /// The sleep state under test.
    sleep: Arc<Sleep>,
    /// Each worker's metrics counters, which observe its parks.
    counters: Vec<WorkerCounters>,
}

/// A worker's idle schedule between searches.
pub struct ModelIdle(IdleState);

/// A latch a worker can wait on (its terminate latch, a `join` half...).
#[derive(Debug)]
pub struct ModelLatch(CoreLatch);

impl std::fmt::Debug for ModelSleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSleep").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ModelIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelIdle").finish_non_exhaustive()
    }
}

impl Default for ModelLatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelLatch {
    /// An unset latch.
    pub fn new() -> Self {
        ModelLatch(CoreLatch::new())
    }
    /// Whether it is set.
    pub fn probe(&self) -> bool {
        self.0.probe()
    }
    /// The latch under test.
    pub(crate) fn core(&self) -> &CoreLatch {
        &self.0
    }
    /// `CoreLatch::reset`: unset again, by its owner (`block_on`, between polls).
    pub fn reset(&self) {
        self.0.reset()
    }
}

impl ModelSleep {
    /// Sleep state for `n` workers.
    pub fn new(n: usize) -> Self {
        ModelSleep {
            sleep: Arc::new(Sleep::new(n)),
            counters: (0..n).map(|_| WorkerCounters::default()).collect(),
        }
    }
    /// `Sleep::start_looking`.
    pub fn start_looking(&self, worker: usize) -> ModelIdle {
        ModelIdle(self.sleep.start_looking(worker))
    }
    /// `Sleep::work_found`; `more_work` tells whether other jobs are queued.
    pub fn work_found(&self, idle: &mut ModelIdle, more_work: impl Fn() -> bool) {
        self.sleep.work_found(&mut idle.0, more_work)
    }
    /// `Sleep::no_work_found` for worker `worker`, waiting on `latch`; `queued` is the
    /// last look at the queues.
    pub fn no_work_found(
        &self,
        worker: usize,
        idle: &mut ModelIdle,
        latch: &ModelLatch,
        queued: impl Fn() -> bool,
    ) {
        self.sleep
            .no_work_found(&mut idle.0, &latch.0, &self.counters[worker], queued)
    }
    /// `Sleep::new_jobs` (after the push).
    pub fn new_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.sleep.new_jobs(num_jobs, queue_was_empty)
    }
    /// `Sleep::new_injected_jobs` (after the push to the injector).
    pub fn new_injected_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        self.sleep.new_injected_jobs(num_jobs, queue_was_empty)
    }
    /// `Sleep::idle_workers_after_private_push` (a lazy `join`'s poll, after its
    /// private push): whether the owner would promote.
    pub fn idle_workers_after_private_push(&self) -> bool {
        self.sleep.idle_workers_after_private_push().any()
    }
    /// `Sleep::new_broadcast_jobs` (after the pushes).
    pub fn new_broadcast_jobs(&self) {
        self.sleep.new_broadcast_jobs()
    }
    /// The sleep state under test.
    pub(crate) fn sleep(&self) -> &Arc<Sleep> {
        &self.sleep
    }
    /// Worker `index`'s metrics counters (its park observer).
    pub(crate) fn counters(&self, index: usize) -> &WorkerCounters {
        &self.counters[index]
    }
    /// A worker's side of the models: searches (takes the job if it is there), else
    /// `no_work_found`, until it took the job or its latch is set. Returns whether it took
    /// the job. The queue is one flag per job: the protocol only needs "the push is
    /// visible to a later look", which crossbeam-deque's push (Release) and `is_empty`
    /// (Acquire) give; a steal that finds the job takes it with a CAS, as crossbeam's
    /// steal does (a failed CAS writes nothing), so only one taker can succeed.
    ///
    /// `work_found` is told that no other work is queued, so it never wakes a second
    /// sleeper: no wake-up may depend on that heuristic ("the last searcher wakes one").
    pub fn search_until(&self, index: usize, job: &AtomicBool, latch: &ModelLatch) -> bool {
        let mut idle = self.start_looking(index);
        loop {
            if latch.probe() {
                self.work_found(&mut idle, || false);
                return false;
            }
            if job
                .compare_exchange(true, false, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                self.work_found(&mut idle, || false);
                return true;
            }
            self.no_work_found(index, &mut idle, latch, || job.load(Ordering::Acquire));
        }
    }
    /// Sets `latch`, owned by worker `owner`, waking it if it sleeps (as every latch
    /// setter does).
    pub fn set_latch(&self, latch: &ModelLatch, owner: usize) {
        // SAFETY: `latch` is borrowed, so it stays alive for the whole call.
        unsafe { self.sleep.set_latch_and_wake(&latch.0, owner) };
    }
}
