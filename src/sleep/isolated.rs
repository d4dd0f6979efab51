//! The isolated park: how a worker waiting inside an isolation region parks
//! (`docs/isolation.md`, "Waking a region's waiters"). It is not a searcher, but it is
//! counted as a parked one, so that a lazy `join` in its region promotes for it; its
//! latch's setter and pushes to its region wake it.

use super::spot::Blocked;
use super::{CoreLatch, ParkObserver, Sleep};
use crate::sync::barrier;
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
    /// wake-up. `look` is the last look, after the heavy barrier: whether a worker of the
    /// region holds a private `join` half the waiter could rescue. `more_work` is the
    /// pool's look for work left ([`work_found`](Self::work_found)).
    ///
    /// The worker counts as inactive and sleeping while parked, as a parked searcher does,
    /// but a searcher's wake-up passes it by, since it may take none of the pool's other
    /// work. No wake-up is lost:
    /// * its latch's setter finds `SLEEPING` (set under the parking mutex together with
    ///   `Blocked::Isolated`) and wakes it, as for a parked searcher;
    /// * a push to the region and `register` take the region's mutex, so either the push
    ///   finds the worker registered, or `register` finds the job;
    /// * a `join` in the region that keeps its second half private polls the counters
    ///   after its push: the pair is a parked searcher's (`docs/join.md`, "The poll without
    ///   a fence"), the counters' read-modify-write and the heavy barrier here, then
    ///   `look`; either the poll sees this worker and promotes the half to the region's
    ///   queue (which wakes it), or `look` sees the half. A fence-only barrier rechecks as
    ///   a searcher does.
    ///
    /// It leaves the inactive count through `work_found`, as a searcher that found work:
    /// between its waker's decrement and its own it looks like an awake searcher, so a
    /// pusher may have counted on it.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn park_isolated(
        &self,
        index: usize,
        latch: &CoreLatch,
        observer: &impl ParkObserver,
        register: impl FnOnce() -> bool,
        look: impl Fn() -> bool,
        unregister: impl FnOnce(),
        more_work: impl Fn() -> bool,
    ) {
        barrier::prepare();
        let sleep_state = &self.worker_sleep_states[index];
        let Some(mut is_blocked) = sleep_state.fall_asleep(latch) else {
            return;
        };
        // Counted and blocked in one critical section, as a searcher registers: a waker
        // that holds the mutex and finds `Isolated` may decrement `sleeping` for us.
        let counters = self.counters.add_isolated_sleeper();
        let all_inactive = counters.inactive_threads() == self.worker_sleep_states.len();
        *is_blocked = Blocked::Isolated;
        drop(is_blocked);
        let registered = register();
        let park = barrier::heavy();
        let found = !registered || look();
        self.block_counted(sleep_state, observer, park, all_inactive, found, &look);
        if registered {
            unregister();
        }
        self.leave_inactive(more_work);
        latch.wake_up();
    }
}
