//! How work enters a registry from outside its workers: injection, broadcasts, and
//! running a closure *on* a worker (`in_worker`: `install`, and `join` or `scope` called
//! from outside, or from another pool).

use super::{global_registry, Registry, WaitNeeds};
use crate::job::{JobRef, StackJob};
use crate::latch::{CrossLatch, LatchRef, ParkLatch};
use crate::pool::region::Region;
use crate::pool::worker::{broadcast_in_region, stub, WorkerThread};
use crate::sync::unchecked::Arc;
use std::cell::Cell;

impl Registry {
    /// Pushes on the current worker's deque if it belongs to this registry, else injects.
    pub(crate) fn inject_or_push(&self, job_ref: JobRef) {
        self.with_current_worker(|worker| match worker {
            Some(worker) => worker.push(job_ref),
            None => self.inject(job_ref),
        })
    }

    /// Pushes a job from outside the pool onto the injector and wakes a worker if needed.
    pub(crate) fn inject(&self, job_ref: JobRef) {
        // From a worker (of another pool) inside an isolation region, the job belongs to
        // the region: it runs in a region of this pool nested in it (`docs/isolation.md`),
        // queued there, with a stub in the injector.
        let job_ref = match self.nested_region() {
            Some(region) => {
                region.push(job_ref);
                stub(&region)
            }
            None => job_ref,
        };
        let queue_was_empty = self.injected_jobs.is_empty();
        self.injected_jobs.push(job_ref);
        self.counters.job_injected();
        if let Some(recorder) = self.recorder() {
            recorder.injected();
        }
        self.sleep.new_injected_jobs(1, queue_was_empty);
        // A subscriber is user code: it runs once the job is queued and a worker woken (it
        // may wait for that job), and its panic goes where a spawned job's would, since
        // the caller may not unwind now (its job, on its frame, is queued).
        #[cfg(feature = "tracing")]
        self.catch_unwind(|| tracing::trace!(name: "job_injected", queue_was_empty));
    }

    /// Pushes one job on every worker's broadcast queue (job `i` for worker `i`) and wakes
    /// every sleeper: each job must run on its own worker.
    ///
    /// # Panics
    /// If `jobs` does not yield exactly one job per worker.
    pub(crate) fn inject_broadcast(&self, jobs: impl ExactSizeIterator<Item = JobRef>) {
        let queues = self.broadcasts.lock();
        assert_eq!(jobs.len(), queues.len(), "one broadcast job per worker");
        // From inside an isolation region the jobs are the region's (from a worker of
        // another pool, a region of this pool nested in it): queued there, with stubs on
        // the broadcast queues (`docs/isolation.md`).
        let region = self
            .with_current_worker(|worker| worker.and_then(WorkerThread::region))
            .or_else(|| self.nested_region());
        match region {
            None => {
                for (queue, job) in queues.iter().zip(jobs) {
                    queue.push(job);
                }
            }
            Some(region) => {
                for (queue, stub) in queues.iter().zip(broadcast_in_region(&region, jobs)) {
                    queue.push(stub);
                }
            }
        }
        drop(queues);
        // After the pushes, like every `new_jobs` (docs/sleep.md, "Broadcasts").
        self.sleep.new_broadcast_jobs();
    }

    /// For a job handed to this pool by a worker of another pool that is inside an
    /// isolation region: a new region of this pool nested in that one.
    fn nested_region(&self) -> Option<Arc<Region>> {
        WorkerThread::with_current(|worker| {
            let worker = worker.filter(|worker| !Registry::same(worker.registry(), self))?;
            Some(Region::new(self.sleep.clone(), Some(worker.region()?)))
        })
    }

    /// Runs `op` on a worker of this registry and returns its result.
    ///
    /// On a worker of this registry `op` runs inline; on a worker of another registry the
    /// caller keeps running its own pool's jobs while it waits; elsewhere it blocks.
    ///
    /// # Panics
    /// Re-raises a panic from `op`.
    pub(crate) fn in_worker<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        WorkerThread::with_current(|worker| match worker {
            None => self.in_worker_cold(op),
            Some(worker) if Registry::same(worker.registry(), self) => op(worker, false),
            Some(worker) => self.in_worker_cross(worker, op),
        })
    }

    /// `in_worker` from a thread outside any pool: injects `op` as a job and parks on a
    /// thread-local latch until it ran (`op` gets `injected == true`).
    #[cold]
    fn in_worker_cold<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        // The thread's latch, kept between calls (a `ParkLatch` holds a `Thread` handle).
        thread_local!(static PARK_LATCH: Cell<Option<ParkLatch>> = const { Cell::new(None) });

        // Before anything is queued: it may panic (Windows' loader lock).
        self.check_wait(WaitNeeds::AnyWorker);
        // The latch is taken for the call and put back after: a call from user code that
        // runs while it is taken (a `tracing` subscriber of `job_injected`, between our
        // push and our wait), or from a thread-local destructor that runs after it is
        // gone, makes one of its own.
        let latch = PARK_LATCH
            .try_with(Cell::take)
            .ok()
            .flatten()
            .unwrap_or_else(ParkLatch::new);
        let job = StackJob::new(
            |injected| {
                WorkerThread::with_current(|worker| {
                    let worker = worker.expect("stealpool: injected job must run on a worker");
                    op(worker, injected)
                })
            },
            LatchRef::new(&latch),
        );
        // SAFETY: `job` lives on this frame until `wait_and_reset` returns, which happens
        // only after the job set its latch.
        self.inject(unsafe { job.as_job_ref() });
        job.latch.wait_and_reset();
        // SAFETY: the latch was observed set (`wait_and_reset` returned).
        let result = unsafe { job.take_value() };
        let _ = PARK_LATCH.try_with(|cached| cached.set(Some(latch)));
        result
    }

    /// `in_worker` from `current_thread`, a worker of another pool: injects `op` as a job
    /// and runs its own pool's jobs until it ran.
    #[cold]
    fn in_worker_cross<OP, R>(&self, current_thread: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        // Before anything is queued: it may panic (Windows' loader lock).
        self.check_wait(WaitNeeds::AnyWorker);
        let latch = CrossLatch::new(current_thread.latch_owner());
        // From inside an isolation region, `inject` queues the job in a region of this
        // pool nested in it: its waits there run none of this pool's unrelated jobs.
        let job = StackJob::new(
            |injected| {
                WorkerThread::with_current(|worker| {
                    let worker = worker.expect("stealpool: injected job must run on a worker");
                    op(worker, injected)
                })
            },
            latch,
        );
        // SAFETY: `job` lives on this frame until `wait_until` returns, which happens
        // only after the job set its latch.
        self.inject(unsafe { job.as_job_ref() });
        current_thread.wait_until(&job.latch);
        // SAFETY: the latch was observed set (`wait_until` returned).
        unsafe { job.take_value() }
    }
}

/// Runs `op` on a worker: inline if the current thread is a worker of any pool, else on
/// the global pool (blocking until it finishes).
pub(crate) fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => op(worker, false),
        None => in_global_pool(op),
    })
}

/// `in_worker` from a thread that is not a worker: on the global pool.
#[cold]
#[inline(never)]
fn in_global_pool<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    global_registry().in_worker(op)
}
