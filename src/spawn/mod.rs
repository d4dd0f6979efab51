//! `spawn`: fire-and-forget jobs on the pool.
//!
//! Each spawned job is one heap allocation. It holds a reference on the pool's terminate
//! count, so a pool whose handle was dropped keeps its workers until every spawned job
//! (and every job those spawn) has run. Same contract as rayon-core's `spawn`, except for
//! panics without a handler (see [`ThreadPoolBuilder::panic_handler`]).
//!
//! [`ThreadPoolBuilder::panic_handler`]: crate::ThreadPoolBuilder::panic_handler

use crate::job::HeapJob;
use crate::pool::global;
use crate::pool::registry::Registry;
use crate::pool::worker;
use crate::sync::unchecked::Arc;
use crate::unwind;
use std::mem;

#[cfg(test)]
mod test;

/// Runs `func` on the current pool (the global pool if the caller is not a worker) and
/// returns at once.
///
/// From a worker the job goes on that worker's own deque, where the worker pops jobs
/// newest first (LIFO) and idle workers steal the oldest; from any other thread it goes
/// through the pool's injector. There is no handle: use a channel, a [`scope`](fn@crate::scope),
/// or a latch of your own to learn that it finished. Called from an exit handler, after
/// the pool has terminated, the job runs inline instead (no worker is left to run it).
///
/// # Panics
/// A panic in `func` does not propagate: it goes to the pool's
/// [`panic_handler`](crate::ThreadPoolBuilder::panic_handler); without one it is reported
/// by the standard panic hook and dropped, and the pool keeps running (rayon-core aborts).
/// Called outside any pool, panics if the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// stealpool::spawn(move || tx.send(21 * 2).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_in(func, &global::current_registry());
}

/// Spawns `func` into `registry`.
///
/// Normally the caller holds a `ThreadPool` handle, or runs on one of the pool's workers
/// inside a job that holds a terminate reference, so the pool is alive. The one exception
/// is an exit handler spawning into its terminated pool: the job then runs inline.
pub(crate) fn spawn_in<F>(func: F, registry: &Arc<Registry>)
where
    F: FnOnce() + Send + 'static,
{
    spawn_job_in(func, registry, Order::Lifo);
}

/// Runs `func` on the current pool (the global pool if the caller is not a worker) and
/// returns at once, like [`spawn`], but in FIFO order: jobs `spawn_fifo`ed from the same
/// worker start in the order they were spawned (relative to each other; LIFO `spawn`s
/// from that worker may still run first). From outside the pool the injector is FIFO
/// anyway. Same contract as rayon-core's `spawn_fifo`.
///
/// # Panics
/// As [`spawn`]: a panic goes to the pool's panic handler.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// pool.install(|| {
///     for i in 0..3 {
///         let tx = tx.clone();
///         stealpool::spawn_fifo(move || tx.send(i).unwrap());
///     }
/// });
/// drop(tx);
/// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2]);
/// ```
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    spawn_fifo_in(func, &global::current_registry());
}

/// Spawns `func` into `registry` in FIFO order (see [`spawn_fifo`]).
pub(crate) fn spawn_fifo_in<F>(func: F, registry: &Arc<Registry>)
where
    F: FnOnce() + Send + 'static,
{
    spawn_job_in(func, registry, Order::Fifo);
}

/// Where a spawned job goes on a worker of its pool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// The worker's deque (popped newest first).
    Lifo,
    /// The worker's FIFO, through a stub on the deque.
    Fifo,
}

/// Spawns a job that holds a terminate reference until it has run: the common part of
/// `spawn`, `spawn_fifo` and `spawn_with_handle`. `func` runs under
/// `Registry::catch_unwind`, so a panic goes to the panic handler (`spawn_with_handle`
/// catches its task's panic itself first, to hand it to the `JoinHandle`).
pub(crate) fn spawn_job_in<F>(func: F, registry: &Arc<Registry>, order: Order)
where
    F: FnOnce() + Send + 'static,
{
    if !registry.increment_terminate_count(1) {
        // The pool has terminated (we are in an exit handler): no worker is left to run
        // the job, so run it here rather than lose it.
        registry.catch_unwind(func);
        return;
    }
    // Nothing below runs user code; a panic would mean a leaked terminate reference.
    let abort_guard = unwind::AbortIfPanic;
    let job_registry = Arc::clone(registry);
    let job = HeapJob::new(move || {
        job_registry.catch_unwind(func);
        // Matches the increment above: this job no longer keeps the pool alive.
        job_registry.terminate();
    });
    // SAFETY: the closure is `'static`, so it borrows nothing that could expire.
    let job_ref = unsafe { job.into_job_ref() };
    worker::with_worker_of(registry, |worker| match (order, worker) {
        (Order::Fifo, Some(worker)) => worker.push_fifo(job_ref),
        (Order::Lifo, Some(worker)) => worker.push(job_ref),
        // From outside the pool both orders go through the (FIFO) injector.
        (_, None) => worker::inject(registry, job_ref),
    });
    mem::forget(abort_guard);
}
