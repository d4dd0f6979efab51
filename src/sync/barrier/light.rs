//! The pushers' side of the asymmetric variants (Linux's membarrier, Windows' flush):
//! [`light`], and [`FixedLight`], the proof that a thread saw the mode in which pushers may
//! use the compiler fence alone.

use super::imp::{expedited, published};
use std::sync::atomic::{compiler_fence, fence, Ordering};

/// The pusher's side: a compiler fence once the variant says pushers may use it alone
/// (`expedited()`: the membarrier registration published, or the flush decided), else a
/// full fence.
#[inline]
pub(crate) fn light() {
    if expedited() {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The light barrier in the form a thread may keep for good: proof that this thread saw
/// the asymmetric mode published (`expedited()`), so that its light barrier is the
/// compiler fence alone, with no load of the mode, from then on. Sound because a
/// published mode stays published, or leaves it only for one whose sleepers recheck
/// (Linux's `FAILED`, see `expedited` there). The `join` fast path holds one
/// (`pool::worker::PrivateStackRef`): where it has none, it takes the checked path, so the
/// fast path tests no mode at all.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FixedLight(());

impl FixedLight {
    /// The proof, if the mode is published now.
    #[inline]
    pub(crate) fn get() -> Option<FixedLight> {
        expedited().then_some(FixedLight(()))
    }
}

impl super::Light for FixedLight {
    /// Published: every heavy barrier from then on is the asymmetric one (exact), or,
    /// once it failed, makes its sleeper recheck and its leaving searcher wake one
    /// (`Park::Recheck`).
    const EXACT_FOR_POLL: bool = true;
    /// The compiler fence alone.
    const IS_INSTRUCTION: bool = false;
    /// The compiler fence alone.
    #[inline(always)]
    fn light(self) {
        debug_assert!(
            published(),
            "a fixed light barrier before the asymmetric barrier was published"
        );
        compiler_fence(Ordering::SeqCst);
    }
}
