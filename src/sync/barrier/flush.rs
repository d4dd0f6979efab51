//! Windows: `FlushProcessWriteBuffers` as the heavy half. It needs no registration and
//! cannot fail, so the mode is decided once, when the first pool is built, before any
//! worker exists: the flush, or the fence pair under wine, whose
//! `FlushProcessWriteBuffers` is a stub that does nothing (wine 8.0: `fixme:virtual:
//! NtFlushProcessWriteBuffers stub`).
//!
//! `FlushProcessWriteBuffers` makes every processor that runs a thread of the process
//! flush its write queue (an inter-processor interrupt, as `membarrier(2)`'s expedited
//! command sends on Linux); a thread that is not running went through a context switch,
//! which orders its memory operations anyway. So whatever point in a pusher's program the
//! flush lands on, the pusher's stores before it are visible to the sleeper after the
//! call returns, and its loads after it see the sleeper's earlier stores: the guarantee
//! `docs/sleep.md` ("The barrier pair") needs. folly's `asymmetricHeavyBarrier` is this
//! call on Windows, and the .NET runtime relies on it the same way.
//!
//! **Why deciding once is exact.** Only workers park, and every worker starts after the
//! `init` of its pool, so every sleeper reads the final mode. A pusher that reads the
//! mode before the first `init` (an outside thread) sees `UNDECIDED` and fences, which
//! pairs with either kind of sleeper.

use super::Park;
use std::sync::atomic::{fence, AtomicU8, Ordering};
use windows_sys::Win32::System::Threading::FlushProcessWriteBuffers;

/// No pool built yet: the fence pair.
const UNDECIDED: u8 = 0;
/// Pushers use a compiler fence, sleepers the flush.
const FLUSH: u8 = 1;
/// Under wine: the fence pair for good.
const FENCES: u8 = 2;

/// The process's barrier mode: one of the constants above, decided by the first `init`.
static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Decides the mode, once per process, when a pool is built (before its workers exist).
pub(crate) fn init() {
    if MODE.load(Ordering::Acquire) == UNDECIDED {
        let mode = if under_wine() { FENCES } else { FLUSH };
        // Release: a pusher that reads FLUSH (Acquire) is ordered after this decision;
        // racing builds decide the same.
        MODE.store(mode, Ordering::Release);
    }
}

/// Whether this process runs under wine: its ntdll exports `wine_get_version`.
fn under_wine() -> bool {
    crate::sync::ntdll::export(c"wine_get_version").is_some()
}

/// Nothing to start: the flush needs no registration.
pub(crate) fn prepare() {}

/// `"expedited"` once pushers use the compiler fence alone, else `"fences"`.
pub(crate) fn mode_name() -> &'static str {
    if expedited() {
        "expedited"
    } else {
        "fences"
    }
}

/// Whether pushers may use the compiler fence alone, for
/// [`FixedLight`](super::FixedLight): `FLUSH` is final.
#[inline]
pub(crate) fn expedited() -> bool {
    // Acquire: pairs with `init`'s Release store.
    MODE.load(Ordering::Acquire) == FLUSH
}

/// Whether the `FLUSH` mode was published (it is final): the condition under which a
/// [`FixedLight`](super::FixedLight) may exist (checked in debug builds).
pub(crate) fn published() -> bool {
    expedited()
}

/// The sleeper's side: a full fence of our own, then, in the `FLUSH` mode, a flush of
/// every processor that runs a thread of this process, exact against every other
/// thread's stores.
pub(crate) fn heavy() -> Park {
    fence(Ordering::SeqCst);
    if MODE.load(Ordering::SeqCst) == FLUSH {
        // SAFETY: FlushProcessWriteBuffers takes no argument, touches no memory of ours
        // and has no failure mode (Windows Vista and later; Rust needs Windows 7 or 10).
        unsafe { FlushProcessWriteBuffers() };
        Park::Untimed
    } else {
        Park::FenceOnly
    }
}
