//! [`ThreadPool`]: a handle to a pool of worker threads.

use crate::registry::Registry;
use crate::scope::Scope;
use crate::spawn::spawn_in;
use crate::sync::Arc;
use crate::worker::WorkerThread;
use std::fmt;

/// A pool of worker threads with work-stealing deques.
///
/// Built with [`ThreadPoolBuilder`](crate::ThreadPoolBuilder). Cheap to share (`Send +
/// Sync`); the methods move work onto the pool. Dropping the handle lets every job already
/// spawned run to completion; then the workers exit and run the exit handler (the drop
/// itself does not wait for that). Same API as rayon-core's `ThreadPool`.
pub struct ThreadPool {
    pub(crate) registry: Arc<Registry>,
}

impl ThreadPool {
    pub(crate) fn from_registry(registry: Arc<Registry>) -> Self {
        ThreadPool { registry }
    }

    /// Runs `op` on a worker of this pool and returns its result; the caller waits.
    ///
    /// Inside `op`, the free functions ([`join`](crate::join), [`scope`](crate::scope),
    /// [`spawn`](crate::spawn)) use this pool. Called from a worker of this pool, `op`
    /// simply runs inline (no deadlock); from a worker of another pool, that worker keeps
    /// executing its own pool's jobs while it waits; from any other thread, the caller
    /// blocks.
    ///
    /// # Panics
    /// Re-raises a panic from `op` in the caller.
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
        self.registry.in_worker(|_, _| op())
    }

    /// [`join`](crate::join) on this pool: same as `self.install(|| join(oper_a, oper_b))`.
    ///
    /// # Panics
    /// As [`join`](crate::join).
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(oper_a, oper_b))
    }

    /// [`scope`](crate::scope) on this pool: same as `self.install(|| scope(op))`.
    ///
    /// # Panics
    /// As [`scope`](crate::scope).
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope(op))
    }

    /// Runs `op` on this pool without waiting for it (see [`spawn`](crate::spawn)).
    ///
    /// # Panics
    /// A panic in `op` goes to the pool's panic handler (see [`spawn`](crate::spawn)).
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        spawn_in(op, &self.registry)
    }

    /// The number of worker threads in this pool.
    #[inline]
    pub fn current_num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// The index (`0..current_num_threads()`) of the calling thread if it is a worker of
    /// *this* pool, else `None`.
    #[inline]
    pub fn current_thread_index(&self) -> Option<usize> {
        let worker = WorkerThread::current()?;
        Registry::same(worker.registry(), &self.registry).then(|| worker.index())
    }

    /// How many workers are parked on their condvar right now: a racy snapshot, for
    /// tests that need an idle pool (e.g. to exercise the wake-up path). Not part of the
    /// stable API.
    #[doc(hidden)]
    pub fn sleeping_threads(&self) -> usize {
        self.registry.sleep.sleeping_threads()
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

/// The index of the calling thread in the pool it is a worker of, or `None` if it is not a
/// worker of any pool. Indices run `0..current_num_threads()`.
#[inline]
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(WorkerThread::index)
}

/// The number of worker threads of the current pool: the pool the caller is a worker of,
/// else the global pool (which this call builds if it does not exist yet).
///
/// # Panics
/// If the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
#[inline]
pub fn current_num_threads() -> usize {
    match WorkerThread::current() {
        Some(worker) => worker.registry().num_threads(),
        None => crate::registry::global_registry().num_threads(),
    }
}
