//! The scheduling loop's search: where a worker with no local job looks for one.
//!
//! [`WorkerThread::find_work`] is the loop of crossbeam-deque's `find_task` idiom and of
//! rayon-core's `find_work`:
//!
//! 1. `pop` from the own deque;
//! 2. `steal` from the own broadcast queue (jobs that must run on this very worker:
//!    `broadcast`, `spawn_broadcast`);
//! 3. the oldest job of the own batch queue (below);
//! 4. the pool's injector;
//! 5. from a random victim (fastrand) on, each other worker's deque and batch queue.
//!
//! rayon-core steals from victims before it looks at the injector; here the injector
//! comes first, so work from outside is not starved while the workers share their own
//! (an order a program can see only with a victim blocked while holding work:
//! `docs/rayon-core.md`, "Differences from rayon-core"), and `par_iter` runs faster that
//! way (`docs/performance.md`, "Measurements behind design choices"). A steal takes a
//! batch
//! (`steal_batch_and_pop`: the job returned and, in the same CAS, up to half of the rest,
//! at most 32; all 32 from the FIFO injector), so a flood of tiny jobs costs one CAS per
//! batch, not per job. The rest of a batch goes to the worker's **batch queue**, never to
//! its own deque: every wait of the job just taken pops the own deque first, and must
//! find there only what this worker pushed itself, as on rayon-core, where those jobs
//! would still sit in the victim's deque or the injector (`docs/guarantees.md`, "Where a
//! worker runs other jobs"). The batch queue is FIFO and is taken exactly where a steal
//! would be, so its jobs start in the order further steals from their source would give;
//! other workers steal from it as from a deque.
//!
//! A round that found nothing but saw any `Steal::Retry` is repeated after a
//! `crossbeam_utils::Backoff` step: `Retry` means "lost a race, the queue probably still
//! has work", and treating it as `Empty` sends thieves to sleep exactly when there is the
//! most work (experiment E4 in `docs/experiments.md`, where thieves that take `Retry` for
//! `Empty` quit at the first collision). Only a round in which every source answered `Empty` returns `None`, and
//! only then may [`WorkerThread::wait_until`] go on toward parking.

use super::WorkerThread;
use crate::job::JobRef;
use crate::sync::deque::{Steal, Stealer};
use crate::timeline_hooks::JobSource;
use crossbeam_utils::Backoff;

impl WorkerThread {
    /// The scheduling loop's search: local pop, the own broadcast queue, the own batch
    /// queue, the injector, then victims, repeating the round while any source said
    /// `Retry`. `None` means every source was confirmed `Empty` in one round.
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
            if let Some(job) = self.take_batched_job() {
                return Some(job);
            }
            if let Some(job) = self.take_injected_batch(&mut retry) {
                return Some(job);
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

    /// Takes the oldest job of the own batch queue: the rest of an earlier batch steal
    /// (counted as a local pop).
    #[inline]
    pub(crate) fn take_batched_job(&self) -> Option<JobRef> {
        let job = self.batch.pop();
        if job.is_some() {
            self.counters.local_pop();
        }
        job
    }

    /// Takes the injector's oldest job, and up to 32 more into the own batch queue.
    /// Sets `retry` on `Steal::Retry`.
    #[inline]
    fn take_injected_batch(&self, retry: &mut bool) -> Option<JobRef> {
        let injector = self.registry.injector();
        let job = self.try_steal(
            injector.is_empty(),
            || injector.steal_batch_and_pop(&self.batch),
            retry,
        )?;
        // Only this worker pushes to its batch queue, so the length is what the batch
        // left there (less any a thief already took).
        self.counters.injector_batch(1 + self.batch.len() as u64);
        self.note_source(JobSource::Injector);
        self.batch_landed();
        Some(job)
    }

    /// Takes the injector's oldest job alone (the fair look between top-level jobs).
    #[inline]
    pub(super) fn take_injected_job(&self, retry: &mut bool) -> Option<JobRef> {
        let injector = self.registry.injector();
        let job = self.try_steal(injector.is_empty(), || injector.steal(), retry)?;
        self.counters.injector_batch(1);
        self.note_source(JobSource::Injector);
        Some(job)
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
            .filter(move |&victim| victim != self.index())
    }

    /// One pass over the other workers from a random start: each victim's deque (its
    /// oldest job), then its batch queue, taking a batch from the first that has work.
    /// Sets `retry` if any victim answered `Retry`.
    ///
    /// A pool that isolates every job's waits steals one job, the oldest, as rayon-core
    /// does: its stubs each stand for one `join` half, and a batch from a LIFO deque
    /// runs its newest (a small piece) while the oldest (the largest, such as the right
    /// half of a whole loop) waits in the thief's batch queue, where no isolated wait
    /// may take it (`docs/isolation.md`, "Every job isolated").
    fn steal_from_victims(&self, retry: &mut bool) -> Option<JobRef> {
        let steal = |stealer: &Stealer<JobRef>, retry: &mut bool| {
            if self.isolate_waits {
                self.steal_from(stealer, retry)
            } else {
                self.steal_batch_from(stealer, retry)
            }
        };
        self.victims().find_map(|victim| {
            let job = steal(self.registry.stealer(victim), retry)
                .or_else(|| steal(self.registry.batch_stealer(victim), retry))?;
            self.note_source(JobSource::Steal { victim });
            Some(job)
        })
    }

    /// Steals from a victim's queue: one job to run now and, in the same CAS, up to half
    /// of the rest (at most 32) into the own batch queue (tokio steals half too). Sets
    /// `retry` on `Steal::Retry`.
    #[inline]
    fn steal_batch_from(&self, stealer: &Stealer<JobRef>, retry: &mut bool) -> Option<JobRef> {
        let job = self.try_steal(
            stealer.is_empty(),
            || stealer.steal_batch_and_pop(&self.batch),
            retry,
        )?;
        self.batch_landed();
        Some(job)
    }

    /// A batch steal may have left jobs in the own batch queue: they are stealable now,
    /// so tell the sleep module as for a push. We still count as idle here, so this
    /// rarely wakes anyone itself: the wake usually comes from `work_found` (the last
    /// searcher wakes one) that our caller runs next (docs/sleep.md).
    #[inline]
    fn batch_landed(&self) {
        if !self.batch.is_empty() {
            self.registry.sleep.new_jobs(1, true);
        }
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
            self.note_source(JobSource::Broadcast);
        }
        job
    }
}
