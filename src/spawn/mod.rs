//! `spawn`: fire-and-forget jobs on the pool.
//!
//! Each spawned job is one heap allocation. It holds a reference on the pool's terminate
//! count, so a pool whose handle was dropped keeps its workers until every spawned job
//! (and every job those spawn) has run. Same contract as rayon-core's `spawn`, except for
//! panics without a handler (see [`ThreadPoolBuilder::panic_handler`]).
//!
//! [`ThreadPoolBuilder::panic_handler`]: crate::ThreadPoolBuilder::panic_handler

use crate::job::HeapJob;
use crate::registry::Registry;
use crate::sync::Arc;
use crate::unwind;
use std::mem;

#[cfg(test)]
mod test;

/// Runs `func` on the current pool (the global pool if the caller is not a worker) and
/// returns at once.
///
/// From a worker the job goes on that worker's own deque, where the worker pops jobs
/// newest first (LIFO) and idle workers steal the oldest; from any other thread it goes
/// through the pool's injector. There is no handle: use a channel, a [`scope`](crate::scope),
/// or a latch of your own to learn that it finished. Called from an exit handler, after
/// the pool has terminated, the job runs inline instead (no worker is left to run it).
///
/// # Panics
/// A panic in `func` does not propagate: it goes to the pool's
/// [`panic_handler`](crate::ThreadPoolBuilder::panic_handler); without one it is reported
/// by the standard panic hook and dropped, and the pool keeps running (rayon-core aborts).
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
    spawn_in(func, &Registry::current());
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
    if !registry.increment_terminate_count() {
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
    registry.inject_or_push(job_ref);
    mem::forget(abort_guard);
}
