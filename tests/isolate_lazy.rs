//! The lazy `join` inside an isolation region (`docs/isolation.md`, "The lazy `join` in a
//! region"): a `join` in a region keeps its second half private, as everywhere, and the
//! half still reaches every worker that may run it: a free worker (by promotion or
//! rescue), a waiter of the region that spins (by rescue), and a waiter of the region
//! that parked (the `join`'s poll sees it in the sleep counters and promotes the half to
//! the region's queue, which wakes it). Every body runs under a watchdog.

mod common;

use common::{wait_until, watchdog};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// Watchdog per test, in seconds; a healthy run takes milliseconds.
const SECS: u64 = 30;

fn pool(n: usize) -> Arc<ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(n).build().unwrap())
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// A join tree inside `isolate`, nested regions and waits included, computes what it
/// computes outside, on every pool size.
#[test]
fn join_trees_inside_regions_complete_on_every_pool_size() {
    watchdog(SECS, || {
        for n in [1, 2, 3, 8] {
            let pool = pool(n);
            for _ in 0..20 {
                let sum = pool.isolate(|| {
                    let (a, b) = stealpool::join(
                        || stealpool::isolate(|| fib(18)),
                        || {
                            let (c, d) =
                                stealpool::join(|| fib(17), || stealpool::isolate(|| fib(16)));
                            c + d
                        },
                    );
                    a + b
                });
                assert_eq!(sum, 2584 + 1597 + 987, "{n} workers");
            }
        }
    });
}

/// The pair of "Why the poll must see R's waiters": worker X runs `isolate(join(a, b))`;
/// `b` goes to worker Y, and `a` returns once `b` started, so X waits for `b` inside the
/// region, and parks there (forced: `b` goes on only once X's park count moved). Then
/// `b` makes a `join` whose first half blocks until its second half runs. The second half
/// is private on Y, and X, parked in the region, is the only worker that may run it: Y's
/// poll must see X in the sleep counters and promote the half to the region's queue,
/// which wakes X. (rayon-core completes the same program: X steals the half.)
///
/// Where the park rechecks the queues after a while (the fence pair: `--cfg
/// stealpool_fences`, wine), X may instead wake by itself, see the private half and rescue
/// it: each run checks that one of the two happened, and the runs together that the
/// promotion did.
#[test]
fn a_private_half_reaches_the_regions_parked_waiter() {
    watchdog(SECS, || {
        let pool = pool(2);
        let mut promoted_runs = 0;
        for run in 0..20 {
            let before = pool.metrics();
            let b_started = AtomicBool::new(false);
            let (x, promoted_by_y) = pool.isolate(|| {
                let x = stealpool::current_thread_index().unwrap();
                let ((), promoted_by_y) = stealpool::join(
                    || {
                        // Spin, not a pool wait: `b` must leave this worker.
                        while !b_started.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                    },
                    || {
                        b_started.store(true, Ordering::SeqCst);
                        let y = stealpool::current_thread_index().unwrap();
                        assert_ne!(x, y, "b ran on the worker of a");
                        let parked = wait_until(Duration::from_secs(SECS), || {
                            stealpool::metrics().workers[x].parks > before.workers[x].parks
                        });
                        assert!(parked, "run {run}: worker {x} never parked in the region");
                        let y_before = stealpool::metrics().workers[y].promotions;
                        let (tx, rx) = mpsc::channel();
                        stealpool::join(move || rx.recv().unwrap(), move || tx.send(()).unwrap());
                        stealpool::metrics().workers[y].promotions - y_before
                    },
                );
                (x, promoted_by_y)
            });
            let rescued_by_x = pool.metrics().workers[x].rescues - before.workers[x].rescues;
            assert!(
                promoted_by_y >= 1 || rescued_by_x >= 1,
                "run {run}: the half reached X neither promoted nor rescued"
            );
            if promoted_by_y >= 1 {
                promoted_runs += 1;
            }
        }
        assert!(
            promoted_runs >= 1,
            "no run promoted the half for the parked X"
        );
    });
}

/// A waiter of the region that is still spinning rescues a private half of the region:
/// the same program, with `b`'s `join` started while X may still be spinning in its wait.
/// X either rescues the half or, once parked, gets it promoted.
#[test]
fn a_private_half_reaches_a_spinning_waiter_of_the_region() {
    watchdog(SECS, || {
        let pool = pool(2);
        for _ in 0..200 {
            let b_started = AtomicBool::new(false);
            pool.isolate(|| {
                stealpool::join(
                    || {
                        while !b_started.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                    },
                    || {
                        b_started.store(true, Ordering::SeqCst);
                        let (tx, rx) = mpsc::channel();
                        stealpool::join(move || rx.recv().unwrap(), move || tx.send(()).unwrap());
                    },
                )
            });
        }
    });
}
