//! The isolated park: how a worker waiting inside an isolation region parks
//! (`docs/isolation.md`, "Waking a region's waiters"). It is not a searcher, so the sleep
//! counters never see it; its latch's setter and pushes to its region wake it.

use super::{Blocked, CoreLatch, ParkObserver, Sleep};
use std::time::Instant;

impl Sleep {
    /// Parks worker `index` in an isolated wait (`docs/isolation.md`) until `latch` is set
    /// or its region has a job for it. `register` registers the worker with its region
    /// unless a job is queued there (returns whether it registered; a push to the region
    /// then wakes it, [`wake_waiter`](Self::wake_waiter)); `unregister` undoes it after the
    /// wake-up. The worker is not counted in the sleep counters: a searcher's wake-up
    /// passes it by, since it may take none of the pool's other work.
    ///
    /// No wake-up is lost: the latch's setter finds `SLEEPING` (set under the parking
    /// mutex together with `Blocked::Isolated`) and wakes it, as for a parked searcher;
    /// a push to the region and `register` take the region's mutex, so either the push
    /// finds the worker registered, or `register` finds the job.
    #[cold]
    pub(crate) fn park_isolated(
        &self,
        index: usize,
        latch: &CoreLatch,
        observer: &impl ParkObserver,
        register: impl FnOnce() -> bool,
        unregister: impl FnOnce(),
    ) {
        if !latch.get_sleepy() {
            return;
        }
        let sleep_state = &self.worker_sleep_states[index];
        let mut is_blocked = sleep_state.is_blocked.lock();
        debug_assert_eq!(*is_blocked, Blocked::No);
        if !latch.fall_asleep() {
            return;
        }
        *is_blocked = Blocked::Isolated;
        drop(is_blocked);
        let registered = register();
        let mut is_blocked = sleep_state.is_blocked.lock();
        if !registered {
            *is_blocked = Blocked::No;
        }
        let park_now = *is_blocked != Blocked::No;
        drop(is_blocked);
        if park_now {
            let parked_at = Instant::now();
            observer.parked(crate::metrics::now_ns());
            let mut is_blocked = sleep_state.is_blocked.lock();
            while *is_blocked != Blocked::No {
                is_blocked = sleep_state.condvar.wait(is_blocked);
            }
            drop(is_blocked);
            observer.unparked(parked_at.elapsed().as_nanos() as u64);
        }
        if registered {
            unregister();
        }
        latch.wake_up();
    }
}
