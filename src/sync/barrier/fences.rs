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

/// The light barrier in the form a thread may keep for good (see the asymmetric
/// variants'): here always the full fence, so every thread has it from the start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FixedLight(());

impl FixedLight {
    /// Always there: the full fence needs no mode.
    #[inline]
    pub(crate) fn get() -> Option<FixedLight> {
        Some(FixedLight(()))
    }
}

impl super::Light for FixedLight {
    /// The heavy barrier is a fence too, and the poll's push has none: a searcher's look
    /// is not exact against it (its sleepers recheck instead).
    const EXACT_FOR_POLL: bool = false;
    /// A full fence.
    const IS_INSTRUCTION: bool = true;
    /// A full fence.
    #[inline(always)]
    fn light(self) {
        fence(Ordering::SeqCst);
    }
}
