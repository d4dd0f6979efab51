//! The scheduling loop's search: where a worker with no local job looks for one.
//!
//! [`WorkerThread::find_work`] is rayon-core's `find_work`, with crossbeam-deque's
//! `Retry` handled as its docs' `find_task` idiom handles it:
//!
//! 1. `pop` from the own deque;
//! 2. `steal` from the own broadcast queue (jobs that must run on this very worker:
//!    `broadcast`, `spawn_broadcast`);
//! 3. `steal` one job from the other workers' deques, starting at a random victim
//!    (fastrand);
//! 4. `steal` one job from the pool's injector.
//!
//! One job per steal, and victims before the injector, as in rayon-core: a job taken from
//! another queue runs at once and brings no other job along, so the own deque holds only
//! jobs this worker pushed. A batch (`steal_batch_and_pop`) would put the victim's or the
//! injector's next jobs on the own deque, where every later wait of this worker pops them
//! first: inside the job just taken, on a one-thread pool too, where rayon-core runs
//! nothing there (`docs/guarantees.md`, "Where a worker runs other jobs").
//!
//! A round that found nothing but saw any `Steal::Retry` is repeated after a
//! `crossbeam_utils::Backoff` step: `Retry` means "lost a race, the queue probably still
//! has work", and treating it as `Empty` sends thieves to sleep exactly when there is the
//! most work (experiment E4 in `docs/experiments.md`: 10 of 11 thieves quit at the first
//! collision). Only a round in which every source answered `Empty` returns `None`, and
//! only then may [`WorkerThread::wait_until`] go on toward parking.

use super::WorkerThread;
use crate::job::JobRef;
use crate::sync::deque::{Steal, Stealer};
use crate::timeline_hooks::JobSource;
use crossbeam_utils::Backoff;

impl WorkerThread {
    /// The scheduling loop's search: local pop, the own broadcast queue, victims, then
    /// the injector, one job each, repeating the round while any source said `Retry`.
    /// `None` means every source was confirmed `Empty` in one round.
    pub(crate) fn find_work(&self) -> Option<JobRef> {
        let backoff = Backoff::new();
        let counters = self.counters();
        loop {
            if let Some(job) = self.take_local_job() {
                return Some(job);
            }
            let mut retry = false;
            if let Some(job) = self.take_broadcast_job(&mut retry) {
                return Some(job);
            }
            if let Some(job) = self.steal_from_victims(&mut retry) {
                counters.steal();
                return Some(job);
            }
            if let Some(job) = self.take_injected_job(&mut retry) {
                return Some(job);
            }
            if !retry {
                return None;
            }
            counters.retry_round();
            // Lost a race somewhere: the work is probably still there. Back off a little
            // and search the whole round again.
            backoff.spin();
        }
    }

    /// Takes the injector's oldest job. Sets `retry` on `Steal::Retry`.
    #[inline]
    pub(super) fn take_injected_job(&self, retry: &mut bool) -> Option<JobRef> {
        let injector = self.registry.injector();
        let job = self.try_steal(injector.is_empty(), || injector.steal(), retry);
        if job.is_some() {
            self.counters.injector_job();
            self.timeline.note_source(JobSource::Injector);
        }
        job
    }

    /// The other workers' indices, starting at a random one and wrapping around: the
    /// order of a steal round and of a rescue scan. Empty on a one-thread pool.
    pub(super) fn victims(&self) -> impl Iterator<Item = usize> + '_ {
        let num_threads = self.registry.num_threads();
        let start = if num_threads > 1 {
            fastrand::usize(..num_threads)
        } else {
            0
        };
        (start..num_threads)
            .chain(0..start)
            .filter(move |&victim| victim != self.index)
    }

    /// One pass over the other workers' stealers from a random start, one job from the
    /// first that has one (its oldest). Sets `retry` if any victim answered `Retry`.
    fn steal_from_victims(&self, retry: &mut bool) -> Option<JobRef> {
        self.victims().find_map(|victim| {
            let job = self.steal_from(self.registry.stealer(victim), retry)?;
            self.timeline.note_source(JobSource::Steal { victim });
            #[cfg(feature = "tracing")]
            tracing::trace!(name: "job_stolen", worker = self.index, victim);
            Some(job)
        })
    }

    /// One `steal()` from `stealer`, the way every search round steals: a queue that looks
    /// empty is `Empty` without calling `steal` (which pins a crossbeam-epoch guard even
    /// for an empty queue, and most queues a round looks at are empty); `Retry` is counted
    /// and sets `retry`, so the round is repeated.
    ///
    /// Skipping on `is_empty` is the same observation `steal` would make (it reads the
    /// same two indices and answers `Empty` from them), and the sleeper's last look uses
    /// `is_empty` too (docs/sleep.md, step 4).
    #[inline]
    fn steal_from(&self, stealer: &Stealer<JobRef>, retry: &mut bool) -> Option<JobRef> {
        self.try_steal(stealer.is_empty(), || stealer.steal(), retry)
    }

    /// The shape every steal shares (deque or injector): skip a queue that looks empty,
    /// count and flag `Retry`.
    #[inline]
    fn try_steal(
        &self,
        looks_empty: bool,
        steal: impl FnOnce() -> Steal<JobRef>,
        retry: &mut bool,
    ) -> Option<JobRef> {
        if looks_empty {
            return None;
        }
        match steal() {
            Steal::Success(job) => Some(job),
            Steal::Empty => None,
            Steal::Retry => {
                self.counters.retry_seen();
                *retry = true;
                None
            }
        }
    }

    /// Takes the oldest job of the own broadcast queue. Sets `retry` on `Steal::Retry`.
    #[inline]
    pub(super) fn take_broadcast_job(&self, retry: &mut bool) -> Option<JobRef> {
        let job = self.steal_from(&self.broadcasts, retry);
        if job.is_some() {
            self.counters.broadcast_job();
            self.timeline.note_source(JobSource::Broadcast);
        }
        job
    }
}
