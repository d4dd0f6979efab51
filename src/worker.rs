//! The worker thread and its scheduling loop.
//!
//! Each worker owns a LIFO crossbeam-deque [`Worker`]; the registry holds its [`Stealer`]
//! for the others. [`WorkerThread::find_work`] is the loop the seeds describe (and
//! crossbeam-deque's `find_task` idiom):
//!
//! 1. `pop` from the own deque;
//! 2. `steal_batch_and_pop` from the pool's injector into the own deque (a batch of up to
//!    32 in one CAS: the injector is FIFO);
//! 3. `steal` from the other workers, starting at a random victim (fastrand).
//!
//! A round that found nothing but saw any `Steal::Retry` is repeated after a
//! `crossbeam_utils::Backoff` step: `Retry` means "lost a race, the queue probably still
//! has work", and treating it as `Empty` sends thieves to sleep exactly when there is the
//! most work (experiment E4 in the seeds: 10 of 11 thieves quit at the first collision).
//! Only a round in which every source answered `Empty` returns `None`, and only then may
//! [`WorkerThread::wait_until`] go on toward parking.

use crate::job::JobRef;
use crate::latch::AsCoreLatch;
use crate::registry::Registry;
use crate::sync::{Arc, Cell};
use crossbeam_deque::{Steal, Worker};
use crossbeam_utils::Backoff;
use std::ptr;

thread_local! {
    /// The worker running on this thread, if any. Points into `main_loop`'s frame.
    static WORKER_THREAD_STATE: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

/// The per-thread half of a worker: its deque and its identity. Lives on the worker's
/// stack for the thread's whole life.
pub(crate) struct WorkerThread {
    worker: Worker<JobRef>,
    index: usize,
    registry: Arc<Registry>,
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        // Unregister, so the thread-local never points at a dead frame.
        WORKER_THREAD_STATE.with(|t| {
            debug_assert!(ptr::eq(t.get(), self));
            t.set(ptr::null());
        });
    }
}

impl WorkerThread {
    pub(crate) fn new(worker: Worker<JobRef>, registry: Arc<Registry>, index: usize) -> Self {
        WorkerThread {
            worker,
            index,
            registry,
        }
    }

    /// The worker running on the current thread, if the current thread is one.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let ptr = WORKER_THREAD_STATE.with(Cell::get);
        // SAFETY: a non-null pointer was stored by `set_current` and points to a
        // `WorkerThread` that stays alive (on the worker's bottom frame) until its `Drop`
        // clears the slot; code running on this thread cannot outlive that frame.
        unsafe { ptr.as_ref() }
    }

    /// Registers `thread` as the current thread's worker.
    ///
    /// # Safety
    /// `thread` must stay alive and in place until it is dropped (which unregisters it).
    pub(crate) unsafe fn set_current(thread: *const WorkerThread) {
        WORKER_THREAD_STATE.with(|t| {
            assert!(t.get().is_null(), "thread is already a stealpool worker");
            t.set(thread);
        });
    }

    /// This worker's index in its pool, `0..num_threads`.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The pool this worker belongs to.
    #[inline]
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Pushes a job on the own deque, where the owner pops it LIFO and thieves steal it
    /// FIFO, and tells the sleep module (which may wake a parked worker to steal it).
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        let queue_was_empty = self.worker.is_empty();
        self.worker.push(job);
        self.registry.sleep.new_jobs(1, queue_was_empty);
    }

    /// Pops the most recently pushed job of the own deque.
    #[inline]
    pub(crate) fn take_local_job(&self) -> Option<JobRef> {
        self.worker.pop()
    }

    /// Executes a job taken from any queue.
    #[inline]
    pub(crate) fn execute(&self, job: JobRef) {
        // SAFETY: every JobRef in the deques and the injector was created by a job type
        // whose creator keeps it alive until it runs, and each is taken out of a queue
        // exactly once, so it is executed exactly once.
        unsafe { job.execute() }
    }

    /// The scheduling loop's search: local pop, then an injector batch, then victims,
    /// repeating the round while any source said `Retry`. `None` means every source was
    /// confirmed `Empty` in one round.
    pub(crate) fn find_work(&self) -> Option<JobRef> {
        let backoff = Backoff::new();
        loop {
            if let Some(job) = self.worker.pop() {
                return Some(job);
            }
            let mut retry = false;
            match self.registry.injector().steal_batch_and_pop(&self.worker) {
                Steal::Success(job) => {
                    if !self.worker.is_empty() {
                        // The rest of the batch is now stealable from our deque; let a
                        // sleeper know, as for a push. We still count as idle here, so
                        // this rarely wakes anyone itself: the wake usually comes from the
                        // `work_found` cascade our caller runs next (docs/sleep.md).
                        self.registry.sleep.new_jobs(1, true);
                    }
                    return Some(job);
                }
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if let Some(job) = self.steal_from_victims(&mut retry) {
                return Some(job);
            }
            if !retry {
                return None;
            }
            // Lost a race somewhere: the work is probably still there. Back off a little
            // and search the whole round again.
            backoff.spin();
        }
    }

    /// One pass over the other workers' stealers from a random start. Sets `retry` if any
    /// victim answered `Retry`.
    fn steal_from_victims(&self, retry: &mut bool) -> Option<JobRef> {
        let num_threads = self.registry.num_threads();
        if num_threads <= 1 {
            return None;
        }
        let start = fastrand::usize(..num_threads);
        (start..num_threads)
            .chain(0..start)
            .filter(|&victim| victim != self.index)
            .find_map(|victim| match self.registry.stealer(victim).steal() {
                Steal::Success(job) => Some(job),
                Steal::Empty => None,
                Steal::Retry => {
                    *retry = true;
                    None
                }
            })
    }

    /// Runs jobs until `latch` is set; parks when there is nothing to do.
    ///
    /// This is the only way a worker waits: the main loop waits for its terminate latch,
    /// `join` for its stolen half, scopes for their jobs.
    #[inline]
    pub(crate) fn wait_until<L: AsCoreLatch + ?Sized>(&self, latch: &L) {
        let latch = latch.as_core_latch();
        if !latch.probe() {
            self.wait_until_cold(latch);
        }
    }

    #[cold]
    fn wait_until_cold(&self, latch: &crate::latch::CoreLatch) {
        let sleep = &self.registry.sleep;
        'outer: while !latch.probe() {
            // Local work first, without touching the shared sleep counters.
            if let Some(job) = self.take_local_job() {
                self.execute(job);
                continue;
            }
            let mut idle_state = sleep.start_looking(self.index);
            while !latch.probe() {
                if let Some(job) = self.find_work() {
                    sleep.work_found();
                    self.execute(job);
                    // The job may have pushed local work: start over.
                    continue 'outer;
                }
                sleep.no_work_found(&mut idle_state, latch, || self.registry.has_pending_jobs());
            }
            // The latch is set: we are active again.
            sleep.work_found();
            return;
        }
    }
}
