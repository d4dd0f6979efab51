//! Asymmetric memory barriers: a cheap one for the hot path, an expensive one for the
//! rare path, that together order like a pair of SeqCst fences.
//!
//! The sleep protocol needs a store-load (Dekker) pairing between every push and every
//! worker about to park (`docs/sleep.md`). Pushes are the `join` fast path and parking is
//! rare, so the pusher's side is [`light`](fn@light) and the sleeper's side is [`heavy`](fn@heavy):
//!
//! * on Linux (`membarrier.rs`), once the process is registered for `membarrier(2)`
//!   `MEMBARRIER_CMD_PRIVATE_EXPEDITED`, `light` is a compiler fence only and `heavy`
//!   makes every running thread of the process execute a full memory barrier (the
//!   kernel's IPIs) before it returns. Whatever point in the pusher's program that barrier
//!   lands on, the pusher's store before it is visible to the sleeper afterwards, and the
//!   pusher's loads after it see the sleeper's earlier stores; before the registration,
//!   and after a failure, both are `fence(SeqCst)`;
//! * on Windows (`flush.rs`), `light` is a compiler fence and `heavy` is
//!   `FlushProcessWriteBuffers`, which gives the same guarantee and needs no registration
//!   (under wine, whose flush does nothing, the fence pair);
//! * everywhere else (`fences.rs`: macOS, the BSDs, ...), both are `fence(SeqCst)`. macOS
//!   has no documented process-wide barrier: the `mprotect` trick some runtimes use is an
//!   implementation detail of the TLB shootdown (`docs/sleep.md`, "Each platform's
//!   barrier").
//!
//! This is the scheme of folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier` and of
//! liburcu's membarrier flavour.
//!
//! **Start-up (Linux).** Building a pool ([`init`]) registers. In a process whose only
//! thread is the builder, the kernel registers without waiting (microseconds), so it is
//! done right there, before any worker exists, and every worker has the compiler fence
//! from its first `join`. A process that already runs other threads would wait for an RCU
//! grace period (milliseconds), so the build starts a short-lived thread to register
//! ([`prepare`]) while everyone keeps using the fence pair (a bare pthread, so that a
//! `fork()` landing on its start or exit cannot leave one of std's locks held in the
//! child). `docs/sleep.md` ("Switching barrier modes") gives the argument that the switch,
//! and the fall-back below, lose no wake-up.
//!
//! **Failure (Linux).** If a sleeper's membarrier fails (ENOMEM, or a seccomp filter installed
//! after registration), the process falls back to the fence pair for good. Pushers that
//! read the old mode just before the switch may still use a compiler fence once, so
//! [`heavy`](fn@heavy) then answers [`Park::Recheck`]: the sleeper parks with a timeout and looks
//! at the queues once more before it parks for good. It never spins.
//!
//! Building with `RUSTFLAGS="--cfg stealpool_fences"` forces the fence pair on Linux and
//! Windows too (for measuring what the asymmetric barrier buys, and for model checkers
//! that cannot see one).

use std::time::Duration;

/// What [`heavy`](fn@heavy) ordered, and so how a worker that passed it and found no work may park.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Park {
    /// A process-wide barrier (a membarrier, or `FlushProcessWriteBuffers`): exact
    /// against every other thread's stores, whatever barrier, if any, that thread ran.
    /// Park until woken. (Only the Linux and Windows variants make one.)
    #[cfg_attr(
        not(all(any(target_os = "linux", windows), not(stealpool_fences), not(loom))),
        allow(dead_code)
    )]
    Untimed,
    /// A fence of our own only: exact against the threads that ran [`light`](fn@light) (every
    /// push to a queue, every pop of a private `join` half), but not against the lazy
    /// `join`'s poll, which runs no fence ([`poll_fence`]): a sleeper that may miss such
    /// a poll's private push rechecks as for [`Recheck`](Park::Recheck).
    FenceOnly,
    /// For at most [`RECHECK_AFTER`], then one more look at the queues, then until
    /// woken: a pusher may have used a compiler fence against a fence-only sleeper.
    Recheck,
}

impl Park {
    /// Whether the pair is exact against a pusher that ran [`light`](fn@light).
    #[inline]
    pub(crate) fn exact_for_light(self) -> bool {
        self != Park::Recheck
    }
}

/// The lazy `join`'s poll barrier, between the private push and the load of the sleep
/// counters: a compiler fence, never a fence instruction, in every mode. A sleeper whose
/// own barrier was a membarrier is exact against it anyway; one that only fenced
/// ([`Park::FenceOnly`]) while another worker was running, which might be such a pusher,
/// looks again after [`RECHECK_AFTER`] (`docs/join.md`, "The poll without a fence").
#[inline(always)]
pub(crate) fn poll_fence() {
    // loom models no compiler reordering: std's fence is what it sees either way.
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// A pusher's side of the pair, as a value the `join` frame is generic over: the owner's
/// pop runs [`CheckedLight`] (the mode tested each time) or [`FixedLight`] (the mode
/// settled for this thread), so that the fast path carries no test of the mode.
pub(crate) trait Light: Copy {
    /// Whether every other thread's [`heavy`](fn@heavy) barrier is exact against this
    /// thread's compiler-fenced private push (the poll's, [`poll_fence`]): true once the
    /// asymmetric pair was published before this light was taken. Then the `join` poll may
    /// leave a half to an idle worker that is awake even while others are parked
    /// (`PrivateStack::poll`, `docs/join.md`, "Skipped polls").
    const EXACT_FOR_POLL: bool;
    /// Whether [`light`](Light::light) may execute a fence instruction; false when it is
    /// a compiler fence only. A pop that needs no barrier (no other worker to pair with)
    /// skips it only when it is an instruction, so the asymmetric builds' code stays as it is.
    const IS_INSTRUCTION: bool;
    /// The pusher's barrier, between its store and its load.
    fn light(self);
}

/// [`light`](fn@light), testing the mode each time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckedLight;

impl Light for CheckedLight {
    /// The mode is not known ahead: not counted on.
    const EXACT_FOR_POLL: bool = false;
    /// A fence until the asymmetric barrier is published.
    const IS_INSTRUCTION: bool = true;
    #[inline(always)]
    fn light(self) {
        light();
    }
}

/// How long a [`Park::Recheck`] sleeper waits before its second look. A pusher's
/// unfenced store and load are reordered only within its CPU's store buffer, which drains
/// in nanoseconds to microseconds; a millisecond is far beyond that window.
pub(crate) const RECHECK_AFTER: Duration = Duration::from_millis(1);

#[cfg(all(target_os = "linux", not(stealpool_fences), not(loom)))]
#[path = "membarrier.rs"]
mod imp;
#[cfg(all(windows, not(stealpool_fences), not(loom)))]
#[path = "flush.rs"]
mod imp;
#[cfg(all(any(target_os = "linux", windows), not(stealpool_fences), not(loom)))]
mod light;
#[cfg(all(any(target_os = "linux", windows), not(stealpool_fences), not(loom)))]
pub(crate) use self::{
    imp::{heavy, init, mode_name, prepare},
    light::{light, FixedLight},
};

#[cfg(not(all(any(target_os = "linux", windows), not(stealpool_fences), not(loom))))]
mod fences;
#[cfg(not(all(any(target_os = "linux", windows), not(stealpool_fences), not(loom))))]
pub(crate) use self::fences::{heavy, init, light, mode_name, prepare, FixedLight};

/// The process's barrier mode, for tests (`stealpool::__barrier_mode`): `"fences"`
/// until the membarrier registration is published, `"expedited"` after, `"failed"` once a
/// membarrier was refused after that. Not an API.
#[doc(hidden)]
pub fn current_mode() -> &'static str {
    mode_name()
}
