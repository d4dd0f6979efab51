//! The same source without the `timeline` feature (package `stealpool-off`): here
//! `ThreadPoolBuilder::timeline` and `ThreadPool::timeline` do not exist, so that a pool
//! of this build cannot record is checked by the compiler.

use stealpool_off as sp;

#[path = "candidate.rs"]
pub mod candidate;
