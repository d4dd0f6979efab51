//! What a worker tells `tracing` (feature `tracing`): where a job it found came from, and
//! its idle periods. Observers are user code: each event is emitted while the worker
//! counts as running, never inside the idle protocol (`docs/sleep.md`), so that an
//! observer may spawn, wait for a pool, or block without making the worker count twice.
//! Like a spawned job, an observer holds a terminate reference while it runs (the pool
//! does not terminate under it; once the pool has terminated no event is emitted), and
//! its panic goes to the pool's panic handler.

use super::WorkerThread;
#[cfg(feature = "tracing")]
use crate::sync::unchecked::Cell;

/// Where the job a search or a rescue just took came from, for its `tracing` event. The
/// event is emitted once the worker counts as running again ([`WorkerThread::tell_found`]):
/// a subscriber is user code, and may wait for the pool, which a worker still counted as
/// searching would mislead (a pusher that sees a searcher wakes nobody).
#[cfg(feature = "tracing")]
#[derive(Clone, Copy, Debug)]
pub(super) enum Found {
    /// Stolen from a victim's deque or batch queue.
    Stolen {
        /// The victim's index.
        victim: usize,
    },
    /// Rescued from a victim's private stack.
    Rescued {
        /// The victim's index.
        victim: usize,
    },
}

impl WorkerThread {
    /// Emits the `tracing` event of the job the last search or rescue took, if any: after
    /// `Sleep::work_found`, once the worker counts as running.
    #[inline]
    pub(super) fn tell_found(&self) {
        #[cfg(feature = "tracing")]
        match self.found.take() {
            Some(Found::Stolen { victim }) => {
                self.observe(|| tracing::trace!(name: "job_stolen", worker = self.index(), victim))
            }
            Some(Found::Rescued { victim }) => {
                self.observe(|| tracing::trace!(name: "job_rescued", worker = self.index(), victim))
            }
            None => {}
        }
    }
}

/// The idle period a worker announced to `tracing` (`WorkerThread::tell_idle`).
#[cfg(feature = "tracing")]
#[derive(Debug, Default)]
pub(super) struct IdlePeriod {
    /// When the announced period began; `None` outside one.
    since: Cell<Option<std::time::Instant>>,
    /// Nanoseconds parked in it so far.
    pub(super) parked_ns: Cell<u64>,
}

impl WorkerThread {
    /// `Waiter::tell_idle`: the `thread_idle` event, once per idle period (false inside
    /// an announced one: a wait in an observer's own code).
    #[inline]
    pub(super) fn tell_idle(&self) -> bool {
        #[cfg(feature = "tracing")]
        if self.idle.since.get().is_none() {
            self.idle.since.set(Some(std::time::Instant::now()));
            self.idle.parked_ns.set(0);
            self.observe(|| tracing::trace!(name: "thread_idle", worker = self.index()));
            return true;
        }
        false
    }

    /// `Waiter::tell_active`: the `thread_active` event that ends the announced period,
    /// with its length and the time parked in it.
    #[inline]
    pub(super) fn tell_active(&self) {
        #[cfg(feature = "tracing")]
        if let Some(since) = self.idle.since.take() {
            let idle_ns = since.elapsed().as_nanos() as u64;
            let parked_ns = self.idle.parked_ns.get();
            self.observe(|| {
                tracing::trace!(name: "thread_active", worker = self.index(), idle_ns, parked_ns)
            });
        }
    }
}

impl WorkerThread {
    /// Runs an observer (a `tracing` subscriber, user code) as the pool runs a spawned
    /// job: holding a terminate reference, its panic sent to the panic handler; not at all
    /// once the pool has terminated (the worker is leaving).
    #[cfg(feature = "tracing")]
    fn observe(&self, event: impl FnOnce()) {
        if self.registry.increment_terminate_count(1) {
            self.registry.catch_unwind(event);
            self.registry.terminate();
        }
    }
}
