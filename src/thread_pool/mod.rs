//! [`ThreadPool`]: a handle to a pool of worker threads, and what runs work on it
//! (`install`, `join`, `spawn`, broadcasts). One file per other concept of the handle,
//! each with the free functions that do the same on the current pool: `scopes.rs`,
//! `current.rs` (the current worker: `current_thread_index`, `yield_now`, ...),
//! `life.rs` (`wait_idle`, `shutdown`), `observe.rs` (metrics, the timeline).

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::join_handle::{spawn_with_handle_in, JoinHandle};
use crate::pool::registry::Registry;
use crate::pool::worker;
use crate::spawn::{spawn_fifo_in, spawn_in};
use crate::sync::unchecked::Arc;

mod current;
mod life;
mod observe;
mod scopes;
pub use current::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, max_num_threads,
    yield_local, yield_now, Yield,
};
pub use life::{wait_idle, WaitError};
pub use observe::metrics;
#[cfg(feature = "timeline")]
pub use observe::timeline;
use std::fmt;

/// A pool of worker threads with work-stealing deques.
///
/// Built with [`ThreadPoolBuilder`](crate::ThreadPoolBuilder). Cheap to share (`Send +
/// Sync`); the methods move work onto the pool. Dropping the handle lets every job already
/// spawned run to completion; then the workers exit and run the exit handler (the drop
/// itself does not wait for that). Same API as rayon-core's `ThreadPool`.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.install(stealpool::current_num_threads), 2);
/// let handle = pool.spawn_with_handle(|| 21 * 2);
/// drop(pool); // the job already spawned still runs
/// assert_eq!(handle.join().unwrap(), 42);
/// ```
pub struct ThreadPool {
    /// The pool's shared state; this handle holds one of its terminate references.
    pub(crate) registry: Arc<Registry>,
}

impl ThreadPool {
    /// The handle of `registry`'s pool, taking over the handle's terminate reference.
    pub(crate) fn from_registry(registry: Arc<Registry>) -> Self {
        ThreadPool { registry }
    }

    /// Runs `op` on a worker of this pool and returns its result; the caller waits.
    ///
    /// Inside `op`, the free functions ([`join`](fn@crate::join), [`scope`](fn@crate::scope),
    /// [`spawn`](fn@crate::spawn)) use this pool. Called from a worker of this pool, `op`
    /// simply runs inline (no deadlock); from a worker of another pool, that worker keeps
    /// executing its own pool's jobs while it waits; from any other thread, the caller
    /// blocks.
    ///
    /// # Panics
    /// Re-raises a panic from `op` in the caller. From outside the pool, on Windows, also
    /// panics with the reason, instead of hanging, if the caller holds the loader lock (a
    /// thread-local destructor) and no worker has started, or the process is exiting
    /// (`docs/guarantees.md`).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let sum: u64 = pool.install(|| (1..=100).sum());
    /// assert_eq!(sum, 5050);
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        worker::in_worker_of(&self.registry, |_, _| op())
    }

    /// [`join`](fn@crate::join) on this pool: same as `self.install(|| join(oper_a, oper_b))`.
    ///
    /// # Panics
    /// As [`join`](fn@crate::join).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let on_pool = || pool.current_thread_index().is_some();
    /// assert_eq!(pool.join(on_pool, on_pool), (true, true)); // both halves run on the pool
    /// let (sum, product) = pool.join(|| (1..=5).sum::<u32>(), || (1..=5).product::<u32>());
    /// assert_eq!((sum, product), (15, 120));
    /// ```
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(oper_a, oper_b))
    }

    /// Runs `op` on this pool without waiting for it (see [`spawn`](fn@crate::spawn)).
    ///
    /// # Panics
    /// A panic in `op` goes to the pool's panic handler (see [`spawn`](fn@crate::spawn)).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn(move || tx.send(stealpool::current_thread_index()).unwrap());
    /// let index = rx.recv().unwrap(); // the job ran on a worker of `pool`
    /// assert!(index.unwrap() < 2);
    /// ```
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        spawn_in(op, &self.registry)
    }

    /// Runs `op` on this pool without waiting, in FIFO order (see
    /// [`spawn_fifo`](crate::spawn_fifo)).
    ///
    /// # Panics
    /// A panic in `op` goes to the pool's panic handler.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.install(|| {
    ///     for i in 0..3 {
    ///         let tx = tx.clone();
    ///         pool.spawn_fifo(move || tx.send(i).unwrap());
    ///     }
    /// });
    /// drop(tx);
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2]);
    /// ```
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        spawn_fifo_in(op, &self.registry)
    }

    /// Runs `op` on this pool without waiting and returns a [`JoinHandle`] for its value
    /// or panic (see [`spawn_with_handle`](crate::spawn_with_handle)). Not in rayon-core.
    ///
    /// # Panics
    /// A panic in `op` goes to the handle (`join` returns `Err`), not to the panic
    /// handler, unless the handle was dropped first.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let handle = pool.spawn_with_handle(|| (1..=10u32).product::<u32>());
    /// assert_eq!(handle.join().unwrap(), 3_628_800);
    /// let failed = pool.spawn_with_handle(|| -> u32 { panic!("EXPECTED-PANIC") });
    /// assert!(failed.join().is_err());
    /// ```
    pub fn spawn_with_handle<OP, T>(&self, op: OP) -> JoinHandle<T>
    where
        OP: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        spawn_with_handle_in(op, &self.registry)
    }

    /// Runs `op` once on every worker of this pool and returns the results in index order
    /// (see [`broadcast`](fn@crate::broadcast)).
    ///
    /// # Panics
    /// As [`broadcast`](fn@crate::broadcast).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let indices = pool.broadcast(|_| pool.current_thread_index().unwrap());
    /// assert_eq!(indices, [0, 1, 2]); // one run per worker, in index order
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        broadcast_in(op, &self.registry)
    }

    /// Runs `op` once on every worker of this pool without waiting (see
    /// [`spawn_broadcast`](crate::spawn_broadcast)).
    ///
    /// # Panics
    /// A panic in `op` goes to the pool's panic handler. Panics if the pool has already
    /// terminated (from an exit handler: no worker is left to run it).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
    /// // `tx` is dropped once every copy has run, which ends the iteration.
    /// let mut indices: Vec<usize> = rx.iter().collect();
    /// indices.sort();
    /// assert_eq!(indices, [0, 1, 2]);
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        spawn_broadcast_in(op, &self.registry)
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.registry.terminate();
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.current_num_threads())
            .field("id", &Arc::as_ptr(&self.registry))
            .finish()
    }
}
