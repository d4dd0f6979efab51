//! `join` on a worker inside an isolation region (`docs/isolation.md`): `b` is handed
//! out on the region's queue before `a` runs (`WorkerThread::hand_out`), not kept private;
//! after `a`, the `join` takes `b` back if nobody took it, else waits for it with the
//! isolated wait (the worker's `wait_until` inside a region). The end is the lazy
//! `join`'s ([`finish_b`], [`finish_b_and_resume`]).

use super::finish::{finish_b, finish_b_and_resume, Reclaimed};
use crate::job::StackJob;
use crate::latch::JoinLatch;
use crate::pool::region::Region;
use crate::pool::worker::WorkerThread;
use crate::sync::unchecked::Arc;
use crate::unwind;
use crate::FnContext;

/// [`join_context`](super::join_context) on `worker`, whose current region is `region`.
pub(super) fn join_in_region<A, B, RA, RB>(
    worker: &WorkerThread,
    region: &Arc<Region>,
    injected: bool,
    oper_a: A,
    oper_b: B,
) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(
        |migrated| oper_b(FnContext::new(migrated)),
        JoinLatch::new_unwritten(),
    );
    // SAFETY: `job_b` stays on this frame until it was taken back (and run inline) or its
    // latch was observed set: `reclaim` below does one of them, on the panic path too.
    // It is handed out once, here, and runs at most once: whoever takes it from the
    // region's queue.
    let job_ref = unsafe { job_b.as_join_half().hand_out(worker.latch_owner()) };
    let id = job_b.id();
    worker.hand_out(region, job_ref);
    let reclaim = || match region.take_back(id) {
        Some(_own) => {
            worker.drop_own_stub(region);
            Reclaimed::NotStolen
        }
        None => {
            // SAFETY: the latch was written by `hand_out` above.
            worker.wait_until(unsafe { job_b.latch.core_latch() });
            Reclaimed::Finished
        }
    };
    let result_a = match unwind::halt_unwinding(|| oper_a(FnContext::new(injected))) {
        Ok(value) => value,
        Err(payload) => finish_b_and_resume(reclaim(), &job_b, injected, payload),
    };
    finish_b(result_a, reclaim(), &job_b, injected)
}
