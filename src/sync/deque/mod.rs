//! The work-stealing deques: crossbeam-deque's `Worker`, `Stealer` and `Injector`.
//!
//! crossbeam-deque is a well-tested dependency, not part of stealpool's protocols, so the
//! scheduler uses it as is. Under `--cfg loom`, `model.rs` stands in for it: the same API
//! over a loom mutex, linearizable like crossbeam's deques, whose stealers answer
//! `Steal::Retry` when they lose a race for the lock, as crossbeam's lose a CAS. The loom
//! models of `join` (`tests/loom_join_steal.rs`) then see every order of a push, a pop
//! and a steal around stealpool's own code, the way tokio models its run queue.

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};

#[cfg(loom)]
mod model;
#[cfg(loom)]
pub(crate) use model::{Injector, Steal, Stealer, Worker};
