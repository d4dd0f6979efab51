//! What a worker tells its observers: the timeline (where each job came from) and, with
//! feature `tracing`, the events for the jobs it stole or rescued and for its idle
//! periods. `tracing` subscribers are user code: each event is emitted while the worker
//! counts as running, never inside the idle protocol (`docs/sleep.md`), so that a
//! subscriber may spawn, wait for a pool, or block without making the worker count twice.
//! Like a spawned job, a subscriber holds a terminate reference while it runs (the pool
//! does not terminate under it; once the pool has terminated no event is emitted), and
//! its panic goes to the pool's panic handler.

use super::WorkerThread;
#[cfg(feature = "tracing")]
use crate::sync::unchecked::Cell;
use crate::timeline_hooks::JobSource;

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
    /// The job taken next came from `source`: tells the timeline, and keeps a steal or a
    /// rescue for its `tracing` event, which [`tell_found`](Self::tell_found) emits once
    /// the worker counts as running again (a subscriber that waited for the pool while
    /// this worker still counted as searching would fake a searcher: a pusher that sees
    /// one wakes nobody).
    #[inline]
    pub(super) fn note_source(&self, source: JobSource) {
        self.timeline.note_source(source);
        #[cfg(feature = "tracing")]
        if let JobSource::Steal { .. } | JobSource::Rescue { .. } = source {
            self.found.set(Some(source));
        }
    }

    /// Emits the `tracing` event of the steal or rescue noted last, if any: after
    /// `Sleep::work_found`, once the worker counts as running.
    #[inline]
    pub(super) fn tell_found(&self) {
        #[cfg(feature = "tracing")]
        match self.found.take() {
            Some(JobSource::Steal { victim }) => {
                self.observe(|| tracing::trace!(name: "job_stolen", worker = self.index(), victim))
            }
            Some(JobSource::Rescue { victim }) => {
                self.observe(|| tracing::trace!(name: "job_rescued", worker = self.index(), victim))
            }
            _ => {}
        }
    }

    /// `Waiter::tell_idle`: the `thread_idle` event, once per idle period (false inside
    /// an announced one: a wait in a subscriber's own code).
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
    /// with its length and the time parked in it (nanoseconds).
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

    /// Runs a subscriber (user code) as the pool runs a spawned job: holding a terminate
    /// reference, its panic sent to the panic handler; not at all once the pool has
    /// terminated (the worker is leaving).
    #[cfg(feature = "tracing")]
    fn observe(&self, event: impl FnOnce()) {
        if self.registry.increment_terminate_count(1) {
            self.registry.catch_unwind(event);
            self.registry.terminate();
        }
    }
}
