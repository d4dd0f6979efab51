//! Every synchronisation primitive the scheduler itself owns, imported through one place.
//!
//! The scheduler's protocols (sleep/wake, latches, termination) are written against the
//! names re-exported here, never against `std::sync` directly. Building the crate with
//! `--cfg loom` swaps in [loom](https://docs.rs/loom)'s model-checked types for the
//! protocols' primitives without touching the logic, the way tokio and crossbeam test
//! their own protocols.
//!
//! **Fork safety.** Every primitive here keeps its whole state inside the object: std's
//! `Mutex` and `Condvar` are futex words, the barrier state is one atomic byte. A process
//! that calls `fork()` while other threads hold or wait on some of them gives its child
//! copies of *those* objects only (in the parent's pools, which the child must not use);
//! a pool the child builds shares no lock with anything a parent thread may have held.
//! parking_lot is not used for that reason: it keeps one process-wide table of wait
//! queues with a lock per bucket, a bucket locked by a parent thread at the moment of
//! `fork()` stays locked in the child forever, and the child's first park or unpark that
//! hashes to it hangs (`tests/fork.rs` catches that in about one child in 2,000); see
//! `lock.rs`.
//!
//! The deques come from crossbeam-deque through `deque`, which under `--cfg loom` swaps
//! in a model with the same API; `CachePadded` (crossbeam-utils) is used directly.

//! Two tiers, named for what the models do with them:
//!
//! * [`checked`]: the primitives of the protocols the loom models explore (the sleep
//!   counters, the parking mutex and condvar, the latches' states, the private stack's
//!   indices and lock, termination, join handles) and the cells jobs hand from thread to
//!   thread. Built with `RUSTFLAGS="--cfg loom --cfg stealpool_fences"` they are loom's
//!   model-checked types; otherwise std's.
//! * [`unchecked`]: std's types in every build, for state outside the models (reference
//!   counts, the registry's handler tables, metrics, the global pool's initialisation,
//!   the worker's thread-local slot).
//!
//! `Ordering` is the same type in both.

pub(crate) mod barrier;
#[cfg(not(loom))]
mod cell;
pub(crate) mod deque;
mod lock;
#[cfg(windows)]
pub(crate) mod ntdll;

pub(crate) use std::sync::atomic::Ordering;

/// Model-checked under `--cfg loom`: the protocols' atomics, locks, thread handles and
/// `yield`, and the job cells ([`UnsafeCell`](checked::UnsafeCell): loom's access API in
/// both builds, `cell.rs`). `tests/loom_*.rs` explore every interleaving of the code that
/// uses them.
pub(crate) mod checked {
    #[cfg(not(loom))]
    pub(crate) use super::cell::UnsafeCell;
    #[cfg(not(loom))]
    pub(crate) use super::lock::std_locks::{Condvar, Mutex, MutexGuard};
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize};
    /// Thread handles, `park` and `unpark`, for `ParkLatch`.
    #[cfg(not(loom))]
    pub(crate) use std::thread;
    #[cfg(not(loom))]
    pub(crate) use std::thread::yield_now;

    #[cfg(loom)]
    pub(crate) use super::lock::loom_locks::{Condvar, Mutex, MutexGuard};
    #[cfg(loom)]
    pub(crate) use loom::cell::UnsafeCell;
    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize};
    #[cfg(loom)]
    pub(crate) use loom::thread;
    #[cfg(loom)]
    pub(crate) use loom::thread::yield_now;
}

/// std's in every build: state the models do not explore.
pub(crate) mod unchecked {
    pub(crate) use super::lock::std_locks::Mutex;
    /// The thread-local "which worker am I" slot.
    pub(crate) use std::cell::Cell;
    pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};
    pub(crate) use std::sync::Arc;
    /// The global pool's one-time initialisation: a process-wide static, outside the
    /// protocols a model checker would explore.
    pub(crate) use std::sync::OnceLock;
}
