//! The current worker: which worker the calling thread is, how many its pool has,
//! whether it has local jobs, and yielding to other jobs. Asked of the *current* pool
//! (the pool the calling thread is a worker of, else the global pool: rayon-core's free
//! functions) or of a [`ThreadPool`] handle (`None` unless the caller is one of its
//! workers).

use super::ThreadPool;
use crate::pool::global;
use crate::pool::registry::Registry;
use crate::pool::worker::{self, WorkerThread};
use crate::sync::unchecked::Arc;

/// The index of the calling thread in the pool it is a worker of, or `None` if it is not a
/// worker of any pool. Indices run `0..current_num_threads()`.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// assert_eq!(stealpool::current_thread_index(), None); // not a worker
/// let index = pool.install(stealpool::current_thread_index).unwrap();
/// assert!(index < 3);
/// ```
#[inline]
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::with_current(|worker| worker.map(WorkerThread::index))
}

/// The number of worker threads of the current pool: the pool the caller is a worker of,
/// else the global pool (which this call builds if it does not exist yet).
///
/// # Panics
/// If the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// assert_eq!(pool.install(stealpool::current_num_threads), 3); // on a worker: its pool
/// assert!(stealpool::current_num_threads() >= 1); // elsewhere: the global pool
/// ```
#[inline]
pub fn current_num_threads() -> usize {
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => worker.registry().num_threads(),
        None => global::global_registry().num_threads(),
    })
}

/// Whether the current worker's own deque holds jobs; `None` if the caller is not a
/// worker. A racy snapshot (another worker may steal the jobs the next moment), as in
/// rayon-core.
///
/// ```
/// assert_eq!(stealpool::current_thread_has_pending_tasks(), None); // not a worker
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.scope(|s| {
///     assert_eq!(stealpool::current_thread_has_pending_tasks(), Some(false));
///     s.spawn(|_| ());
///     // The only worker is busy here, so the job is still in its deque.
///     assert_eq!(stealpool::current_thread_has_pending_tasks(), Some(true));
/// });
/// ```
#[inline]
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    WorkerThread::with_current(|worker| worker.map(WorkerThread::has_local_jobs))
}

/// Lets the current worker run one pending job while it would otherwise wait: from its
/// own deque, its broadcast queue, the injector or another worker (one round of the
/// scheduling loop). Never calls the OS's `yield`.
///
/// Returns `None` off-pool, `Some(Yield::Executed)` if a job ran, `Some(Yield::Idle)` if
/// there was nothing to run. Same as rayon-core.
///
/// # Panics
/// A panic in the job that runs propagates as it would from any job (e.g. to the
/// `join` or `scope` it belongs to, not here; a `spawn`ed job's panic goes to the panic
/// handler).
///
/// ```
/// use stealpool::Yield;
/// assert_eq!(stealpool::yield_now(), None); // not a worker
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.install(|| {
///     let ran = std::sync::atomic::AtomicBool::new(false);
///     stealpool::scope(|s| {
///         s.spawn(|_| ran.store(true, std::sync::atomic::Ordering::SeqCst));
///         // The only worker is busy here: let it run the spawned job now.
///         assert_eq!(stealpool::yield_now(), Some(Yield::Executed));
///         assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
///     });
/// });
/// ```
pub fn yield_now() -> Option<Yield> {
    WorkerThread::with_current(|worker| worker.map(|w| Yield::ran_a_job(w.yield_now())))
}

/// Like [`yield_now`], but only takes a job from the current worker's own deque or
/// broadcast queue, never steals.
///
/// Returns `None` off-pool.
///
/// # Panics
/// As [`yield_now`].
///
/// ```
/// use stealpool::Yield;
/// assert_eq!(stealpool::yield_local(), None); // not a worker
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.scope(|s| {
///     assert_eq!(stealpool::yield_local(), Some(Yield::Idle)); // nothing queued here
///     s.spawn(|_| ());
///     assert_eq!(stealpool::yield_local(), Some(Yield::Executed)); // ran it from the deque
/// });
/// ```
pub fn yield_local() -> Option<Yield> {
    WorkerThread::with_current(|worker| worker.map(|w| Yield::ran_a_job(w.yield_local())))
}

/// The result of [`yield_now`] and [`yield_local`] (rayon-core's `Yield`).
///
/// ```
/// use stealpool::Yield;
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let results = pool.scope(|s| {
///     let idle = stealpool::yield_now(); // nothing queued anywhere
///     s.spawn(|_| ());
///     (idle, stealpool::yield_now())
/// });
/// assert_eq!(results, (Some(Yield::Idle), Some(Yield::Executed)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// A job was found and executed.
    Executed,
    /// No job was available.
    Idle,
}

impl Yield {
    /// `Executed` if a job ran, else `Idle`.
    pub(super) fn ran_a_job(executed: bool) -> Yield {
        if executed {
            Yield::Executed
        } else {
            Yield::Idle
        }
    }
}

/// Runs `f` on the registry of the pool the caller is a worker of, else the global one.
pub(super) fn with_current_registry<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => f(worker.registry()),
        None => f(global::global_registry()),
    })
}

/// The largest number of worker threads a pool can have: 65,535.
///
/// The sleep module packs thread counts into 16-bit fields; larger requests are clamped
/// to this, as in rayon-core (whose limit comes from the same packing).
///
/// ```
/// assert_eq!(stealpool::max_num_threads(), usize::from(u16::MAX)); // 65,535
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
/// assert!(pool.current_num_threads() <= stealpool::max_num_threads());
/// ```
pub fn max_num_threads() -> usize {
    crate::sleep::THREADS_MAX
}

impl ThreadPool {
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
        worker::with_worker_of(&self.registry, |worker| worker.map(WorkerThread::index))
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
        worker::with_worker_of(&self.registry, |worker| {
            worker.map(WorkerThread::has_local_jobs)
        })
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
        worker::with_worker_of(&self.registry, |worker| {
            worker.map(|w| Yield::ran_a_job(w.yield_now()))
        })
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
        worker::with_worker_of(&self.registry, |worker| {
            worker.map(|w| Yield::ran_a_job(w.yield_local()))
        })
    }
}
