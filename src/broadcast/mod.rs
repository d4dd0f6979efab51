//! `broadcast` and `spawn_broadcast`: run a closure once on *every* worker of a pool.
//!
//! Each worker has a FIFO broadcast queue (in the registry) that only it takes from; the
//! scheduling loop looks at it right after the own deque. A broadcast pushes one job per
//! worker, then wakes every sleeper ([`inject_broadcast`]). Because the queue is
//! FIFO, a broadcast runs after every earlier broadcast on each worker; because the own
//! deque comes first, a worker finishes its local jobs before it runs a broadcast. Same
//! contracts as rayon-core's `broadcast/`.
//!
//! [`inject_broadcast`]: crate::pool::worker::inject_broadcast

use crate::job::{HeapJob, StackJob};
use crate::latch::{CountLatch, LatchRef};
use crate::pool::global;
use crate::pool::registry::{Registry, WaitNeeds};
use crate::pool::worker::{self, WorkerThread};
use crate::sync::unchecked::Arc;
use crate::unwind;
use std::fmt;
use std::marker::PhantomData;
use std::mem;

/// Where a broadcast closure runs: which worker (an index, `0..num_threads`), of how many
/// (a count). rayon-core's `BroadcastContext`.
///
/// Not `Send`/`Sync`: it describes the current call on the current thread.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let seen = pool.broadcast(|ctx: stealpool::BroadcastContext<'_>| {
///     (ctx.index(), ctx.num_threads())
/// });
/// assert_eq!(seen, [(0, 2), (1, 2)]);
/// ```
pub struct BroadcastContext<'a> {
    /// The worker running the broadcast closure.
    worker: &'a WorkerThread,
    /// Makes the context `!Send` and `!Sync`, as in rayon-core.
    _marker: PhantomData<&'a mut dyn Fn()>,
}

impl<'a> BroadcastContext<'a> {
    /// Calls `f` with the context of the current worker.
    ///
    /// # Panics
    /// If the current thread is not a worker (a scheduler bug: broadcast jobs only run on
    /// the worker whose queue they were pushed to).
    pub(crate) fn with<R>(f: impl FnOnce(BroadcastContext<'_>) -> R) -> R {
        WorkerThread::with_current(|worker| {
            let worker = worker.expect("stealpool: broadcast job ran off-pool");
            f(BroadcastContext {
                worker,
                _marker: PhantomData,
            })
        })
    }

    /// The index of the worker running this call, `0..num_threads()`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let same = pool.broadcast(|ctx| Some(ctx.index()) == stealpool::current_thread_index());
    /// assert_eq!(same, [true, true, true]);
    /// ```
    #[inline]
    pub fn index(&self) -> usize {
        self.worker.index()
    }

    /// The number of workers in the pool, i.e. how many times the closure runs.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let counts = pool.broadcast(|ctx| ctx.num_threads());
    /// assert_eq!(counts.len(), 3); // the closure ran once per worker
    /// assert_eq!(counts, [3, 3, 3]);
    /// ```
    #[inline]
    pub fn num_threads(&self) -> usize {
        self.worker.registry().num_threads()
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index())
            .field("num_threads", &self.num_threads())
            .field("pool_id", &Arc::as_ptr(self.worker.registry()))
            .finish()
    }
}

/// Runs `op` once on every worker of the current pool (the global pool if the caller is
/// not a worker) and returns the results in worker-index order. Blocks until every worker
/// has run it; a worker calling this runs its own copy (and other work) while it waits.
/// As rayon-core's `broadcast`.
///
/// Each worker runs `op` after the jobs already in its own deque and after every earlier
/// broadcast. Useful to set up or read thread-local state on every worker.
///
/// # Panics
/// If `op` panics on some workers, every worker still runs it, then one of the panics
/// (the lowest index's) is re-raised in the caller. Also panics, instead of hanging
/// forever, if the pool has already terminated: only reachable from an exit handler or
/// from the building thread of a dropped `use_current_thread` pool. On Windows, also
/// panics with the reason if the caller holds the loader lock (a thread-local destructor)
/// and not every worker has started, or the process is exiting (`docs/guarantees.md`).
/// Called outside any pool, panics if the global pool has to be built and cannot be.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// let indices = pool.broadcast(|ctx| ctx.index());
/// assert_eq!(indices, [0, 1, 2]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    broadcast_in(op, &global::current_registry())
}

/// Runs `op` once on every worker of the current pool without waiting (the global pool
/// if the caller is not a worker). Each run holds the pool alive, like a `spawn`. As
/// rayon-core's `spawn_broadcast`.
///
/// # Panics
/// A panic in `op` goes to the pool's panic handler, as for [`spawn`](fn@crate::spawn).
/// Panics if the pool has already terminated (see [`broadcast`]), or if called outside
/// any pool and the global pool has to be built and cannot be.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let runs = Arc::new(AtomicUsize::new(0));
/// let r = Arc::clone(&runs);
/// pool.spawn_broadcast(move |_ctx| {
///     r.fetch_add(1, Ordering::SeqCst);
/// });
/// pool.wait_idle().unwrap();
/// assert_eq!(runs.load(Ordering::SeqCst), 2);
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    spawn_broadcast_in(op, &global::current_registry());
}

/// Broadcasts `op` into `registry` and waits for every run.
pub(crate) fn broadcast_in<OP, R>(op: OP, registry: &Arc<Registry>) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    // Before anything is queued: it may panic (Windows' loader lock).
    registry.check_wait(WaitNeeds::EveryWorker);
    // Hold the pool alive until every copy ran: without this, a pool whose handle is
    // gone (a `use_current_thread` building thread broadcasting) could terminate with
    // copies still queued for workers that then exit.
    take_terminate_references(registry, 1);
    let n_threads = registry.num_threads();
    // The waiter: a worker (of this pool or another) keeps running its own pool's jobs
    // while it waits, including its own copy if this is its pool; others block.
    WorkerThread::with_current(|current_thread| {
        let latch = CountLatch::with_count(n_threads, current_thread);
        let op = &op;
        let jobs: Vec<_> = (0..n_threads)
            .map(|_| StackJob::new(move |_| BroadcastContext::with(op), LatchRef::new(&latch)))
            .collect();
        // SAFETY: the jobs live in `jobs` until `wait` below returns, i.e. until every one
        // of them has executed and counted the latch down.
        let job_refs = jobs.iter().map(|job| unsafe { job.as_job_ref() });
        worker::inject_broadcast(registry, job_refs);
        latch.wait(current_thread);
        registry.terminate();
        // SAFETY: `wait` returned: every job ran and counted the latch down.
        unsafe { collect_results(jobs, n_threads) }
    })
}

/// The results of a broadcast's jobs, which all ran, in index order; re-raises the first
/// panic after all the results are taken (the rest are dropped quietly).
///
/// # Safety
/// Every job in `jobs` has run: the caller observed the latch they all count down.
unsafe fn collect_results<L: crate::latch::Latch + Sync, F, R>(
    jobs: Vec<StackJob<L, F, R>>,
    n_threads: usize,
) -> Vec<R>
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    let mut results = Vec::with_capacity(n_threads);
    let mut first_panic = None;
    for job in jobs {
        // SAFETY: the caller waited for the count latch that every job sets once it ran.
        match unsafe { job.take_job_result() } {
            Ok(value) => results.push(value),
            Err(payload) if first_panic.is_none() => first_panic = Some(payload),
            Err(payload) => unwind::drop_quietly(payload),
        }
    }
    if let Some(payload) = first_panic {
        unwind::drop_quietly(results);
        unwind::resume_unwinding(payload);
    }
    results
}

/// The panic message for a broadcast into a terminated pool.
const TERMINATED: &str =
    "stealpool: broadcast into a thread pool that has terminated (no worker is left to run it)";

/// Takes `n` terminate references, one per broadcast copy, so the pool cannot terminate
/// before every copy ran.
///
/// # Panics
/// If the pool has already terminated: only reachable from an exit handler or from the
/// building thread of a dropped `use_current_thread` pool; no worker is left to run the
/// copies, and failing loudly beats hanging or silently dropping them.
pub(crate) fn take_terminate_references(registry: &Registry, n: usize) {
    assert!(registry.increment_terminate_count(n), "{TERMINATED}");
}

/// Spawns `op` on every worker of `registry` without waiting.
pub(crate) fn spawn_broadcast_in<OP>(op: OP, registry: &Arc<Registry>)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let n_threads = registry.num_threads();
    take_terminate_references(registry, n_threads);
    let abort_guard = unwind::AbortIfPanic;
    let op = Arc::new(op);
    let job_refs = (0..n_threads).map(|_| {
        let op = Arc::clone(&op);
        let job_registry = Arc::clone(registry);
        let job = HeapJob::new(move || {
            job_registry.catch_unwind(|| BroadcastContext::with(|ctx| op(ctx)));
            // Drop our share of `op` before the pool may count as idle or terminate.
            unwind::drop_quietly(op);
            job_registry.terminate();
        });
        // SAFETY: the closure is `'static`, so it borrows nothing that could expire.
        unsafe { job.into_job_ref() }
    });
    worker::inject_broadcast(registry, job_refs);
    mem::forget(abort_guard);
}
