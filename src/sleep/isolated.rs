//! The isolated park: how a worker waiting inside an isolation region parks
//! (`docs/isolation.md`, "Waking a region's waiters"). It is not a searcher, so the sleep
//! counters never see it; its latch's setter and pushes to its region wake it.

use super::spot::{block_until_woken, Blocked};
use super::{CoreLatch, ParkObserver, Sleep};
use crate::sync::Ordering;

impl Sleep {
    /// A waiter of this pool registers with a region as parked (`Region::register_parked`),
    /// before it takes the region's mutex to register and looks at the region's queues.
    pub(crate) fn isolated_waiter_registers(&self) {
        self.isolated_parked.fetch_add(1, Ordering::SeqCst);
    }

    /// A registered waiter of this pool is no longer registered.
    pub(crate) fn isolated_waiter_unregistered(&self) {
        self.isolated_parked.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether a waiter of this pool may be registered as parked with some region: read
    /// by a push to a region after its critical section, to skip waking the enclosing
    /// regions when it is `false`. The region's mutex orders the two sides: a waiter that
    /// registered with an enclosing region increments first and then looks at every nested
    /// region under its mutex; if its look of the pushed region came before the push's
    /// critical section, the increment happened before the push and this load sees it;
    /// if after, the look finds the job (or the region was made after the look of its
    /// parent, whose mutex orders the same way).
    pub(crate) fn has_isolated_parked(&self) -> bool {
        self.isolated_parked.load(Ordering::SeqCst) != 0
    }

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
        let sleep_state = &self.worker_sleep_states[index];
        let Some(mut is_blocked) = sleep_state.fall_asleep(latch) else {
            return;
        };
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
            block_until_woken(sleep_state, observer, |is_blocked| is_blocked);
        }
        if registered {
            unregister();
        }
        latch.wake_up();
    }
}
