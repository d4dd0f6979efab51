//! The fence pair: both halves a `SeqCst` fence (every target without an asymmetric
//! barrier, `--cfg stealpool_fences`, and loom).

use super::Park;
#[cfg(loom)]
use loom::sync::atomic::fence;
#[cfg(not(loom))]
use std::sync::atomic::fence;
use std::sync::atomic::Ordering;

/// Nothing to set up.
pub(crate) fn init() {}

/// Nothing to start.
pub(crate) fn prepare() {}

/// Always the fence pair.
pub(crate) fn mode_name() -> &'static str {
    "fences"
}

/// A full fence.
#[inline]
pub(crate) fn light() {
    fence(Ordering::SeqCst);
}

/// A full fence: exact against fenced pushers only.
pub(crate) fn heavy() -> Park {
    fence(Ordering::SeqCst);
    Park::FenceOnly
}

/// One thread's [`light`] (see the membarrier variant's): here always the full fence.
#[derive(Debug)]
pub(crate) struct OwnLight;

impl OwnLight {
    /// One thread's light barrier.
    pub(crate) const fn new() -> Self {
        OwnLight
    }

    /// A full fence.
    #[inline(always)]
    pub(crate) fn light(&self) {
        fence(Ordering::SeqCst);
    }
}
