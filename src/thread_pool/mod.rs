//! [`ThreadPool`]: a handle to a pool of worker threads; the free functions that ask
//! about the current worker (`current_thread_index`, `yield_now`, ...).

use crate::broadcast::{broadcast_in, spawn_broadcast_in, BroadcastContext};
use crate::join_handle::{spawn_with_handle_in, JoinHandle};
use crate::metrics::PoolMetrics;
use crate::pool::registry::{Registry, WaitNeeds};
use crate::pool::worker::WorkerThread;
use crate::spawn::{spawn_fifo_in, spawn_in};
use crate::sync::unchecked::Arc;

mod current;
mod scopes;
#[cfg(feature = "timeline")]
pub use current::timeline;
pub use current::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, metrics,
    wait_idle, yield_local, yield_now, WaitError, Yield,
};
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
        self.registry.in_worker(|_, _| op())
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

    /// Blocks until every job spawned into this pool so far (`spawn`, `spawn_fifo`,
    /// `spawn_broadcast`, `spawn_with_handle`, and every job those spawned in turn) has
    /// finished. Not in rayon-core (rayon-rs/rayon issue 650).
    ///
    /// Jobs spawned by other threads while this waits are waited for too, as long as they
    /// are spawned before the pool goes idle. Scope jobs are not counted: their scope
    /// waits for them. From a worker of *another* pool the calling worker blocks (it does
    /// not run its own pool's jobs meanwhile).
    ///
    /// # Errors
    /// [`WaitError`] if called from a worker of this pool, which would wait for itself.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let done = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..10 {
    ///     let done = Arc::clone(&done);
    ///     pool.spawn(move || {
    ///         let inner = Arc::clone(&done);
    ///         stealpool::spawn(move || { inner.fetch_add(1, Ordering::SeqCst); });
    ///         done.fetch_add(1, Ordering::SeqCst);
    ///     });
    /// }
    /// pool.wait_idle().unwrap();
    /// assert_eq!(done.load(Ordering::SeqCst), 20);
    /// ```
    pub fn wait_idle(&self) -> Result<(), WaitError> {
        self.check_not_own_worker()?;
        self.registry.check_wait(WaitNeeds::AnyWorker);
        self.registry.wait_idle();
        Ok(())
    }

    /// Shuts the pool down synchronously: lets every queued and running job finish (as
    /// dropping the pool does), then waits until every worker thread has left its loop
    /// and run its exit handler, and joins the threads stealpool started itself (so their
    /// thread-local destructors have run). Not in rayon-core (rayon-rs/rayon issues 688,
    /// 1242, 483).
    ///
    /// Threads started by a [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)
    /// are waited for up to the end of their exit handler but not joined (stealpool has no
    /// handle to them).
    ///
    /// With [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread), worker 0
    /// is the building thread itself, which stays a worker for life and is not waited for.
    /// Called on that thread, `shutdown` first keeps running the pool's jobs until the
    /// pool has terminated (its queued work, including its own broadcast copies, is
    /// done), then waits for the other workers.
    ///
    /// # Errors
    /// [`WaitError`] if called from a worker thread of this pool (other than the
    /// `use_current_thread` worker 0): it cannot wait for its own thread to exit; and on
    /// Windows from a thread that holds the loader lock (a thread-local destructor), under
    /// which no thread can finish exiting. The pool is then dropped as by `drop(pool)`: its
    /// workers still exit once the work is done, but nobody waits for them.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let exited = Arc::new(AtomicUsize::new(0));
    /// let e = Arc::clone(&exited);
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .exit_handler(move |_| { e.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| {});
    /// pool.shutdown().unwrap();
    /// assert_eq!(exited.load(Ordering::SeqCst), 3);
    /// ```
    pub fn shutdown(self) -> Result<(), WaitError> {
        let registry = Arc::clone(&self.registry);
        // While the handle holds the pool: before any worker can detach itself at its end.
        let handles = registry.take_threads_to_join();
        drop(self);
        registry.with_current_worker(|own_worker| {
            if let Some(worker) = own_worker {
                if !(registry.has_current_thread_worker() && worker.index() == 0) {
                    return Err(WaitError::new());
                }
                // The building thread of a `use_current_thread` pool: run the pool's jobs
                // (some may be queued for this very worker) until it has terminated.
                worker.wait_until(registry.terminate_latch(0));
            }
            Ok(())
        })?;
        if !registry.can_wait_for_exit() {
            return Err(WaitError::loader_lock());
        }
        registry.wait_until_stopped(handles);
        Ok(())
    }

    /// A snapshot of this pool's counters: per worker (jobs executed, local pops,
    /// injector batches and the jobs they moved, steals, `Retry` results seen, rounds
    /// repeated because of `Retry`, `join` halves promoted and rescued, parks, unparks,
    /// time parked in ns) and pool totals.
    /// See [`PoolMetrics`]. Not in rayon-core.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// pool.broadcast(|_| ());
    /// let metrics = pool.metrics();
    /// assert_eq!(metrics.workers.len(), 2);
    /// assert!(metrics.workers.iter().all(|w| w.broadcast_jobs == 1));
    /// ```
    pub fn metrics(&self) -> PoolMetrics {
        self.registry.counters().snapshot()
    }

    /// The pool's worker timeline, if it records one (built with
    /// [`ThreadPoolBuilder::timeline`](crate::ThreadPoolBuilder::timeline), or with
    /// [`TIMELINE_ENV`](crate::TIMELINE_ENV) set): a handle that reads the events at any
    /// time, also after the pool is gone. Not in rayon-core.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// pool.spawn(|| {});
    /// pool.shutdown().unwrap(); // every event is in
    /// assert_eq!(timeline.jobs(), 1);
    /// assert_eq!(timeline.injections().len(), 1);
    /// timeline.save(std::env::temp_dir().join("stealpool-doc-timeline.svg")).unwrap();
    /// ```
    #[cfg(feature = "timeline")]
    #[cfg_attr(docsrs, doc(cfg(feature = "timeline")))]
    pub fn timeline(&self) -> Option<crate::Timeline> {
        self.registry.recorder().map(|r| r.timeline())
    }

    /// `Err` if the calling thread is a worker of this pool, which cannot wait for its own
    /// pool (`wait_idle`).
    fn check_not_own_worker(&self) -> Result<(), WaitError> {
        self.registry.with_current_worker(|worker| match worker {
            Some(_) => Err(WaitError::new()),
            None => Ok(()),
        })
    }

    /// The number of worker threads in this pool.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 4);
    /// assert_eq!(pool.broadcast(|_| ()).len(), 4);
    /// ```
    #[inline]
    pub fn current_num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// The index (`0..current_num_threads()`) of the calling thread if it is a worker of
    /// *this* pool, else `None`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let other = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.current_thread_index(), None); // not a worker
    /// assert_eq!(other.install(|| pool.current_thread_index()), None); // another pool's
    /// assert_eq!(pool.broadcast(|_| pool.current_thread_index()), [Some(0), Some(1)]);
    /// ```
    #[inline]
    pub fn current_thread_index(&self) -> Option<usize> {
        self.registry
            .with_current_worker(|worker| worker.map(WorkerThread::index))
    }

    /// Whether the calling worker's own deque holds jobs, if the caller is a worker of this
    /// pool (else `None`). A racy snapshot, as in rayon-core.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.current_thread_has_pending_tasks(), None); // not a worker
    /// pool.scope(|s| {
    ///     s.spawn(|_| ());
    ///     // The only worker is busy here, so the job is still in its deque.
    ///     assert_eq!(pool.current_thread_has_pending_tasks(), Some(true));
    /// });
    /// ```
    #[inline]
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.registry
            .with_current_worker(|worker| worker.map(WorkerThread::has_local_jobs))
    }

    /// [`yield_now`], if the caller is a worker of this pool (else `None`). Same as
    /// rayon-core's `ThreadPool::yield_now`.
    ///
    /// # Panics
    /// As [`yield_now`]: a panic in the job that runs goes where that job's panics go,
    /// not here.
    ///
    /// ```
    /// use stealpool::Yield;
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.yield_now(), None); // not a worker
    /// pool.scope(|s| {
    ///     s.spawn(|_| ());
    ///     assert_eq!(pool.yield_now(), Some(Yield::Executed)); // ran the spawned job
    ///     assert_eq!(pool.yield_now(), Some(Yield::Idle)); // nothing left
    /// });
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        self.registry
            .with_current_worker(|worker| worker.map(|w| Yield::ran_a_job(w.yield_now())))
    }

    /// [`yield_local`], if the caller is a worker of this pool (else `None`). Same as
    /// rayon-core's `ThreadPool::yield_local`.
    ///
    /// # Panics
    /// As [`yield_local`]: a panic in the job that runs goes where that job's panics go,
    /// not here.
    ///
    /// ```
    /// use stealpool::Yield;
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.yield_local(), None); // not a worker
    /// pool.scope(|s| {
    ///     s.spawn(|_| ());
    ///     assert_eq!(pool.yield_local(), Some(Yield::Executed)); // from its own deque
    ///     assert_eq!(pool.yield_local(), Some(Yield::Idle));
    /// });
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        self.registry
            .with_current_worker(|worker| worker.map(|w| Yield::ran_a_job(w.yield_local())))
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
