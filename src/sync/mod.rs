//! Every synchronisation primitive the scheduler itself owns, imported through one place.
//!
//! The scheduler's protocols (sleep/wake, latches, termination) are written against the
//! names re-exported here, never against `std::sync` directly. Building the crate with
//! `--cfg loom` swaps in [loom](https://docs.rs/loom)'s model-checked types for the sleep
//! protocol's primitives without touching the logic, the way tokio and crossbeam test
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

pub(crate) mod barrier;
pub(crate) mod deque;
mod lock;
#[cfg(windows)]
pub(crate) mod ntdll;

pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
pub(crate) use std::sync::Arc;

pub(crate) use self::lock::std_locks::Mutex;

/// The primitives of the sleep/wake protocol itself (the sleep counters, the per-worker
/// parking mutex and condvar, `CoreLatch`'s state, the scheduler's `yield`) and of the
/// latches outside threads wait on (`ParkLatch`: its flag, `park`/`unpark`; `CountLatch`'s
/// count). Built with
/// `RUSTFLAGS="--cfg loom --cfg stealpool_fences"`, they are loom's model-checked types
/// and `tests/loom_sleep.rs` explores every interleaving of the protocol; otherwise they
/// are std's atomics, mutex and condvar (the same types as [`Mutex`] and [`Condvar`]).
pub(crate) mod protocol {
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
    pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize};
    #[cfg(loom)]
    pub(crate) use loom::thread;
    #[cfg(loom)]
    pub(crate) use loom::thread::yield_now;
}

/// The thread-local "which worker am I" slot.
pub(crate) use std::cell::Cell;

/// The global pool's one-time initialisation: a process-wide static, outside the
/// protocols a model checker would explore.
pub(crate) use std::sync::OnceLock;

/// `UnsafeCell` as the jobs use it: a cell whose contents one thread owns at a time,
/// handed over through a latch.
pub(crate) use std::cell::UnsafeCell;
