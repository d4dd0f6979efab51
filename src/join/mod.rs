//! `join`: run two closures, potentially in parallel.
//!
//! The caller keeps the second closure (`b`) as a stack job on its private stack of
//! pending halves (`pending`), runs the first (`a`) itself, then takes `b` back: still
//! private, `b` runs inline (plain stores and loads, no allocation, and on Linux no
//! fence); promoted to the deque or rescued by an idle worker, the caller pops its deque
//! as rayon-core does and keeps executing other jobs until `b`'s latch is set. The
//! design, and the argument that no half is lost or run twice, are in `docs/join.md`.
//!
//! Offering `b` and taking it back are kept behind the small [`SecondHalf`] interface.

use crate::job::{JobRef, JoinHalf, StackJob};
use crate::latch::{CoreLatch, JoinLatch};
use crate::pool::pending::Popped;
use crate::pool::registry;
use crate::pool::worker::WorkerThread;
use crate::unwind;
use crate::FnContext;

#[cfg(test)]
mod test;

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
/// let (a, b) = pool.install(|| {
///     stealpool::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
/// });
/// // The first closure runs on the calling worker: never migrated.
/// assert!(!a);
/// // The second one is migrated if, and only if, another worker took it.
/// let _ = b;
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
    registry::in_worker(|worker_thread, injected| join_on(worker_thread, injected, oper_a, oper_b))
}

/// What a `join` frame needs from the worker it runs on: the real [`WorkerThread`], or the
/// loom model's worker (`tests/loom_join_steal.rs`), so that the model runs this very
/// code. Monomorphised: the real `join` compiles as if it called the worker directly.
pub(crate) trait JoinWorker {
    /// [`WorkerThread::reserve_pending`].
    fn reserve_pending(&self) -> Option<usize>;
    /// [`WorkerThread::make_room_pending`]: returns the position reserved.
    fn make_room_pending(&self) -> usize;
    /// [`WorkerThread::push_pending`].
    ///
    /// # Safety
    /// As `push_pending`: `job` stays valid until popped back, or until its latch is set.
    unsafe fn push_pending(&self, pos: usize, job: JoinHalf);
    /// [`WorkerThread::pop_pending`].
    fn pop_pending(&self, pos: usize) -> Popped;
    /// Pops the own deque (LIFO), without counting it as a job taken.
    fn pop_local(&self) -> Option<JobRef>;
    /// Runs a job popped from the own deque that is not `b` (counted as a local pop).
    fn execute_local(&self, job: JobRef);
    /// [`WorkerThread::wait_until`]: runs other jobs, or parks, until `latch` is set.
    fn wait_until(&self, latch: &CoreLatch);
    /// Delivers the scope count-downs that the jobs run here deferred.
    fn flush_count_downs(&self);
}

impl JoinWorker for WorkerThread {
    #[inline(always)]
    fn reserve_pending(&self) -> Option<usize> {
        WorkerThread::reserve_pending(self)
    }
    #[inline(always)]
    fn make_room_pending(&self) -> usize {
        WorkerThread::make_room_pending(self)
    }
    #[inline(always)]
    unsafe fn push_pending(&self, pos: usize, job: JoinHalf) {
        // SAFETY: forwarded.
        unsafe { WorkerThread::push_pending(self, pos, job) }
    }
    #[inline(always)]
    fn pop_pending(&self, pos: usize) -> Popped {
        WorkerThread::pop_pending(self, pos)
    }
    #[inline(always)]
    fn pop_local(&self) -> Option<JobRef> {
        WorkerThread::pop_local(self)
    }
    #[inline(always)]
    fn execute_local(&self, job: JobRef) {
        self.counters().local_pop();
        self.execute(job)
    }
    #[inline(always)]
    fn wait_until(&self, latch: &CoreLatch) {
        WorkerThread::wait_until(self, latch)
    }
    #[inline(always)]
    fn flush_count_downs(&self) {
        WorkerThread::flush_count_downs(self)
    }
}

/// The `join` frame on `worker`: `injected` says whether the call came from outside the
/// pool (then `a` counts as migrated). The body of [`join_context`].
#[inline(always)]
pub(crate) fn join_on<W, A, B, RA, RB>(worker: &W, injected: bool, oper_a: A, oper_b: B) -> (RA, RB)
where
    W: JoinWorker,
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // A full private stack is made room on out of line (the oldest halves promoted).
    let pos = match worker.reserve_pending() {
        Some(pos) => pos,
        None => worker.make_room_pending(),
    };
    let job_b = StackJob::new(
        |migrated| oper_b(FnContext::new(migrated)),
        JoinLatch::new_unwritten(),
    );
    // SAFETY: `job_b` stays on this frame until it was either taken back (and run
    // inline) or its latch was observed set: every path below waits for one of them,
    // including the panic path.
    let offered = unsafe { SecondHalf::offer(worker, pos, job_b.as_join_half()) };

    let result_a = match unwind::halt_unwinding(|| oper_a(FnContext::new(injected))) {
        Ok(value) => value,
        Err(payload) => unwind_after_b(worker, offered, &job_b, injected, payload),
    };

    match offered.reclaim(worker, &job_b) {
        Reclaimed::NotStolen => {
            // A panic in `oper_b` unwinds straight through: `oper_a` is done.
            // SAFETY: `NotStolen`: we took `b` back, nobody else can run it.
            let result_b = unsafe { job_b.run_inline(injected) };
            (result_a, result_b)
        }
        // SAFETY: `Finished`: `b`'s latch was observed set.
        Reclaimed::Finished => (result_a, unsafe { job_b.take_value() }),
    }
}

/// `join`'s first half panicked with `payload`: `job_b` points into the `join`'s frame, so
/// finish it before unwinding (run it here if it is still ours, else wait for it), then
/// resume the panic. `b`'s result, value or panic, is discarded quietly: `a`'s panic wins.
/// Out of line, so the `join` frame keeps only what this call needs across `a`.
#[cold]
#[inline(never)]
fn unwind_after_b<F, R>(
    worker: &impl JoinWorker,
    offered: SecondHalf,
    job_b: &StackJob<JoinLatch, F, R>,
    injected: bool,
    payload: Box<dyn std::any::Any + Send>,
) -> !
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    match offered.reclaim(worker, job_b) {
        Reclaimed::NotStolen => {
            // SAFETY: `NotStolen`: we took `b` back, nobody else can run it.
            let run_b = || unsafe { job_b.run_inline(injected) };
            unwind::drop_quietly(unwind::halt_unwinding(run_b))
        }
        // SAFETY: `Finished`: `b`'s latch was observed set; its result is taken once.
        Reclaimed::Finished => unsafe { job_b.discard_result() },
    }
    unwind::resume_unwinding(payload)
}

/// The second half of a `join` while its first half runs: its position on the private
/// stack. (Only the position: the cold path recomputes the half's identity from the job,
/// so the fast path keeps nothing else alive across the first half.)
///
/// The half waits on the worker's private stack (`pool::pending`) and is promoted to the
/// worker's deque only when another worker could take it (`docs/join.md`).
struct SecondHalf {
    pos: usize,
}

/// How the second half came back.
enum Reclaimed {
    /// Still ours and not started: the caller runs it inline.
    NotStolen,
    /// A thief (or a nested wait on this thread) ran it; its latch is set.
    Finished,
}

impl SecondHalf {
    /// Keeps `job_b` on the worker's private stack at `pos` (reserved), from where it may
    /// be promoted.
    ///
    /// # Safety
    /// `job_b` must stay alive until [`SecondHalf::reclaim`] returns.
    #[inline(always)]
    unsafe fn offer(worker_thread: &impl JoinWorker, pos: usize, job_b: JoinHalf) -> SecondHalf {
        // SAFETY: forwarded: `reclaim` pops the half back and, if it was promoted, waits
        // for its latch (or finds it on the deque) before the caller's frame goes away.
        unsafe { worker_thread.push_pending(pos, job_b) };
        SecondHalf { pos }
    }

    /// Takes the second half `job_b` back after the first half returned. Still private:
    /// the caller runs it inline. Promoted: pops the own deque until it finds `b`
    /// (running anything the first half left behind), or finds the deque empty, meaning
    /// `b` was stolen, and then waits for its latch while running other jobs.
    #[inline(always)]
    fn reclaim<F, R>(
        self,
        worker_thread: &impl JoinWorker,
        job_b: &StackJob<JoinLatch, F, R>,
    ) -> Reclaimed
    where
        F: FnOnce(bool) -> R + Send,
        R: Send,
    {
        match worker_thread.pop_pending(self.pos) {
            Popped::Private => Reclaimed::NotStolen,
            // Promoted or rescued: in both cases pop the deque as rayon-core does. A
            // rescued half is not there; the loop runs what `a` left behind, finds the
            // deque empty and waits for the latch (docs/join.md, "Order").
            Popped::Taken => {
                // SAFETY: taken: the half left the private stack, which wrote its latch
                // under the stack's lock before our pop took that lock.
                let latch = unsafe { job_b.latch.core_latch() };
                reclaim_taken(worker_thread, job_b.id(), latch)
            }
        }
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
    let reclaimed = pop_until_found(worker_thread, id, latch);
    // Back to the `join`'s code: deliver what the jobs run here deferred.
    worker_thread.flush_count_downs();
    reclaimed
}

fn pop_until_found(
    worker_thread: &impl JoinWorker,
    id: (*const (), usize),
    latch: &CoreLatch,
) -> Reclaimed {
    while !latch.probe() {
        // `pop_local`, not `take_local_job`: popping our own `b` back is not a job
        // execution and is not counted as a local pop (metrics).
        match worker_thread.pop_local() {
            Some(job) if job.id() == id => return Reclaimed::NotStolen,
            Some(job) => worker_thread.execute_local(job),
            None => {
                worker_thread.wait_until(latch);
                break;
            }
        }
    }
    Reclaimed::Finished
}
