//! Helpers shared by the integration tests, one concern a file:
//!
//! - `deadline.rs`: the watchdog every test that could hang runs its body under, so that a
//!   deadlock or a lost wake-up fails the test instead of hanging `cargo test`; waiting
//!   with a deadline (`wait_until`, `Recorded`, `Countdown`).
//! - `child.rs`: running one test of the binary in a child process, and skipping a test
//!   (with its reason printed) where that, or anything else it needs, is missing.
//! - `pools.rs`: building pools, the default thread count, checking that every worker of a
//!   pool runs.
//! - `panics.rs`: deliberate panics, a hook that keeps them quiet, their payloads.
//! - `work.rs`: the work given to pools (`fib`), seeded random data, a busy delay.
//! - `wake.rs`: workers asleep and woken: how many are parked, waiting until they are,
//!   pacing rounds so that they meet workers on their way to sleep.
//! - `blocked.rs`: whether a thread is blocked, read from `/proc`.
//! - `held.rs`, `isolation.rs`: what a section holds across parallel work, and the forced
//!   wait of the isolation tests.
//! - `parity.rs`: scenarios checked on stealpool and on rayon-core alike.
//! - `seccomp.rs`: a seccomp filter that refuses `membarrier(2)`.
//! - `trace.rs`: checks of a timeline's Chrome Trace Event JSON.
//!
//! The helpers that many test files use are re-exported here.

// Every test binary compiles all of `common` and uses a part of it: the rest is dead code
// in that binary, and some of the re-exports below are unused there.
#![allow(dead_code)]

pub mod blocked;
pub mod child;
pub mod deadline;
pub mod held;
pub mod isolation;
pub mod panics;
pub mod parity;
pub mod pools;
pub mod seccomp;
pub mod trace;
pub mod wake;
pub mod work;

#[allow(unused_imports)]
pub use self::{
    child::skip,
    deadline::{wait_until, watchdog, Countdown, Recorded},
    panics::{payload_str, quiet_expected_panics, EXPECTED},
    pools::pool,
    wake::wait_parked,
    work::fib,
};
