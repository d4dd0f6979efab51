//! Isolated waits: [`isolate`] and [`ThreadPool::isolate`] (`docs/isolation.md`).

use crate::pool::global;
use crate::pool::worker;
use crate::thread_pool::ThreadPool;

/// Runs `op` on a worker of the current pool (the global pool from outside any pool) so
/// that no wait inside it runs an unrelated job: whenever `op`, or any job handed out
/// inside it (by [`join`](fn@crate::join), [`scope`](fn@crate::scope), a scope's `spawn`,
/// [`spawn`](fn@crate::spawn), [`spawn_with_handle`](fn@crate::spawn_with_handle),
/// [`broadcast`](fn@crate::broadcast), an `install` into another pool, ..., directly or
/// transitively, wherever that job runs), waits (for a `join` half another worker took, a
/// scope, an `install`, a broadcast, a join handle, [`block_on`](fn@crate::block_on)), the
/// waiting worker runs only jobs handed out inside this call. A nested `isolate` narrows
/// the region to its own jobs. The jobs of the region still run on every worker that is
/// free, so the region keeps the pool's parallelism.
///
/// This is what makes a lock held across parallel work safe: without it, a worker that
/// waits inside the locked section may take an unrelated job that takes the same lock on
/// the same thread, which then waits on itself (rayon-rs/rayon#592; the same with a
/// `RwLock`, a thread-local `RefCell` borrowed across a `join`, or
/// `OnceLock::get_or_init` whose initialiser runs parallel work). The idea is oneTBB's
/// `this_task_arena::isolate`. Called on a worker, `op` runs right there; from outside any
/// pool, as [`ThreadPool::install`] on the global pool, which it may build.
///
/// **What it costs.** Nothing outside a region. Inside one, a `join` keeps its second half
/// on its worker's private stack as outside; a half handed to an idle worker goes through
/// the region's queue (a lock and a stub on the deque) instead of the deque, and a waiting
/// worker of the region takes the private halves of the workers in it. Fine-grained
/// `join`s and coarse pieces both keep their speed and the pool's parallelism
/// (`docs/performance.md`, "Isolation").
///
/// **What it can break.** A wait that completes only if the waiting worker runs an
/// unrelated job: for example a job of the region that blocks on a channel fed by a job
/// spawned outside it, when every worker is waiting inside regions. Two regions side by
/// side that each [`broadcast`](fn@crate::broadcast) can wait for each other the same way
/// (each broadcast needs a worker that waits in the other region). Hence opt-in.
///
/// # Panics
/// Re-raises a panic from `op`, after every half `op` handed out came back.
///
/// ```
/// use std::sync::Mutex;
///
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let cache = Mutex::new(Vec::new());
/// pool.scope(|s| {
///     // Jobs that take the lock, queued beside the section.
///     for i in 0..4 {
///         let cache = &cache;
///         s.spawn(move |_| cache.lock().unwrap().push(i));
///     }
///     s.spawn(|_| {
///         let mut guard = cache.lock().unwrap();
///         // While this `join` waits for a half another worker took, this worker runs
///         // only the halves of this `isolate`, never a job above that locks `cache`.
///         let (a, b) = stealpool::isolate(|| stealpool::join(|| 1 + 1, || 2 + 2));
///         guard.push(a + b);
///     });
/// });
/// let mut all = cache.into_inner().unwrap();
/// all.sort();
/// assert_eq!(all, [0, 1, 2, 3, 6]);
/// ```
pub fn isolate<OP, R>(op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    global::in_worker(|worker, _| worker.isolate(op))
}

impl ThreadPool {
    /// [`isolate`](fn@isolate) on this pool: runs `op` on one of its workers (installed, as
    /// [`install`](Self::install) does, from outside it) so that no wait inside it runs a
    /// job handed out outside the call.
    ///
    /// # Panics
    /// Re-raises a panic from `op` in the caller; from outside the pool, as
    /// [`install`](Self::install) does.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let sum = pool.isolate(|| {
    ///     let (a, b) = stealpool::join(|| (1..=50).sum::<u64>(), || (51..=100).sum::<u64>());
    ///     a + b
    /// });
    /// assert_eq!(sum, 5050);
    /// ```
    pub fn isolate<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        worker::in_worker_of(&self.registry, |worker, _| worker.isolate(op))
    }
}
