//! A `join` whose second half may be promoted, stolen or rescued, for the loom model
//! (`tests/loom_join_steal.rs`); only with `--cfg loom`. Not an API.
//!
//! A two-worker pool without threads of its own: the test runs worker 0 (the owner, which
//! calls [`ModelPool::join`]) and worker 1 (the thief, [`ModelPool::run_thief`]) on loom
//! threads. What runs is the real code wherever the code does not depend on a thread-local
//! `WorkerThread` or on a random number generator:
//!
//! * the `join` frame itself (`join::join_on`, the same function `join_context` calls,
//!   with its reclaim loop and its panic path), the stack job and its `JoinLatch`;
//! * the private stack of halves (`PendingHalves`: push, pop, promotion, rescue);
//! * the sleep module (`start_looking`, `work_found`, `no_work_found`, the latch setter's
//!   wake-up) and the deques' model (`sync/deque/model.rs`).
//!
//! What is transcribed here, from `worker/lazy_join.rs` and `worker/mod.rs`, is the
//! worker's side: the per-`join` poll that decides a promotion, and the wait loop
//! (`wait_until_cold`: own deque, then a steal from the other worker, then a rescue, then
//! the sleep module). The real loop's victim order is random (fastrand), which loom cannot
//! replay; with two workers there is one victim anyway.

use crate::job::{JobRef, JoinHalf};
use crate::join::{join_on, JoinWorker};
use crate::latch::{CoreLatch, LatchOwner};
use crate::metrics::WorkerCounters;
use crate::pool::pending::{PendingHalves, Popped};
use crate::sleep::{Sleep, ROUNDS_UNTIL_RESCUE};
use crate::sync::deque::{Steal, Stealer, Worker};
use crate::sync::Arc;
use crate::FnContext;

const WORKERS: usize = 2;
const OWNER: usize = 0;
const THIEF: usize = 1;

/// Two workers' deques, private stacks and sleep state.
pub struct ModelPool {
    sleep: Arc<Sleep>,
    counters: Vec<WorkerCounters>,
    deques: Vec<Worker<JobRef>>,
    stealers: Vec<Stealer<JobRef>>,
    pending: Vec<PendingHalves>,
    /// The thief's terminate latch.
    terminate: CoreLatch,
    /// Promote on every `join`, not only when the poll sees an idle worker.
    always_promote: bool,
}

impl std::fmt::Debug for ModelPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelPool").finish_non_exhaustive()
    }
}

impl ModelPool {
    /// A pool whose owner promotes the oldest half on every `join` (`always_promote`), or
    /// only when its poll sees the thief idle, as the real worker does.
    pub fn new(always_promote: bool) -> ModelPool {
        let deques: Vec<Worker<JobRef>> = (0..WORKERS).map(|_| Worker::new_lifo()).collect();
        let sleep = Arc::new(Sleep::new(WORKERS));
        ModelPool {
            pending: (0..WORKERS)
                .map(|index| {
                    PendingHalves::new(LatchOwner {
                        sleep: Arc::clone(&sleep),
                        index,
                    })
                })
                .collect(),
            sleep,
            counters: (0..WORKERS).map(|_| WorkerCounters::default()).collect(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            deques,
            terminate: CoreLatch::new(),
            always_promote,
        }
    }

    /// The real `join` frame on worker 0. Call it on the owner's thread only, also when
    /// nested (from a first half, which always runs on the owner).
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce(FnContext) -> RA + Send,
        B: FnOnce(FnContext) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        join_on(&self.worker(OWNER), false, oper_a, oper_b)
    }

    /// Worker 1's scheduling loop, until [`stop_thief`](Self::stop_thief).
    pub fn run_thief(&self) {
        self.worker(THIEF).wait_until_core(&self.terminate);
    }

    /// Ends the thief's loop, waking it if it sleeps (as a pool's termination does).
    pub fn stop_thief(&self) {
        // SAFETY: the latch lives in `self`, borrowed for the whole call.
        unsafe { self.sleep.set_latch_and_wake(&self.terminate, THIEF) };
    }

    /// Promotions and rescues so far (from the workers' counters).
    pub fn promotions_and_rescues(&self) -> (u64, u64) {
        let snapshots: Vec<_> = (self.counters.iter().enumerate())
            .map(|(i, c)| c.snapshot(i, 0))
            .collect();
        (
            snapshots.iter().map(|m| m.promotions).sum(),
            snapshots.iter().map(|m| m.rescues).sum(),
        )
    }

    fn worker(&self, index: usize) -> ModelWorker<'_> {
        ModelWorker { pool: self, index }
    }

    /// `Registry::has_pending_jobs`: the sleeper's last look.
    fn has_pending_jobs(&self) -> bool {
        (0..WORKERS).any(|i| !self.stealers[i].is_empty() || self.pending[i].has_private())
    }
}

/// One worker of the model pool, as the `join` frame sees it.
struct ModelWorker<'p> {
    pool: &'p ModelPool,
    index: usize,
}

impl ModelWorker<'_> {
    fn deque(&self) -> &Worker<JobRef> {
        &self.pool.deques[self.index]
    }

    fn pending(&self) -> &PendingHalves {
        &self.pool.pending[self.index]
    }

    fn counters(&self) -> &WorkerCounters {
        &self.pool.counters[self.index]
    }

    /// `WorkerThread::promote_oldest`.
    fn promote_oldest(&self) -> bool {
        let promoted = self.pending().promote_oldest(|job| self.deque().push(job));
        if promoted {
            self.counters().promotion();
            self.pool.sleep.new_jobs(1, true);
        }
        promoted
    }

    /// A steal from the other worker's deque; a `Retry` is tried again (the real loop
    /// repeats the round after a backoff step).
    fn steal(&self) -> Option<JobRef> {
        let victim = &self.pool.stealers[1 - self.index];
        loop {
            match victim.steal() {
                Steal::Success(job) => return Some(job),
                Steal::Empty => return None,
                Steal::Retry => loom::thread::yield_now(),
            }
        }
    }

    /// `WorkerThread::rescue`.
    fn rescue(&self) -> Option<JobRef> {
        let victim = 1 - self.index;
        let stealer = &self.pool.stealers[victim];
        self.pool.pending[victim].rescue(|| stealer.is_empty())
    }

    fn execute(&self, job: JobRef) {
        // SAFETY: every job here came out of a deque or a private stack exactly once.
        unsafe { job.execute() }
    }

    /// `WorkerThread::wait_until_cold` for a wait inside a user's frame (local jobs
    /// first, then a search), without what the model has no use for (the injector,
    /// broadcasts, deferred count-downs).
    // The round limits are 0 under loom (fewer states): a comparison against them is then
    // constant, which is the point.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    fn wait_until_core(&self, latch: &CoreLatch) {
        while self.promote_oldest() {}
        let sleep = &self.pool.sleep;
        let more_work = || self.pool.has_pending_jobs();
        'outer: while !latch.probe() {
            if let Some(job) = self.deque().pop() {
                self.execute(job);
                continue;
            }
            let mut idle_state = sleep.start_looking(self.index);
            while !latch.probe() {
                if let Some(job) = self.steal() {
                    sleep.work_found(&mut idle_state, more_work);
                    self.execute(job);
                    continue 'outer;
                }
                if idle_state.rounds() >= ROUNDS_UNTIL_RESCUE {
                    if let Some(job) = self.rescue() {
                        sleep.work_found(&mut idle_state, more_work);
                        self.counters().rescue();
                        self.execute(job);
                        continue 'outer;
                    }
                }
                sleep.no_work_found(&mut idle_state, latch, self.counters(), more_work);
            }
            sleep.work_found(&mut idle_state, more_work);
            break;
        }
    }
}

impl JoinWorker for ModelWorker<'_> {
    fn reserve_pending(&self) -> Option<usize> {
        self.pending().reserve()
    }

    fn make_room_pending(&self) -> usize {
        self.pending().make_room(|| self.promote_oldest())
    }

    /// `WorkerThread::push_pending` and its poll (`poll_join`).
    unsafe fn push_pending(&self, pos: usize, job: JoinHalf) {
        self.pending().push_at(pos, job);
        let idle = self.pool.sleep.idle_workers_after_private_push();
        if (idle || self.pool.always_promote) && self.deque().is_empty() {
            self.promote_oldest();
        }
    }

    fn pop_pending(&self, pos: usize) -> Popped {
        self.pending().pop(pos)
    }

    fn pop_local(&self) -> Option<JobRef> {
        self.deque().pop()
    }

    fn execute_local(&self, job: JobRef) {
        self.execute(job)
    }

    fn wait_until(&self, latch: &CoreLatch) {
        if !latch.probe() {
            self.wait_until_core(latch);
        }
    }

    fn flush_count_downs(&self) {}
}
