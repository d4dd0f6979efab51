//! `join` on a worker inside an isolation region (`docs/isolation.md`): `b` is handed
//! out on the region's queue before `a` runs (`WorkerThread::hand_out`), not kept private;
//! after `a`, the `join` takes `b` back if nobody took it, else waits for it with the
//! isolated wait (the worker's `wait_until` inside a region). The end is the lazy
//! `join`'s ([`finish_b`], [`finish_b_and_resume`]).
//!
//! In a pool that isolates every job's waits (`ThreadPoolBuilder::isolate_waits`), each
//! half is a job of its own: `b` is handed out in a new region nested in the current
//! one, `a` runs in another, and `b`, run here or waited for, is in `b`'s region. A wait
//! inside `a` (a section that holds a lock across parallel work, in the leaf of a
//! parallel loop) then never runs `b` or the other halves of the enclosing loop, which
//! would take the same lock on the same thread; they are not of its region.

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
    // latch was observed set: the `match` on `take_back` below does one of them, after
    // `a` returned or panicked. It is handed out once, here, and runs at most once:
    // whoever takes it from the region's queue.
    let job_ref = unsafe { job_b.as_join_half().hand_out(worker.latch_owner()) };
    let id = job_b.id();
    let halves_isolated = worker.isolate_waits();
    let b_region = if halves_isolated {
        Region::new(worker.sleep().clone(), Some(region.clone()))
    } else {
        region.clone()
    };
    worker.hand_out(&b_region, job_ref);
    let run_a = || oper_a(FnContext::new(injected));
    let result_a = unwind::halt_unwinding(|| {
        if halves_isolated {
            worker.isolate(run_a)
        } else {
            run_a()
        }
    });
    // The rest of the `join` is `b`'s: run inline or waited for, in `b`'s region (the
    // current one unless the halves are isolated), so that a wait inside it, or the wait
    // for it, runs only the jobs of that region.
    let _in_b = worker.enter_unless_in(&b_region);
    let reclaimed = match b_region.take_back(id) {
        Some(_own) => {
            worker.drop_own_stub(&b_region);
            Reclaimed::NotStolen
        }
        None => {
            // SAFETY: the latch was written by `hand_out` above.
            worker.wait_until(unsafe { job_b.latch.core_latch() });
            Reclaimed::Finished
        }
    };
    match result_a {
        Ok(value) => finish_b(value, reclaimed, &job_b, injected),
        Err(payload) => finish_b_and_resume(reclaimed, &job_b, injected, payload),
    }
}
