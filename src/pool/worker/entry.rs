//! The ways into a pool from the calling thread, whatever it is: a worker of that pool, a
//! worker of another pool (perhaps inside an isolation region), or no worker at all. Each
//! looks at the current worker ([`WorkerThread::with_current`]) and picks the registry
//! queue, the own deque, or a region (rayon-core's `Registry::inject`,
//! `Registry::in_worker` and their cold and cross variants).

use super::isolate::{broadcast_in_region, stub};
use super::WorkerThread;
use crate::job::{JobRef, StackJob};
use crate::latch::{CrossLatch, LatchRef, ParkLatch};
use crate::pool::region::Region;
use crate::pool::registry::{Registry, WaitNeeds};
use crate::sync::unchecked::Arc;
use std::cell::Cell;

/// Runs `f` with the current thread's worker, if it is a worker of `registry`.
#[inline]
pub(crate) fn with_worker_of<R>(
    registry: &Registry,
    f: impl FnOnce(Option<&WorkerThread>) -> R,
) -> R {
    WorkerThread::with_current(|worker| {
        f(worker.filter(|worker| Registry::same(worker.registry(), registry)))
    })
}

/// Pushes on the current worker's deque if it belongs to `registry`, else injects.
pub(crate) fn inject_or_push(registry: &Registry, job_ref: JobRef) {
    with_worker_of(registry, |worker| match worker {
        Some(worker) => worker.push(job_ref),
        None => inject(registry, job_ref),
    })
}

/// Hands a job from a thread that is not a worker of `registry` to its injector, and
/// wakes a worker if needed.
pub(crate) fn inject(registry: &Registry, job_ref: JobRef) {
    // From a worker (of another pool) inside an isolation region, the job belongs to the
    // region: it runs in a region of this pool nested in it (`docs/isolation.md`), queued
    // there, with a stub in the injector.
    let job_ref = match nested_region(registry) {
        Some(region) => {
            region.push(job_ref);
            stub(&region)
        }
        None => job_ref,
    };
    registry.push_injected(job_ref);
}

/// Puts one job on every worker's broadcast queue of `registry` (job `i` for worker `i`)
/// and wakes every sleeper: each job must run on its own worker.
///
/// # Panics
/// If `jobs` does not yield exactly one job per worker.
pub(crate) fn inject_broadcast(registry: &Registry, jobs: impl ExactSizeIterator<Item = JobRef>) {
    // From inside an isolation region the jobs are the region's (from a worker of another
    // pool, a region of this pool nested in it): queued there, with stubs on the
    // broadcast queues (`docs/isolation.md`).
    let region = with_worker_of(registry, |worker| worker.and_then(WorkerThread::region))
        .or_else(|| nested_region(registry));
    match region {
        None => registry.push_broadcasts(jobs),
        Some(region) => {
            assert_eq!(
                jobs.len(),
                registry.num_threads(),
                "one broadcast job per worker"
            );
            registry.push_broadcasts(broadcast_in_region(&region, jobs).into_iter());
        }
    }
}

/// For a job handed to `registry` by a worker of another pool that is inside an
/// isolation region: a new region of this pool nested in that one.
fn nested_region(registry: &Registry) -> Option<Arc<Region>> {
    WorkerThread::with_current(|worker| {
        let worker = worker.filter(|worker| !Registry::same(worker.registry(), registry))?;
        Some(Region::new(registry.sleep.clone(), Some(worker.region()?)))
    })
}

/// Runs `op` on a worker of `registry` and returns its result.
///
/// On a worker of `registry` `op` runs inline; on a worker of another registry the caller
/// keeps running its own pool's jobs while it waits; elsewhere it blocks.
///
/// # Panics
/// Re-raises a panic from `op`.
pub(crate) fn in_worker_of<OP, R>(registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    WorkerThread::with_current(|worker| match worker {
        None => in_worker_cold(registry, op),
        Some(worker) if Registry::same(worker.registry(), registry) => op(worker, false),
        Some(worker) => in_worker_cross(registry, worker, op),
    })
}

/// `in_worker_of` from a thread outside any pool: injects `op` as a job and parks on a
/// thread-local latch until it ran (`op` gets `injected == true`).
#[cold]
fn in_worker_cold<OP, R>(registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    // The thread's latch, kept between calls (a `ParkLatch` holds a `Thread` handle).
    thread_local!(static PARK_LATCH: Cell<Option<ParkLatch>> = const { Cell::new(None) });

    // Before anything is queued: it may panic (Windows' loader lock).
    registry.check_wait(WaitNeeds::AnyWorker);
    // The latch is taken for the call and put back after: a call from user code that runs
    // while it is taken (a `tracing` subscriber of `job_injected`, between our push and
    // our wait), or from a thread-local destructor that runs after it is gone, makes one
    // of its own.
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
    // SAFETY: `job` lives on this frame until `wait_and_reset` returns, which happens only
    // after the job set its latch.
    inject(registry, unsafe { job.as_job_ref() });
    job.latch.wait_and_reset();
    // SAFETY: the latch was observed set (`wait_and_reset` returned).
    let result = unsafe { job.take_value() };
    let _ = PARK_LATCH.try_with(|cached| cached.set(Some(latch)));
    result
}

/// `in_worker_of` from `current_thread`, a worker of another pool: injects `op` as a job
/// and runs its own pool's jobs until it ran.
#[cold]
fn in_worker_cross<OP, R>(registry: &Registry, current_thread: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    // Before anything is queued: it may panic (Windows' loader lock).
    registry.check_wait(WaitNeeds::AnyWorker);
    let latch = CrossLatch::new(current_thread.latch_owner());
    // From inside an isolation region, `inject` queues the job in a region of this pool
    // nested in it: its waits there run none of this pool's unrelated jobs.
    let job = StackJob::new(
        |injected| {
            WorkerThread::with_current(|worker| {
                let worker = worker.expect("stealpool: injected job must run on a worker");
                op(worker, injected)
            })
        },
        latch,
    );
    // SAFETY: `job` lives on this frame until `wait_until` returns, which happens only
    // after the job set its latch.
    inject(registry, unsafe { job.as_job_ref() });
    current_thread.wait_until(&job.latch);
    // SAFETY: the latch was observed set (`wait_until` returned).
    unsafe { job.take_value() }
}
