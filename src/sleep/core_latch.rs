//! [`CoreLatch`]: the four-state latch a worker may park on, the part of a latch that
//! takes part in the sleep protocol (`docs/sleep.md`).

use crate::sync::checked::AtomicUsize;
use crate::sync::Ordering;

/// Not set, and the owner is not on its way to park.
const UNSET: usize = 0;
/// Not set; the owner announced that it is about to park (`get_sleepy`).
const SLEEPY: usize = 1;
/// Not set; the owner committed to parking (`fall_asleep`): a setter must wake it.
const SLEEPING: usize = 2;
/// Set: final until the owner's `reset`.
const SET: usize = 3;

/// The four-state core of every latch a worker may sleep on.
///
/// `UNSET -> SLEEPY -> SLEEPING` is driven by the owner on its way to park (see
/// `docs/sleep.md`); `SET` is written by the setter with a swap that reports whether the
/// owner had reached `SLEEPING` and therefore needs a targeted wake-up.
#[derive(Debug)]
pub(crate) struct CoreLatch {
    /// One of `UNSET`, `SLEEPY`, `SLEEPING` and `SET`.
    state: AtomicUsize,
}

impl CoreLatch {
    /// A latch in state `UNSET`.
    #[inline]
    pub(crate) fn new() -> Self {
        CoreLatch {
            state: AtomicUsize::new(UNSET),
        }
    }

    /// Owner: announce the intent to sleep. Returns `false` if the latch was set meanwhile.
    #[inline]
    pub(crate) fn get_sleepy(&self) -> bool {
        self.state
            .compare_exchange(UNSET, SLEEPY, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Owner, holding its sleep mutex: commit to sleeping. Returns `false` if the latch
    /// was set meanwhile.
    #[inline]
    pub(crate) fn fall_asleep(&self) -> bool {
        self.state
            .compare_exchange(SLEEPY, SLEEPING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Owner, after waking: go back to `UNSET` unless the latch was set meanwhile.
    #[inline]
    pub(crate) fn wake_up(&self) {
        if !self.probe() {
            let _ =
                self.state
                    .compare_exchange(SLEEPING, UNSET, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// Sets the latch. Returns `true` if the owner was `SLEEPING`, in which case it must
    /// be woken: only `Sleep::set_latch_and_wake` calls this, and does both.
    ///
    /// # Safety
    /// `this` must point to a live latch; it may be freed right after the swap.
    #[inline]
    pub(crate) unsafe fn set(this: *const Self) -> bool {
        // SeqCst (not just Release): the swap takes part in the same total order as the
        // sleep counters and the owner's `fall_asleep`, which the no-lost-wakeup argument
        // in docs/sleep.md relies on (rayon-core moved to SeqCst here for the same reason).
        // SAFETY: `this` is live per the contract.
        let old = unsafe { (*this).state.swap(SET, Ordering::SeqCst) };
        old == SLEEPING
    }

    /// Back to unset, for a latch its owner waits on more than once (`block_on`: set by
    /// each wake-up, reset before each poll). Only the owner calls it, after it saw the
    /// latch set and outside any wait on it.
    ///
    /// A swap, not a store: a read-modify-write reads the last value in the latch's
    /// modification order, so a setter that came before the reset is *read* by it, and
    /// the Acquire half makes everything that setter published before waking visible to
    /// the poll that follows. A plain store (even SeqCst) overwrites such a set without
    /// synchronising with it: the poll may miss the future's new state while the wake-up
    /// is gone, and the owner sleeps forever. loom finds that
    /// (`tests/loom_sleep.rs: a_reset_latch_never_loses_a_wake_up_between_polls`).
    #[inline]
    pub(crate) fn reset(&self) {
        self.state.swap(UNSET, Ordering::SeqCst);
    }

    /// Whether the latch is set.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        // Acquire pairs with the swap in `set`, so the job's result written before the
        // latch was set is visible to the waiter that observes `SET`.
        self.state.load(Ordering::Acquire) == SET
    }
}
