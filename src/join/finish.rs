//! The end of a `join`, once its second half came back ([`Reclaimed`]).

use crate::job::StackJob;
use crate::latch::JoinLatch;
use crate::unwind;

/// How the second half came back.
pub(super) enum Reclaimed {
    /// Still ours and not started: the caller runs it inline.
    NotStolen,
    /// A thief (or a nested wait on this thread) ran it; its latch is set.
    Finished,
}

/// The end of a `join` whose `a` returned `result_a`, once `b` came back as `reclaimed`:
/// runs `b` here if it is still ours, else takes the value its runner left.
#[inline(always)]
pub(super) fn finish_b<RA, F, RB>(
    result_a: RA,
    reclaimed: Reclaimed,
    job_b: &StackJob<JoinLatch, F, RB>,
    injected: bool,
) -> (RA, RB)
where
    F: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    match reclaimed {
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

/// The end of a `join` whose `a` panicked with `payload`, once `b` came back as
/// `reclaimed`: runs `b` here if it is still ours, else drops the result its runner left,
/// quietly either way (`a`'s panic wins), then resumes the panic.
pub(super) fn finish_b_and_resume<F, R>(
    reclaimed: Reclaimed,
    job_b: &StackJob<JoinLatch, F, R>,
    injected: bool,
    payload: Box<dyn std::any::Any + Send>,
) -> !
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    match reclaimed {
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
