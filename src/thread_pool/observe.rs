//! Seeing where a pool's time went: its metrics and its worker timeline, on a handle or
//! on the current pool.

use super::current::with_current_registry;
use super::ThreadPool;
use crate::metrics::PoolMetrics;

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

impl ThreadPool {
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
}
