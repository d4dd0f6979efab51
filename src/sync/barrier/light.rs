//! The pushers' side of the asymmetric variants (Linux's membarrier, Windows' flush):
//! [`light`], and [`OwnLight`], one thread's light barrier, which remembers that pushers
//! may use the compiler fence alone.

use super::imp::expedited;
use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};

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

/// [`light`] for the one thread that owns this value (a worker's `join`
/// path), which remembers that it saw the asymmetric mode published (`expedited()`): from
/// then on its barrier is the compiler fence alone, with no load of the mode. One byte the
/// owner reads, on a line it writes anyway, instead of a load of the shared mode, a
/// compare and a branch. Sound because a published mode stays published, or leaves it
/// only for one whose sleepers recheck (Linux's `FAILED`, see `expedited` there).
#[derive(Debug)]
pub(crate) struct OwnLight {
    /// Whether this owner saw the mode published. Written and read only by the owner
    /// (Relaxed: an atomic only so that the owner's struct may be shared).
    expedited: AtomicBool,
}

impl OwnLight {
    /// One thread's light barrier, which has not seen the mode published yet.
    pub(crate) const fn new() -> Self {
        OwnLight {
            expedited: AtomicBool::new(false),
        }
    }

    /// The pusher's side of the barrier pair, as [`light`].
    #[inline(always)]
    pub(crate) fn light(&self) {
        if self.expedited.load(Ordering::Relaxed) {
            compiler_fence(Ordering::SeqCst);
        } else {
            self.light_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn light_cold(&self) {
        if expedited() {
            self.expedited.store(true, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }
}
