//! The free `metrics()` and `wait_idle()`: they act on the pool the caller is a worker
//! of, else on the global pool, so code whose work goes to the global pool (the `rayon`
//! crate on `compat/rayon-core`) can read its counters and wait for it. The tests of this
//! binary share its global pool.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

#[test]
fn free_metrics_read_the_global_pool_outside_and_the_own_pool_on_a_worker() {
    watchdog(60, || {
        let before = stealpool::metrics();
        assert_eq!(before.workers.len(), stealpool::current_num_threads());
        for _ in 0..10 {
            stealpool::spawn(|| {});
        }
        stealpool::wait_idle().unwrap();
        let after = stealpool::metrics();
        assert!(after.injected_jobs >= before.injected_jobs + 10);
        assert!(after.total().jobs_executed >= before.total().jobs_executed + 10);

        // On a worker of another pool: that pool's counters, not the global pool's.
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let inside = pool.install(stealpool::metrics);
        assert_eq!(inside.workers.len(), 3);
        // The install itself is the one job that pool was given.
        assert_eq!(inside.injected_jobs, 1);
        assert_eq!(pool.metrics().injected_jobs, 1);
    });
}

#[test]
fn free_wait_idle_waits_for_global_spawns_and_what_they_spawn() {
    watchdog(60, || {
        for _ in 0..20 {
            let done = Arc::new(AtomicUsize::new(0));
            for _ in 0..50 {
                let done = Arc::clone(&done);
                stealpool::spawn(move || {
                    let inner = Arc::clone(&done);
                    stealpool::spawn(move || {
                        // Some work, so that a wait_idle that returned early would see
                        // unfinished jobs.
                        std::hint::black_box((0..10_000u64).sum::<u64>());
                        inner.fetch_add(1, Ordering::SeqCst);
                    });
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            stealpool::wait_idle().unwrap();
            assert_eq!(done.load(Ordering::SeqCst), 100);
        }
    });
}

#[test]
fn free_wait_idle_on_any_worker_is_an_error_not_a_deadlock() {
    watchdog(60, || {
        // A worker of the global pool would wait for its own job.
        let (on_global, _) = stealpool::join(stealpool::wait_idle, || ());
        assert!(on_global.is_err());
        // A worker of another pool would stall that pool for the whole wait.
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert!(pool.install(stealpool::wait_idle).is_err());
        // From outside, it works.
        assert!(stealpool::wait_idle().is_ok());
    });
}
