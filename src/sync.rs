//! Every synchronisation primitive the scheduler itself owns, imported through one place.
//!
//! The scheduler's protocols (sleep/wake, latches, termination) are written against the
//! names re-exported here, never against `std::sync` or `parking_lot` directly. A later
//! change can therefore build the crate with `--cfg loom` and swap in
//! [loom](https://docs.rs/loom)'s model-checked types without touching the logic, the way
//! tokio and crossbeam test their own protocols.
//!
//! The deques (crossbeam-deque) and `CachePadded` (crossbeam-utils) are not re-exported:
//! they are well-tested data structures that the protocols use, not part of them.

pub(crate) use std::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
pub(crate) use std::sync::Arc;

pub(crate) use parking_lot::{Condvar, Mutex};

/// The thread-local "which worker am I" slot.
pub(crate) use std::cell::Cell;

/// The global pool's one-time initialisation: a process-wide static, outside the
/// protocols a model checker would explore.
pub(crate) use std::sync::OnceLock;

/// `UnsafeCell` as the jobs use it: a cell whose contents one thread owns at a time,
/// handed over through a latch.
pub(crate) use std::cell::UnsafeCell;
