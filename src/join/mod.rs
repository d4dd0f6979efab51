//! `join`: run two closures, potentially in parallel.
//!
//! The caller keeps the second closure (`b`) as a stack job on its private stack of pending
//! halves (`pool::private_stack`), runs the first (`a`) itself, then takes `b` back: still
//! private, `b` runs inline (plain stores and loads, no allocation, and on Linux no fence);
//! promoted to the deque or rescued by an idle worker, the caller pops its deque as
//! rayon-core does and keeps executing other jobs until `b`'s latch is set. The design, and
//! the argument that no half is lost or run twice, are in `docs/join.md`.
//!
//! Offering `b` and taking it back are kept behind the small [`SecondHalf`] interface;
//! the end of the `join` once `b` came back is `finish.rs`. Inside an isolation region
//! the same `join` runs: a half that leaves the stack goes to a region's queue, and is
//! taken back from there (`pool::worker::isolate`, `docs/isolation.md`).

use crate::job::{JobRef, JoinHalf, StackJob};
use crate::latch::{CoreLatch, JoinLatch};
use crate::pool::global;
use crate::pool::private_stack::{Popped, PrivateStack};
use crate::pool::worker::{PrivateStackRef, RunJobs, Waiter, WorkerThread};
use crate::sync::barrier::{CheckedLight, FixedLight, Light};
use crate::unwind;

mod context;
mod finish;
#[cfg(test)]
mod test;

pub use context::FnContext;
use finish::{finish_b, finish_b_and_resume, Reclaimed};

/// Runs `oper_a` and `oper_b`, potentially in parallel, and returns both results.
///
/// `oper_a` runs on the calling thread; `oper_b` is offered to other workers and runs on
/// the calling thread too if nobody took it. Called outside any pool, the whole `join` is
/// first moved onto the global pool (the caller blocks until it is done). Both closures
/// always run to completion. Same contract as rayon-core's `join`.
///
/// # Panics
/// If either closure panics, `join` still waits for the other to finish, then re-raises
/// the panic in the caller; if both panic, `oper_a`'s panic is the one re-raised.
///
/// Called outside any pool, also panics if the global pool has to be built and cannot be
/// (see [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)), and,
/// on Windows, with the reason instead of hanging, if the caller holds the loader lock (a
/// thread-local destructor) and no worker of the global pool has started, or the process
/// is exiting (`docs/guarantees.md`).
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 { return n; }
///     let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
pub fn join<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context(|_| oper_a(), |_| oper_b())
}

/// Like [`join`], but each closure receives a [`FnContext`] telling whether it was
/// *migrated*: stolen by another worker, or run on a worker because the call came from
/// outside the pool (see [`FnContext::migrated`] for the exact rule).
///
/// # Panics
/// As [`join`].
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (a, (b, b_elsewhere)) = pool.install(|| {
///     let caller = std::thread::current().id();
///     stealpool::join_context(
///         |ctx| ctx.migrated(),
///         move |ctx| (ctx.migrated(), std::thread::current().id() != caller),
///     )
/// });
/// // The first closure runs on the calling worker: never migrated.
/// assert!(!a);
/// // Here (`oper_a` does not wait), the second one is migrated if, and only if, another
/// // worker ran it.
/// assert_eq!(b, b_elsewhere);
///
/// // Called from outside the pool, the whole `join` moves onto a worker of the global
/// // pool, so the first closure counts as migrated too.
/// let (a, _) = stealpool::join_context(|ctx| ctx.migrated(), |_| ());
/// assert!(a);
/// ```
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_here(oper_a, oper_b)
}

/// The body of [`join_context`]: on the current worker's [`PrivateStackRef`] (the fast
/// path), else [`join_checked`]. Its own function, not inlined into the caller, with the
/// thread-local read inside: a recursive caller (a divide-and-conquer) stays small enough
/// to be inlined into this frame, its base case tested here without a call, and the
/// thread-local read is this function's own, not one inlined from the caller.
#[inline(never)]
fn join_here<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    WorkerThread::with_private_stack(|stack| match stack {
        Some(stack) => join_on(&stack, false, oper_a, oper_b),
        None => {
            join_checked(|worker_thread, injected| join_on(worker_thread, injected, oper_a, oper_b))
        }
    })
}

/// [`join_context`] without a [`PrivateStackRef`]: on a thread that is not a worker (the
/// `join` moves onto the global pool), or on a worker whose light barrier is not fixed yet
/// (the asymmetric barrier not published). `frame` is the `join` frame, run on the
/// [`WorkerThread`] (which tests the barrier mode at each pop) after the worker's join
/// stack was fixed if it can be.
#[cold]
#[inline(never)]
fn join_checked<OP, R>(frame: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    global::in_worker(|worker_thread, injected| {
        WorkerThread::fix_current_private_stack();
        frame(worker_thread, injected)
    })
}

/// What a `join` frame runs on: the private stack and the pop's barrier on the fast path,
/// the worker behind them for everything else. Three frames: the current worker's
/// [`PrivateStackRef`] (the fast path), the [`WorkerThread`] itself (the checked path), and
/// the loom model's worker (`tests/loom_join_steal.rs`), so that the model runs this very
/// code. Monomorphised: the real `join` compiles as if it touched the stack directly.
pub(crate) trait JoinFrame {
    /// The worker behind the frame.
    type Worker: JoinWorker;
    /// The owner's side of the barrier pair in the pop.
    type Light: Light;
    /// The worker's private stack of halves.
    fn stack(&self) -> &PrivateStack;
    /// The pop's light barrier.
    fn light(&self) -> Self::Light;
    /// After the push: whether the worker should offer its oldest half
    /// ([`promote_for_idle`]).
    #[inline(always)]
    fn poll(&self) -> bool {
        self.stack().poll(<Self::Light as Light>::EXACT_FOR_POLL)
    }
    /// Runs `f` on the worker (off the fast path: a full stack, a promotion, a half that
    /// was taken).
    fn with_worker<R>(&self, f: impl FnOnce(&Self::Worker) -> R) -> R;
}

/// What a `join` frame needs from its worker off the fast path: the real
/// [`WorkerThread`], or the loom model's worker. Why a trait: as for [`JoinFrame`], so
/// that the model runs this very `join`.
pub(crate) trait JoinWorker: Waiter {
    /// Whether nothing this worker offered is still waiting for a thief: its own deque is
    /// empty (the owner's view), or, inside an isolation region, the region's queue.
    fn nothing_offered(&self) -> bool;
    /// Moves the oldest private half to the own deque and tells the sleep module; returns
    /// whether there was one. Out of line: the `join` frame calls it only to make room or
    /// for an idle worker.
    fn promote_oldest(&self) -> bool;
    /// Pops the own deque (LIFO), without counting it as a job taken.
    fn pop_local(&self) -> Option<JobRef>;
    /// Counts a job popped from the own deque that is not `b` as a local pop (metrics).
    fn count_local_pop(&self);
    /// [`WorkerThread::wait_until`]: runs other jobs, or parks, until `latch` is set.
    fn wait_until(&self, latch: &CoreLatch);
    /// Inside an isolation region, takes back a half that left the private stack: from
    /// its region's queue by its identity `id` (`Some(true)`: run it inline), else waits
    /// for `latch` in that region (`Some(false)`). `None` outside every region: the
    /// caller pops the deque instead.
    fn take_back_in_region(&self, id: (*const (), usize), latch: &CoreLatch) -> Option<bool> {
        let _ = (id, latch);
        None
    }
}

impl JoinFrame for PrivateStackRef<'_> {
    type Worker = WorkerThread;
    type Light = FixedLight;
    #[inline(always)]
    fn stack(&self) -> &PrivateStack {
        PrivateStackRef::stack(self)
    }
    #[inline(always)]
    fn light(&self) -> FixedLight {
        PrivateStackRef::light(self)
    }
    #[inline(always)]
    fn with_worker<R>(&self, f: impl FnOnce(&WorkerThread) -> R) -> R {
        // A join stack exists only while its worker is the current thread's.
        WorkerThread::with_current(|worker| {
            f(worker.expect("stealpool: join stack without a worker"))
        })
    }
}

impl JoinFrame for WorkerThread {
    type Worker = WorkerThread;
    type Light = CheckedLight;
    #[inline(always)]
    fn stack(&self) -> &PrivateStack {
        self.private_stack()
    }
    #[inline(always)]
    fn light(&self) -> CheckedLight {
        CheckedLight
    }
    #[inline(always)]
    fn with_worker<R>(&self, f: impl FnOnce(&WorkerThread) -> R) -> R {
        f(self)
    }
}

impl JoinWorker for WorkerThread {
    #[inline(always)]
    fn nothing_offered(&self) -> bool {
        WorkerThread::nothing_offered(self)
    }
    #[inline(always)]
    fn promote_oldest(&self) -> bool {
        WorkerThread::promote_oldest_cold(self)
    }
    #[inline(always)]
    fn pop_local(&self) -> Option<JobRef> {
        WorkerThread::pop_local(self)
    }
    #[inline(always)]
    fn count_local_pop(&self) {
        self.counters().local_pop();
    }
    #[inline(always)]
    fn wait_until(&self, latch: &CoreLatch) {
        WorkerThread::wait_until(self, latch)
    }
    #[inline(always)]
    fn take_back_in_region(&self, id: (*const (), usize), latch: &CoreLatch) -> Option<bool> {
        WorkerThread::take_back_in_region(self, id, latch)
    }
}

/// The `join` frame on `frame`: `injected` says whether the call came from outside the
/// pool (then `a` counts as migrated). The body of [`join_context`].
#[inline(always)]
pub(crate) fn join_on<J, A, B, RA, RB>(frame: &J, injected: bool, oper_a: A, oper_b: B) -> (RA, RB)
where
    J: JoinFrame,
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // A full private stack is made room on out of line (the oldest halves promoted).
    let pos = match frame.stack().reserve() {
        Some(pos) => pos,
        None => frame.with_worker(|worker| make_room(frame.stack(), worker)),
    };
    let job_b = StackJob::new(
        |migrated| oper_b(FnContext::new(migrated)),
        JoinLatch::new_unwritten(),
    );
    // SAFETY: `job_b` stays on this frame until it was either taken back (and run
    // inline) or its latch was observed set: every path below waits for one of them,
    // including the panic path (`reclaim` pops the half back and, if it was promoted,
    // waits for its latch or finds it on the deque). It runs at most once: whoever takes
    // it from the private stack or the deque.
    let offered = SecondHalf::offer(frame, pos, unsafe { job_b.as_join_half() });

    let result_a = match unwind::halt_unwinding(|| oper_a(FnContext::new(injected))) {
        Ok(value) => value,
        Err(payload) => unwind_after_b(frame, offered, &job_b, injected, payload),
    };

    finish_b(result_a, offered.reclaim(frame, &job_b), &job_b, injected)
}

/// `join`'s first half panicked with `payload`: `job_b` points into the `join`'s frame, so
/// finish it before unwinding (run it here if it is still ours, else wait for it), then
/// resume the panic. `b`'s result, value or panic, is discarded quietly: `a`'s panic wins.
/// Out of line, so the `join` frame keeps only what this call needs across `a`.
#[cold]
#[inline(never)]
fn unwind_after_b<F, R>(
    frame: &impl JoinFrame,
    offered: SecondHalf,
    job_b: &StackJob<JoinLatch, F, R>,
    injected: bool,
    payload: Box<dyn std::any::Any + Send>,
) -> !
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    finish_b_and_resume(offered.reclaim(frame, job_b), job_b, injected, payload)
}

/// The second half of a `join` while its first half runs: its position on the private
/// stack. (Only the position: the cold path recomputes the half's identity from the job,
/// so the fast path keeps nothing else alive across the first half.)
///
/// The half waits on the worker's private stack (`pool::private_stack`) and is promoted to
/// the worker's deque only when another worker could take it (`docs/join.md`).
struct SecondHalf {
    /// The half's position on the worker's private stack.
    pos: usize,
}

impl SecondHalf {
    /// Keeps `job_b` on the worker's private stack at `pos` (reserved), from where it may
    /// be promoted, and polls whether anyone could use a promoted half (`docs/join.md`).
    /// The caller of [`reclaim`](Self::reclaim) keeps the job alive until it returns (the
    /// obligation `JoinHalf`'s maker took on).
    #[inline(always)]
    fn offer<J: JoinFrame>(frame: &J, pos: usize, job_b: JoinHalf) -> SecondHalf {
        frame.stack().push_at(pos, job_b);
        if frame.poll() {
            frame.with_worker(|worker| promote_for_idle(frame.stack(), worker));
        }
        SecondHalf { pos }
    }

    /// Takes the second half `job_b` back after the first half returned. Still private:
    /// the caller runs it inline. Promoted: pops the own deque until it finds `b`
    /// (running anything the first half left behind), or finds the deque empty, meaning
    /// `b` was stolen, and then waits for its latch while running other jobs.
    #[inline(always)]
    fn reclaim<F, R>(self, frame: &impl JoinFrame, job_b: &StackJob<JoinLatch, F, R>) -> Reclaimed
    where
        F: FnOnce(bool) -> R + Send,
        R: Send,
    {
        match frame.stack().pop(self.pos, frame.light()) {
            Popped::Private => Reclaimed::NotStolen,
            // Promoted or rescued: in both cases pop the deque as rayon-core does. A
            // rescued half is not there; the loop runs what `a` left behind, finds the
            // deque empty and waits for the latch (docs/join.md, "Order").
            Popped::Taken => {
                // SAFETY: taken: the half left the private stack, which wrote its latch
                // under the stack's lock before our pop took that lock.
                let latch = unsafe { job_b.latch.core_latch() };
                frame.with_worker(|worker| reclaim_taken(worker, job_b.id(), latch))
            }
        }
    }
}

/// The private stack is full: promotes its oldest halves until a push fits, and returns
/// the position reserved (`PrivateStack::make_room`). Out of line: past 63 nested
/// `join`s only.
#[cold]
#[inline(never)]
fn make_room(stack: &PrivateStack, worker: &impl JoinWorker) -> usize {
    stack.make_room(|| worker.promote_oldest())
}

/// The rest of the per-`join` poll (`PrivateStack::poll`) when some worker is idle:
/// promotes the oldest half, unless the deque still holds an earlier one (a thief takes
/// that first; the next polls are then skipped, `PrivateStack::skip_polls`). Inlined
/// into the frame: the look at the deque is two loads, and only a promotion is a call.
#[inline(always)]
fn promote_for_idle(stack: &PrivateStack, worker: &impl JoinWorker) {
    if worker.nothing_offered() {
        worker.promote_oldest();
    } else {
        stack.skip_polls();
    }
}

/// `SecondHalf::reclaim` for a half that left the private stack: `id` is the half's
/// identity on the deque, `latch` its latch.
#[cold]
#[inline(never)]
fn reclaim_taken(
    worker_thread: &impl JoinWorker,
    id: (*const (), usize),
    latch: &CoreLatch,
) -> Reclaimed {
    match worker_thread.take_back_in_region(id, latch) {
        Some(true) => return Reclaimed::NotStolen,
        Some(false) => return Reclaimed::Finished,
        None => {}
    }
    // The jobs run here go through `run`; it drops before the `join`'s code goes on,
    // delivering what they deferred.
    let run = worker_thread.run_jobs();
    pop_until_found(worker_thread, &run, id, latch)
}

/// The loop of [`reclaim_taken`]: pops the own deque, running through `run` every job
/// that is not the half `id`, until it pops the half (`NotStolen`) or `latch` is set
/// (`Finished`); with the deque empty, waits for `latch` while running other jobs.
fn pop_until_found<W: JoinWorker>(
    worker_thread: &W,
    run: &W::Run<'_>,
    id: (*const (), usize),
    latch: &CoreLatch,
) -> Reclaimed {
    while !latch.probe() {
        // `pop_local`, not `take_local_job`: popping our own `b` back is not a job
        // execution and is not counted as a local pop (metrics).
        match worker_thread.pop_local() {
            Some(job) if job.id() == id => return Reclaimed::NotStolen,
            Some(job) => {
                worker_thread.count_local_pop();
                run.execute(job);
            }
            None => {
                worker_thread.wait_until(latch);
                break;
            }
        }
    }
    Reclaimed::Finished
}
