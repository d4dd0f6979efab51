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
//! * the wait loop (`pool::worker::wait_loop`, the function every worker's wait runs):
//!   own deque, then a search, then a rescue, then the sleep module;
//! * the private stack of halves (`PrivateStack`: push, pop, promotion, rescue);
//! * the sleep module (`start_looking`, `work_found`, `no_work_found`, the latch setter's
//!   wake-up) and the deques' model (`sync/deque/model.rs`).
//!
//! What the model worker supplies itself (the [`Waiter`], [`JoinFrame`] and [`JoinWorker`]
//! methods) are its queues: its own deque is the only own queue (no broadcasts, no
//! batches), and a search is one steal from the other worker. The real search's victim
//! order is random (fastrand), which loom cannot replay; with two workers there is one
//! victim anyway. Its per-`join` poll is the real one (`PrivateStack::poll`), with an
//! option to promote always. Its jobs defer nothing (no scope jobs), so its [`RunJobs`]
//! only executes.

use crate::job::JobRef;
use crate::join::FnContext;
use crate::join::{join_on, JoinFrame, JoinWorker};
use crate::latch::{CoreLatch, LatchOwner};
use crate::metrics::WorkerCounters;
use crate::pool::private_stack::PrivateStack;
use crate::pool::worker::{wait_loop, RunJobs, WaitFrame, Waiter};
use crate::sleep::{ParkObserver, Sleep};
use crate::sync::barrier::{FixedLight, Light};
use crate::sync::deque::{Steal, Stealer, Worker};
use crate::sync::unchecked::Arc;

/// The model pool's workers.
const WORKERS: usize = 2;
/// The worker that calls `join` (the test's owner thread).
const OWNER: usize = 0;
/// The worker that runs the scheduling loop and steals or rescues the owner's halves.
const THIEF: usize = 1;

/// Two workers' deques, private stacks and sleep state.
pub struct ModelPool {
    /// The pool's sleep state.
    sleep: Arc<Sleep>,
    /// Each worker's metrics counters (promotions, rescues, parks).
    counters: Vec<WorkerCounters>,
    /// Each worker's deque (the deque model), LIFO.
    deques: Vec<Worker<JobRef>>,
    /// The stealing ends of the deques, by worker.
    stealers: Vec<Stealer<JobRef>>,
    /// Each worker's private stack of `join` halves.
    private_stack: Vec<PrivateStack>,
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
            private_stack: (0..WORKERS)
                .map(|index| {
                    PrivateStack::new(
                        LatchOwner {
                            sleep: Arc::clone(&sleep),
                            index,
                        },
                        true,
                    )
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
        wait_loop(&self.worker(THIEF), &self.terminate, WaitFrame::Top);
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

    /// Worker `index`, as the `join` frame and the wait loop see it.
    fn worker(&self, index: usize) -> ModelWorker<'_> {
        ModelWorker { pool: self, index }
    }

    /// `Registry::has_queued_jobs`: the sleeper's last look.
    fn has_queued_jobs(&self) -> bool {
        (0..WORKERS)
            .any(|i| !self.stealers[i].is_empty() || self.private_stack[i].has_private_halves())
    }
}

/// One worker of the model pool, as the `join` frame sees it.
struct ModelWorker<'p> {
    /// The pool the worker belongs to.
    pool: &'p ModelPool,
    /// The worker's index: [`OWNER`] or [`THIEF`].
    index: usize,
}

impl ModelWorker<'_> {
    /// This worker's deque.
    fn deque(&self) -> &Worker<JobRef> {
        &self.pool.deques[self.index]
    }

    /// This worker's private stack of `join` halves.
    fn private_stack(&self) -> &PrivateStack {
        &self.pool.private_stack[self.index]
    }

    /// A steal from the other worker's deque; a `Retry` is tried again (the real search
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
}

/// The model's run of jobs: executes them; nothing is deferred.
struct ModelRun;

impl RunJobs for ModelRun {
    fn execute(&self, job: JobRef) {
        // SAFETY: every job here came out of a deque or a private stack exactly once.
        unsafe { job.execute() }
    }
    fn settle(&self) {}
    fn settle_for(&self, _: &CoreLatch) {}
}

impl Waiter for ModelWorker<'_> {
    type Run<'a>
        = ModelRun
    where
        Self: 'a;

    fn run_jobs(&self) -> ModelRun {
        ModelRun
    }
    fn sleep(&self) -> &Sleep {
        &self.pool.sleep
    }
    fn index(&self) -> usize {
        self.index
    }
    /// `WorkerThread::promote_all`.
    fn promote_all(&self) {
        while self.promote_oldest() {}
    }
    fn take_own_job(&self, _: WaitFrame) -> Option<JobRef> {
        self.deque().pop()
    }
    fn find_work(&self) -> Option<JobRef> {
        self.steal()
    }
    /// `WorkerThread::rescue`.
    fn rescue(&self) -> Option<JobRef> {
        let victim = 1 - self.index;
        let stealer = &self.pool.stealers[victim];
        self.pool.private_stack[victim].rescue(|| stealer.is_empty())
    }
    fn counters(&self) -> &WorkerCounters {
        &self.pool.counters[self.index]
    }
    fn has_queued_jobs(&self) -> bool {
        self.pool.has_queued_jobs()
    }
}

impl ParkObserver for ModelWorker<'_> {
    fn parked(&self, since_epoch_ns: u64) {
        self.counters().parked(since_epoch_ns)
    }
    fn unparked(&self, nanos: u64) {
        ParkObserver::unparked(self.counters(), nanos)
    }
}

impl JoinFrame for ModelWorker<'_> {
    type Worker = Self;
    /// The fast path's barrier (`PrivateStackRef`'s), which every worker runs once its
    /// light barrier is fixed (from the start in the fence builds the model is built with).
    type Light = FixedLight;

    fn stack(&self) -> &PrivateStack {
        self.private_stack()
    }

    fn light(&self) -> FixedLight {
        FixedLight::get().expect("the fence builds fix the light barrier from the start")
    }

    /// The real poll (`PrivateStack::poll`), or always with `always_promote`. With two
    /// workers the one idle worker is either awake or parked, so the poll's two rules
    /// (`Light::EXACT_FOR_POLL`) answer alike; the unit tests of `pool/private_stack` tell
    /// them apart.
    fn poll(&self) -> bool {
        self.private_stack()
            .poll(<FixedLight as Light>::EXACT_FOR_POLL)
            || self.pool.always_promote
    }

    fn with_worker<R>(&self, f: impl FnOnce(&Self) -> R) -> R {
        f(self)
    }
}

impl JoinWorker for ModelWorker<'_> {
    fn nothing_offered(&self) -> bool {
        self.deque().is_empty()
    }

    /// `WorkerThread::promote_oldest`.
    fn promote_oldest(&self) -> bool {
        let promoted = self
            .private_stack()
            .promote_oldest(|job| self.deque().push(job));
        if promoted {
            self.counters().promotion();
            self.pool.sleep.new_jobs(1, true);
        }
        promoted
    }

    fn pop_local(&self) -> Option<JobRef> {
        self.deque().pop()
    }

    fn count_local_pop(&self) {}

    fn wait_until(&self, latch: &CoreLatch) {
        if !latch.probe() {
            wait_loop(self, latch, WaitFrame::User);
        }
    }
}
