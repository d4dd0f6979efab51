//! What acts on the *current* pool: the pool the calling thread is a worker of, else the
//! global pool (rayon-core's free functions, plus `metrics` and `wait_idle`, so that code
//! whose work runs on the global pool, such as the `rayon` crate's, gets them too).

use crate::metrics::PoolMetrics;
use crate::pool::registry::{self, Registry};
use crate::pool::worker::WorkerThread;
use crate::sync::unchecked::Arc;
use std::error::Error;
use std::fmt;

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
        None => registry::global_registry().num_threads(),
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

/// [`ThreadPool::wait_idle`](crate::ThreadPool::wait_idle) or
/// [`ThreadPool::shutdown`](crate::ThreadPool::shutdown) was called from a worker of the
/// same pool, which would wait for itself, or the free [`wait_idle`] from any worker; or
/// `shutdown` on Windows from a thread that holds the loader lock (a thread-local
/// destructor), under which no thread can finish exiting. Returned instead of the
/// deadlock rayon-core's equivalents (a `WaitGroup` or `build_scoped` waited on from
/// inside) would hit; its message says which.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let err: stealpool::WaitError = pool.install(|| pool.wait_idle()).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "cannot wait for a thread pool from one of its own workers (it would wait for itself)"
/// );
/// assert_eq!(pool.wait_idle(), Ok(())); // from outside the pool it waits
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitError {
    /// Why the wait was refused.
    loader_lock: bool,
}

impl WaitError {
    /// A wait from one of the pool's own workers.
    pub(crate) fn new() -> Self {
        WaitError { loader_lock: false }
    }

    /// `shutdown` from a thread that holds Windows' loader lock.
    pub(crate) fn loader_lock() -> Self {
        WaitError { loader_lock: true }
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.loader_lock {
            "cannot wait for a thread pool's workers to exit: this thread holds the Windows \
             loader lock (it is running a thread-local destructor or DllMain), which every \
             exiting thread needs"
        } else {
            "cannot wait for a thread pool from one of its own workers (it would wait for itself)"
        })
    }
}

impl Error for WaitError {}

/// A snapshot of the current pool's counters (see [`ThreadPool::metrics`]): the pool the
/// caller is a worker of, else the global pool, which this call builds if it does not
/// exist yet. Code that uses the global pool (directly, or through the `rayon` crate on
/// `compat/rayon-core`) reads its metrics this way. Not in rayon-core.
///
/// # Panics
/// If the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// stealpool::join(|| (), || ()); // runs on the global pool
/// let metrics = stealpool::metrics();
/// assert_eq!(metrics.workers.len(), stealpool::current_num_threads());
/// assert!(metrics.total().jobs_executed >= 1);
/// ```
///
/// [`ThreadPool::metrics`]: crate::ThreadPool::metrics
pub fn metrics() -> PoolMetrics {
    with_current_registry(|registry| registry.counters().snapshot())
}

/// Blocks until the global pool is idle: every job `spawn`ed onto it (and every job those
/// spawn) has run, as [`ThreadPool::wait_idle`] does for a pool one holds. For code whose
/// work goes to the global pool, for example through `stealpool::spawn` or the `rayon`
/// crate on `compat/rayon-core`. Builds the global pool if it does not exist yet. Not in
/// rayon-core.
///
/// # Errors
/// [`WaitError`] when called on a worker thread of any pool: waiting there for the pool
/// to go idle could wait for the caller's own job (on the global pool), and a worker of
/// another pool would stall its own pool for the whole wait. Nothing is waited for then.
///
/// # Panics
/// If the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// static DONE: AtomicUsize = AtomicUsize::new(0);
/// for _ in 0..10 {
///     stealpool::spawn(|| {
///         stealpool::spawn(|| { DONE.fetch_add(1, Ordering::SeqCst); });
///         DONE.fetch_add(1, Ordering::SeqCst);
///     });
/// }
/// stealpool::wait_idle().unwrap();
/// assert_eq!(DONE.load(Ordering::SeqCst), 20);
/// ```
///
/// [`ThreadPool::wait_idle`]: crate::ThreadPool::wait_idle
pub fn wait_idle() -> Result<(), WaitError> {
    if WorkerThread::with_current(|worker| worker.is_some()) {
        return Err(WaitError::new());
    }
    // The global registry holds its own handle reference forever, so "idle" is reached
    // when that is the only one left, as for a `ThreadPool`.
    registry::global_registry().wait_idle();
    Ok(())
}

/// The current pool's worker timeline, if it records one: the pool the caller is a worker
/// of, else the global pool (built if needed), which records when
/// [`TIMELINE_ENV`](crate::TIMELINE_ENV) is set or it was built with
/// [`ThreadPoolBuilder::timeline`](crate::ThreadPoolBuilder::timeline). See
/// [`ThreadPool::timeline`](crate::ThreadPool::timeline). Not in rayon-core.
///
/// # Panics
/// If the global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// // The global pool records only when asked to (here it was not).
/// if std::env::var_os(stealpool::TIMELINE_ENV).is_none() {
///     assert!(stealpool::timeline().is_none());
/// }
/// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
/// assert!(pool.install(stealpool::timeline).is_some());
/// ```
#[cfg(feature = "timeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "timeline")))]
pub fn timeline() -> Option<crate::Timeline> {
    with_current_registry(|registry| registry.recorder().map(|r| r.timeline()))
}

/// Runs `f` on the registry of the pool the caller is a worker of, else the global one.
fn with_current_registry<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => f(worker.registry()),
        None => f(registry::global_registry()),
    })
}
