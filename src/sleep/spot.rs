//! One worker's parking spot: where a parked searcher (`mod.rs`, `sleep`) and an isolated
//! waiter (`isolated.rs`) block, and how a waker finds which of the two it is (`wake.rs`).

use super::{CoreLatch, ParkObserver};
use crate::sync::checked::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// One worker's parking spot. Cache-padded so that waking one worker does not disturb
/// another's line.
#[derive(Default)]
pub(super) struct WorkerSleepState {
    /// [`Blocked::Counted`] with the worker's registration as a sleeper (step 3 of
    /// `sleep`), before its last look; back to [`Blocked::No`] by a waker (which also
    /// decrements `sleeping`), or by the worker itself when its last look or its recheck
    /// finds work. [`Blocked::Isolated`] while the worker parks in an isolated wait
    /// ([`Sleep::park_isolated`](super::Sleep::park_isolated)).
    pub(super) is_blocked: Mutex<Blocked>,
    /// Where the worker parks, with `is_blocked`'s mutex; a waker notifies it.
    pub(super) condvar: Condvar,
}

/// Whether, and how, a worker is parked on its [`WorkerSleepState`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Blocked {
    /// Not parked, or woken.
    #[default]
    No,
    /// Parked as a searcher that found nothing: counted in the `sleeping` counter, woken
    /// by new work or by its latch's setter (who decrements the counter).
    Counted,
    /// Parked in an isolated wait (`docs/isolation.md`): counted in the `sleeping` counter
    /// too (a lazy `join`'s poll must see it), but woken only by its latch's setter or by
    /// a push to its region (who decrement the counter), never by a searcher's wake-up.
    Isolated,
}

impl WorkerSleepState {
    /// Steps 1 and 2 of parking this spot's worker on `latch`: UNSET -> SLEEPY, then,
    /// with the spot's mutex held, SLEEPY -> SLEEPING. A latch setter that sees
    /// SLEEPING must take this same mutex to wake the worker, so it finds the `is_blocked`
    /// the caller sets before releasing the returned guard, and clears it. `None` if the
    /// latch was set meanwhile.
    pub(super) fn fall_asleep(&self, latch: &CoreLatch) -> Option<MutexGuard<'_, Blocked>> {
        if !latch.get_sleepy() {
            return None;
        }
        let is_blocked = self.is_blocked.lock();
        debug_assert_eq!(*is_blocked, Blocked::No);
        latch.fall_asleep().then_some(is_blocked)
    }
}

/// Step 5's wait: tells `observer` the worker parks, blocks on `sleep_state` until a waker
/// clears `is_blocked` (after `first`, which runs under the mutex: the recheck), then
/// tells `observer` how long it was parked. The observer runs user code (a `tracing`
/// subscriber), which may push a job and so wake a sleeper, this worker included: it runs
/// outside the mutex, which that wake-up takes; a waker that comes meanwhile clears
/// `is_blocked`.
pub(super) fn block_until_woken<'a>(
    sleep_state: &'a WorkerSleepState,
    observer: &impl ParkObserver,
    first: impl FnOnce(MutexGuard<'a, Blocked>) -> MutexGuard<'a, Blocked>,
) {
    let parked_at = Instant::now();
    observer.parked(crate::metrics::now_ns());
    let mut is_blocked = first(sleep_state.is_blocked.lock());
    while *is_blocked != Blocked::No {
        is_blocked = sleep_state.condvar.wait(is_blocked);
    }
    drop(is_blocked);
    observer.unparked(parked_at.elapsed().as_nanos() as u64);
}
