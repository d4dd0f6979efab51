//! A kernel (or a sandbox) that refuses `membarrier(2)` from the start: the asymmetric
//! barrier is never published, so no worker may fix its light barrier as the compiler
//! fence (`sync/barrier`, `FixedLight`), and every `join` runs the checked path with the
//! fence pair (`docs/join.md`, "The fast path"). A debug build asserts at each pop that a
//! fixed light barrier exists only once the barrier was published; this process never
//! publishes it, so any `join` on a fixed compiler fence fails here.
//!
//! Its own test binary: the seccomp filter stays on this process for good.
#![cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

mod common;

use std::time::Duration;

use common::seccomp::refuse_membarrier;
use common::wake::parked_workers;
use common::{fib, pool, wait_until, watchdog};

const THREADS: usize = 2;

#[test]
fn joins_without_a_published_barrier_run_the_fence_pair() {
    if let Err(err) = refuse_membarrier() {
        eprintln!("skipped: the kernel refused the seccomp filter: {err}");
        return;
    }
    watchdog(120, || {
        let pool = pool(THREADS);
        for round in 0..20 {
            assert_eq!(pool.install(|| fib(18)), 2584, "round {round}");
            // Let every worker park: the first park starts the registration, which the
            // filter refuses.
            let parked = wait_until(Duration::from_secs(20), || parked_workers(&pool) == THREADS);
            assert!(parked, "round {round}: the workers never parked");
        }
        let total = pool.metrics().total();
        assert!(total.parks > 0);
        assert_eq!(stealpool::__barrier_mode(), "fences");
    });
}
