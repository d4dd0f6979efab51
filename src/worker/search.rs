//! The scheduling loop's search: where a worker with no local job looks for one.
//!
//! [`WorkerThread::find_work`] is the loop the seeds describe (and crossbeam-deque's
//! `find_task` idiom):
//!
//! 1. `pop` from the own deque;
//! 2. `steal` from the own broadcast queue (jobs that must run on this very worker:
//!    `broadcast`, `spawn_broadcast`);
//! 3. `steal_batch_and_pop` from the pool's injector into the own deque (one CAS claims
//!    the job returned plus up to 32 more for the own deque: the injector is FIFO);
//! 4. `steal_batch_and_pop` from the other workers, starting at a random victim (fastrand):
//!    one job to run and up to half of the rest into the own deque.
//!
//! A round that found nothing but saw any `Steal::Retry` is repeated after a
//! `crossbeam_utils::Backoff` step: `Retry` means "lost a race, the queue probably still
//! has work", and treating it as `Empty` sends thieves to sleep exactly when there is the
//! most work (experiment E4 in the seeds: 10 of 11 thieves quit at the first collision).
//! Only a round in which every source answered `Empty` returns `None`, and only then may
//! [`WorkerThread::wait_until`] go on toward parking.

use super::WorkerThread;
use crate::job::JobRef;
use crate::sync::deque::{Steal, Stealer};
use crate::timeline_hooks::JobSource;
use crossbeam_utils::Backoff;

impl WorkerThread {
    /// The scheduling loop's search: local pop, the own broadcast queue, an injector
    /// batch, then victims, repeating the round while any source said `Retry`. `None`
    /// means every source was confirmed `Empty` in one round.
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
            match self.registry.injector().steal_batch_and_pop(&self.worker) {
                Steal::Success(job) => {
                    // Only this worker pushes to its deque, so the length is what the
                    // batch left there (less any a thief already took).
                    counters.injector_batch(1 + self.worker.len() as u64);
                    self.timeline.note_source(JobSource::Injector);
                    self.batch_landed();
                    return Some(job);
                }
                Steal::Retry => {
                    counters.retry_seen();
                    retry = true;
                }
                Steal::Empty => {}
            }
            if let Some(job) = self.steal_from_victims(&mut retry) {
                counters.steal();
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

    /// One pass over the other workers' stealers from a random start. Sets `retry` if any
    /// victim answered `Retry`.
    fn steal_from_victims(&self, retry: &mut bool) -> Option<JobRef> {
        self.victims().find_map(|victim| {
            let job = self.steal_batch_from(self.registry.stealer(victim), retry)?;
            self.timeline.note_source(JobSource::Steal { victim });
            #[cfg(feature = "tracing")]
            tracing::trace!(name: "job_stolen", worker = self.index, victim);
            Some(job)
        })
    }

    /// Steals from a victim's deque: one job to run now and, in the same CAS, up to half
    /// of the rest (at most 32) into the own deque, where this worker pops them and other
    /// thieves may steal them (tokio steals half too). rayon-core takes one job per steal:
    /// with a flood of tiny `Scope::spawn`s, each steal then cost more than the job, and
    /// the thief and the spawner fought over the deque's front line for every job.
    /// Sets `retry` on `Steal::Retry`.
    #[inline]
    fn steal_batch_from(&self, stealer: &Stealer<JobRef>, retry: &mut bool) -> Option<JobRef> {
        let job = self.try_steal(stealer, retry, |s| s.steal_batch_and_pop(&self.worker));
        if job.is_some() {
            self.batch_landed();
        }
        job
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
        self.try_steal(stealer, retry, Stealer::steal)
    }

    /// The shape every steal shares: skip a queue that looks empty, count and flag
    /// `Retry`.
    #[inline]
    fn try_steal(
        &self,
        stealer: &Stealer<JobRef>,
        retry: &mut bool,
        steal: impl FnOnce(&Stealer<JobRef>) -> Steal<JobRef>,
    ) -> Option<JobRef> {
        if stealer.is_empty() {
            return None;
        }
        match steal(stealer) {
            Steal::Success(job) => Some(job),
            Steal::Empty => None,
            Steal::Retry => {
                self.counters.retry_seen();
                *retry = true;
                None
            }
        }
    }

    /// A batch steal (from the injector or a victim) may have left jobs in the own deque:
    /// they are stealable now, so tell the sleep module as for a push. We still count as
    /// idle here, so this rarely wakes anyone itself: the wake usually comes from
    /// `work_found` (the last searcher wakes one) that our caller runs next
    /// (docs/sleep.md).
    #[inline]
    fn batch_landed(&self) {
        if !self.worker.is_empty() {
            self.registry.sleep.new_jobs(1, true);
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
