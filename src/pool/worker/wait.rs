//! The wait loop: how a worker runs jobs until a latch is set, parking when there are
//! none. One loop for every wait (the scheduling loop of a worker thread, a `join`'s wait
//! for its stolen half, a scope, a cross-pool `install`, `block_on`), differing only in
//! the [`WaitFrame`] it runs in.
//!
//! The loop ([`wait_loop`]) is generic over the worker ([`Waiter`]), as the `join` frame
//! is over `JoinWorker`: the pool runs it on a [`WorkerThread`], and the loom model of a
//! stolen `join` (`src/loom_model/join_steal.rs`) runs this same function on its model
//! workers, whose queues are the deque model and whose search is a plain steal.

use super::deferred::RunJobs;
use super::WorkerThread;
use crate::job::JobRef;
use crate::latch::{AsCoreLatch, CoreLatch, LatchOwner, StealingWaiter};
use crate::metrics::WorkerCounters;
use crate::sleep::{ParkObserver, Sleep, ROUNDS_UNTIL_RESCUE};

/// Which frame a wait runs in: it decides whether an injected job may overtake local work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum WaitFrame {
    /// The worker's scheduling loop: no user code below.
    Top,
    /// Inside a job or other user code (`join`, scope, `install`, `block_on`, ...).
    User,
}

/// What the wait loop needs from a worker. Why a trait: the loom model of `join` with a
/// thief (`loom_model/join_steal.rs`) runs this very loop with a worker of its own, whose
/// deques are loom's and which has no thread-local, no timeline and no regions.
/// Monomorphised: the pool's loop compiles as if it called the [`WorkerThread`] directly.
pub(crate) trait Waiter: ParkObserver {
    /// The handle through which the loop runs jobs (and settles what they defer).
    type Run<'a>: RunJobs
    where
        Self: 'a;
    /// Starts the loop's run of jobs; dropping it settles.
    fn run_jobs(&self) -> Self::Run<'_>;
    /// The pool's sleep state.
    fn sleep(&self) -> &Sleep;
    /// This worker's index.
    fn index(&self) -> usize;
    /// Moves every private `join` half to the deque, oldest first.
    fn promote_all(&self);
    /// The next job of this worker's own queues (deque, broadcast queue, batch), in the
    /// order `frame` allows, without touching the shared sleep counters.
    fn take_own_job(&self, frame: WaitFrame) -> Option<JobRef>;
    /// One search of the other queues (injector, other workers' deques).
    fn find_work(&self) -> Option<JobRef>;
    /// Takes another worker's oldest private half.
    fn rescue(&self) -> Option<JobRef>;
    /// This worker's metrics block (the loop counts its rescues there).
    fn counters(&self) -> &WorkerCounters;
    /// Whether any queue this worker could take a job from holds one (racy).
    fn has_queued_jobs(&self) -> bool;
    /// The search or rescue that just returned a job is over and the worker counts as
    /// running again: tells observers where the job came from.
    fn tell_found(&self) {}
    /// The worker ran out of its own work and is about to look elsewhere (and maybe
    /// park): tells observers, once per idle period, while the worker still counts as
    /// running. Returns whether it told (observers are user code, which may have pushed
    /// work: the loop then looks at its own queues again).
    fn tell_idle(&self) -> bool {
        false
    }
    /// The idle period that [`tell_idle`](Self::tell_idle) announced is over and the
    /// worker counts as running again: tells observers.
    fn tell_active(&self) {}
}

/// Runs jobs on `worker` until `latch` is set; parks when there are none. Local jobs come
/// first, then a search (`find_work`), then a rescue, then the sleep module, as in
/// rayon-core's wait: no injected job overtakes a local one in a [`WaitFrame::User`] wait
/// (`docs/guarantees.md`, "Where a worker runs other jobs").
// The round limits are 0 under loom (fewer states): a comparison against them is then
// constant, which is the point.
#[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
pub(crate) fn wait_loop<W: Waiter>(worker: &W, latch: &CoreLatch, frame: WaitFrame) {
    // A panic that unwound out of here would pop the waiting frame (a `join` whose
    // second half a thief may still be writing, a scope whose jobs still run) while
    // others use it: abort instead (rayon-core arms the same guard here). Jobs run
    // under their own `catch_unwind`; this fires only on a bug of the scheduler.
    let abort_guard = crate::unwind::AbortIfPanic;
    // A waiting worker hides nothing: its private halves become stealable.
    worker.promote_all();
    let sleep = worker.sleep();
    // Work queued besides what this worker just found, for "the last searcher wakes
    // one" (`Sleep::work_found`): the same look as before parking.
    let more_work = || worker.has_queued_jobs();
    let run = worker.run_jobs();
    // Whether this wait told observers of an idle period it has not ended yet (a wait
    // nested in an observer's code belongs to the period, and neither opens nor ends one).
    let mut told_idle = false;
    'outer: while !latch.probe() {
        // Own work first, without touching the shared sleep counters.
        if let Some(job) = worker.take_own_job(frame) {
            // An observer told of an idle period may have pushed it.
            end_idle(worker, &mut told_idle);
            run.execute(job);
            run.settle_for(latch);
            continue;
        }
        // Out of own work: nothing stays deferred while searching or parked.
        run.settle();
        // Observers (user code) run here, while the worker counts as running, never
        // inside the idle protocol: a wait of theirs would count this worker twice.
        if !told_idle && worker.tell_idle() {
            told_idle = true;
            continue;
        }
        let mut idle_state = sleep.start_looking(worker.index());
        while !latch.probe() {
            if let Some(job) = worker.find_work() {
                sleep.work_found(&mut idle_state, more_work);
                end_idle(worker, &mut told_idle);
                worker.tell_found();
                run.execute(job);
                run.settle_for(latch);
                // The job may have pushed local work: start over.
                continue 'outer;
            }
            if idle_state.rounds() >= ROUNDS_UNTIL_RESCUE {
                if let Some(job) = worker.rescue() {
                    sleep.work_found(&mut idle_state, more_work);
                    end_idle(worker, &mut told_idle);
                    worker.tell_found();
                    worker.counters().rescue();
                    run.execute(job);
                    run.settle_for(latch);
                    continue 'outer;
                }
            }
            sleep.no_work_found(&mut idle_state, latch, worker, more_work);
        }
        // The latch is set: we are active again.
        sleep.work_found(&mut idle_state, more_work);
        break;
    }
    // The idle period ends with the wait, also when the latch was set while an observer
    // was told of it.
    end_idle(worker, &mut told_idle);
    // Back to the waiting code: `run` drops here and delivers what the jobs deferred, so
    // that no count or arena chunk stays held while the caller's code runs.
    drop(run);
    std::mem::forget(abort_guard);
}

/// Ends the idle period this wait told observers of (`told_idle`), if any.
#[inline(always)]
fn end_idle<W: Waiter>(worker: &W, told_idle: &mut bool) {
    if std::mem::take(told_idle) {
        worker.tell_active();
    }
}

impl WorkerThread {
    /// Runs jobs until `latch` is set; parks when there is nothing to do. For a wait
    /// inside a user's frame: `join` for its stolen half, a scope for its jobs, a
    /// cross-pool `install`, `block_on`, a join handle.
    #[inline]
    pub(crate) fn wait_until<L: AsCoreLatch + ?Sized>(&self, latch: &L) {
        let latch = latch.as_core_latch();
        if !latch.probe() {
            self.wait_until_cold(latch);
        }
    }

    /// The rest of [`wait_until`](Self::wait_until) when `latch` is not set yet: the wait
    /// loop, for a user frame.
    #[cold]
    fn wait_until_cold(&self, latch: &CoreLatch) {
        match self.region() {
            Some(region) => self.wait_isolated(&region, latch),
            None => wait_loop(self, latch, WaitFrame::User),
        }
    }

    /// The scheduling loop of a worker thread: runs jobs until the pool's `terminate`
    /// latch is set. No user frame is below it, so every `FAIR_INTERVAL`-th local job
    /// gives way to an injected one (`take_local_job_fair`).
    pub(crate) fn main_loop(&self, terminate: &CoreLatch) {
        if !terminate.probe() {
            wait_loop(self, terminate, WaitFrame::Top);
        }
    }
}

impl Waiter for WorkerThread {
    type Run<'a> = super::JobRun<'a>;

    #[inline]
    fn run_jobs(&self) -> Self::Run<'_> {
        WorkerThread::run_jobs(self)
    }
    #[inline]
    fn sleep(&self) -> &Sleep {
        &self.registry.sleep
    }
    #[inline]
    fn index(&self) -> usize {
        WorkerThread::index(self)
    }
    #[inline]
    fn promote_all(&self) {
        WorkerThread::promote_all(self)
    }
    /// The own deque (fairly, in the top frame), then the own broadcast and batch queues:
    /// the search's next two steps in its order, still without the counters (a batch is
    /// many jobs).
    #[inline]
    fn take_own_job(&self, frame: WaitFrame) -> Option<JobRef> {
        match frame {
            WaitFrame::Top => self.take_local_job_fair(),
            WaitFrame::User => self.take_local_job(),
        }
        .or_else(|| self.take_broadcast_job(&mut false))
        .or_else(|| self.take_batched_job())
    }
    #[inline]
    fn find_work(&self) -> Option<JobRef> {
        WorkerThread::find_work(self)
    }
    #[inline]
    fn rescue(&self) -> Option<JobRef> {
        WorkerThread::rescue(self)
    }
    #[inline]
    fn counters(&self) -> &WorkerCounters {
        &self.counters
    }
    #[inline]
    fn has_queued_jobs(&self) -> bool {
        WorkerThread::has_queued_jobs(self)
    }
    #[inline]
    fn tell_found(&self) {
        WorkerThread::tell_found(self)
    }
    #[inline]
    fn tell_idle(&self) -> bool {
        WorkerThread::tell_idle(self)
    }
    #[inline]
    fn tell_active(&self) {
        WorkerThread::tell_active(self)
    }
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

/// A parking worker tells its metrics and its timeline (no user code: it runs inside the
/// idle protocol; `tracing` hears of the idle period from `tell_idle`/`tell_active`).
impl ParkObserver for WorkerThread {
    #[inline]
    fn parked(&self, since_epoch_ns: u64) {
        self.counters.park(since_epoch_ns);
        self.timeline.park();
    }
    #[inline]
    fn unparked(&self, nanos: u64) {
        self.counters.unparked(nanos);
        self.timeline.unpark();
        #[cfg(feature = "tracing")]
        self.idle.parked_ns.set(self.idle.parked_ns.get() + nanos);
    }
}
