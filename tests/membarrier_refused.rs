//! A kernel that refuses `membarrier(2)` after the process registered for it (a seccomp
//! filter installed later, or ENOMEM) must not make workers spin: the pool falls back to
//! the fence pair for good and keeps parking (`sync/barrier/membarrier.rs`, `docs/sleep.md`,
//! "Switching barrier modes").
//!
//! Its own test binary: the seccomp filter stays on this process for good.
#![cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::seccomp::refuse_membarrier;
use common::{fib, wait_until, watchdog};
use stealpool::{ThreadPool, ThreadPoolBuilder};

const THREADS: usize = 2;
const WAIT: Duration = Duration::from_secs(20);

/// Waits until every worker is blocked inside a park (counted a park and not yet the
/// matching unpark: a worker that registers as a sleeper and then backs out, as a
/// spinning one would, never counts); false if they were still not after `WAIT`.
fn all_parked(pool: &ThreadPool) -> bool {
    wait_until(WAIT, || {
        let total = pool.metrics().total();
        total.parks - total.unparks == THREADS as u64
    })
}

#[test]
fn a_refused_membarrier_falls_back_to_fences_and_workers_still_park() {
    watchdog(120, || {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .num_threads(THREADS)
                .build()
                .unwrap(),
        );
        assert_eq!(pool.install(|| fib(20)), 6765);
        assert!(all_parked(&pool), "the workers never parked");
        // The first park started the registration; it takes an RCU grace period.
        let registered = wait_until(WAIT, || stealpool::__barrier_mode() == "expedited");
        if !registered {
            eprintln!(
                "skipped: this kernel gave no membarrier registration (mode {})",
                stealpool::__barrier_mode()
            );
            return;
        }

        if let Err(err) = refuse_membarrier() {
            eprintln!("skipped: the kernel refused the seccomp filter: {err}");
            return;
        }

        let parks_before = pool.metrics().total().parks;
        let ran = Arc::new(AtomicUsize::new(0));
        for round in 0..20 {
            // Wake the parked workers from outside, give them joins, let them park again.
            let ran_here = Arc::clone(&ran);
            pool.spawn(move || {
                ran_here.fetch_add(1, Ordering::SeqCst);
            });
            assert_eq!(pool.install(|| fib(15)), 610);
            assert!(
                all_parked(&pool),
                "round {round}: workers did not park after membarrier was refused \
                 (mode {}): they spin",
                stealpool::__barrier_mode()
            );
        }
        assert!(
            wait_until(WAIT, || ran.load(Ordering::SeqCst) == 20),
            "spawned jobs were lost: {} of 20 ran",
            ran.load(Ordering::SeqCst)
        );
        assert_eq!(stealpool::__barrier_mode(), "failed");
        assert!(pool.metrics().total().parks > parks_before);
    });
}
