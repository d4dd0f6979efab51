//! The wait loop: how a worker runs jobs until a latch is set, parking when there are
//! none. One loop for every wait (the scheduling loop of a worker thread, a `join`'s wait
//! for its stolen half, a scope, a cross-pool `install`, `block_on`), differing only in
//! the [`Frame`] it runs in.

use super::WorkerThread;
use crate::latch::{AsCoreLatch, CoreLatch, LatchOwner, StealingWaiter};
use crate::sleep::{ParkObserver, ROUNDS_UNTIL_RESCUE};

impl WorkerThread {
    /// Runs jobs until `latch` is set; parks when there is nothing to do. For a wait
    /// inside a user's frame: `join` for its stolen half, a scope for its jobs, a
    /// cross-pool `install`, `block_on`, a join handle. Local jobs come first, then a
    /// search (`find_work`), as in rayon-core's wait: no injected job overtakes a local
    /// one (`docs/guarantees.md`, "Where a worker runs other jobs").
    #[inline]
    pub(crate) fn wait_until<L: AsCoreLatch + ?Sized>(&self, latch: &L) {
        let latch = latch.as_core_latch();
        if !latch.probe() {
            self.wait_until_cold(latch, Frame::User);
        }
    }

    /// The scheduling loop of a worker thread: runs jobs until the pool's `terminate`
    /// latch is set. No user frame is below it, so every `FAIR_INTERVAL`-th local job
    /// gives way to an injected one (`take_local_job_fair`).
    pub(crate) fn main_loop(&self, terminate: &CoreLatch) {
        if !terminate.probe() {
            self.wait_until_cold(terminate, Frame::Top);
        }
    }

    #[cold]
    // The round limits are 0 under loom (fewer states): a comparison against them is then
    // constant, which is the point.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    fn wait_until_cold(&self, latch: &CoreLatch, frame: Frame) {
        // A panic that unwound out of here would pop the waiting frame (a `join` whose
        // second half a thief may still be writing, a scope whose jobs still run) while
        // others use it: abort instead (rayon-core arms the same guard here). Jobs run
        // under their own `catch_unwind`; this fires only on a bug of the scheduler.
        let abort_guard = crate::unwind::AbortIfPanic;
        // A waiting worker hides nothing: its private halves become stealable.
        self.promote_all();
        let sleep = &self.registry.sleep;
        // Work queued besides what this worker just found, for "the last searcher wakes
        // one" (`Sleep::work_found`): the same look as before parking.
        let more_work = || self.has_pending_jobs();
        'outer: while !latch.probe() {
            // Local work first, without touching the shared sleep counters.
            // Then the own broadcast and batch queues, the search's next two steps in
            // its order, still without the counters (a batch is many jobs).
            let local = match frame {
                Frame::Top => self.take_local_job_fair(),
                Frame::User => self.take_local_job(),
            }
            .or_else(|| self.take_broadcast_job(&mut false))
            .or_else(|| self.take_batched_job());
            if let Some(job) = local {
                self.execute(job);
                self.flush_count_downs_for(latch);
                continue;
            }
            // Out of local work: nothing stays deferred while searching or parked.
            self.flush_count_downs();
            self.job_releases.flush();
            let mut idle_state = sleep.start_looking(self.index());
            while !latch.probe() {
                if let Some(job) = self.find_work() {
                    sleep.work_found(&mut idle_state, more_work);
                    self.execute(job);
                    self.flush_count_downs_for(latch);
                    // The job may have pushed local work: start over.
                    continue 'outer;
                }
                if idle_state.rounds() >= ROUNDS_UNTIL_RESCUE {
                    if let Some(job) = self.rescue() {
                        sleep.work_found(&mut idle_state, more_work);
                        self.counters.rescue();
                        self.execute(job);
                        self.flush_count_downs_for(latch);
                        continue 'outer;
                    }
                }
                sleep.no_work_found(&mut idle_state, latch, self, || self.has_pending_jobs());
            }
            // The latch is set: we are active again.
            sleep.work_found(&mut idle_state, more_work);
            break;
        }
        // Back to the waiting code: deliver what the jobs run here deferred, so that no
        // count or arena chunk stays held while the caller's code runs.
        self.flush_count_downs();
        self.job_releases.flush();
        std::mem::forget(abort_guard);
    }
}

/// Which frame a wait runs in: it decides whether an injected job may overtake local work.
#[derive(Clone, Copy)]
enum Frame {
    /// The worker's scheduling loop: no user code below.
    Top,
    /// Inside a job or other user code (`join`, scope, `install`, `block_on`, ...).
    User,
}

/// A worker waits for a scope's or a broadcast's count by running other jobs.
impl StealingWaiter for WorkerThread {
    #[inline]
    fn latch_owner(&self) -> &LatchOwner {
        WorkerThread::latch_owner(self)
    }
    fn wait_until_set(&self, latch: &CoreLatch) {
        self.wait_until(latch)
    }
}

/// A parking worker tells its metrics and its timeline.
impl ParkObserver for WorkerThread {
    #[inline]
    fn parked(&self, since_epoch_ns: u64) {
        self.counters.park(since_epoch_ns);
        self.timeline.park();
        #[cfg(feature = "tracing")]
        tracing::trace!(name: "thread_idle", worker = self.index());
    }
    #[inline]
    fn unparked(&self, nanos: u64) {
        self.counters.unparked(nanos);
        self.timeline.unpark();
        #[cfg(feature = "tracing")]
        tracing::trace!(name: "thread_active", worker = self.index(), parked_ns = nanos);
    }
}
