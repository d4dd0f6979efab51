//! Waiting for a pool: until it is idle (`wait_idle`, on a handle or on the current pool)
//! and until its workers have exited (`shutdown`), and [`WaitError`], why such a wait is
//! refused.

use super::ThreadPool;
use crate::pool::global;
use crate::pool::registry::WaitNeeds;
use crate::pool::worker::{self, WorkerThread};
use crate::sync::unchecked::Arc;
use std::error::Error;
use std::fmt;

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
    global::global_registry().wait_idle();
    Ok(())
}

impl ThreadPool {
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
        let own = worker::with_worker_of(&registry, |worker| worker.map(WorkerThread::index));
        let handles = registry.take_threads_to_join(own);
        drop(self);
        worker::with_worker_of(&registry, |own_worker| {
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

    /// `Err` if the calling thread is a worker of this pool, which cannot wait for its own
    /// pool (`wait_idle`).
    fn check_not_own_worker(&self) -> Result<(), WaitError> {
        worker::with_worker_of(&self.registry, |worker| match worker {
            Some(_) => Err(WaitError::new()),
            None => Ok(()),
        })
    }
}
