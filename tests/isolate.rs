//! `isolate` (`docs/isolation.md`): inside a region, a worker that waits runs only the
//! region's jobs, and the region's jobs still run on every free worker.
//!
//! The re-entry scenarios force the wait of rayon-rs/rayon#592 (a job holds a section
//! across a `join` whose `b` the other worker took, and an unrelated job is in reach of
//! the wait) and count the unrelated job's runs inside the section: one without
//! isolation, none with it. Every body runs under a watchdog.

mod common;

use common::held::Held;
use common::isolation::{halves_that_meet, stolen_half_wait, tree, Isolation, Route};
use common::{wait_parked, watchdog};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// Watchdog per test, in seconds; a healthy run takes milliseconds.
const SECS: u64 = 30;
/// Runs of each re-entry scenario: the state the workers start in varies.
const RUNS: usize = 50;

fn pool(n: usize) -> Arc<ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(n).build().unwrap())
}

/// [`stolen_half_wait`] `RUNS` times each without and with isolation.
fn check_stolen_half_waits(held: Held, route: Route) {
    watchdog(SECS, move || {
        for run in 0..RUNS {
            let (plain, isolated) = (
                stolen_half_wait(held, route, Isolation::Off),
                stolen_half_wait(held, route, Isolation::Isolate),
            );
            assert_eq!((plain, isolated), (1, 0), "run {run}: {held:?}, {route:?}");
        }
    });
}

#[test]
fn a_mutex_held_across_an_isolated_join_is_not_met_by_an_injected_job() {
    check_stolen_half_waits(Held::Mutex, Route::Spawned);
}

#[test]
fn an_rwlock_written_across_an_isolated_join_is_not_met_by_an_injected_job() {
    check_stolen_half_waits(Held::RwLock, Route::Spawned);
}

#[test]
fn a_thread_local_borrowed_across_an_isolated_join_is_not_met_by_an_injected_job() {
    check_stolen_half_waits(Held::ThreadLocal, Route::Spawned);
}

/// rayon-rs/rayon#1251: `OnceLock::get_or_init` whose initialiser runs parallel work, on
/// every worker of a pool at once. Without isolation a worker waiting inside the
/// initialiser may start another job's `get_or_init` on the same thread (std's `OnceLock`
/// then deadlocks); inside `isolate` every call completes with the one value.
#[test]
fn once_lock_initialisers_that_join_complete_on_every_worker() {
    watchdog(SECS, || {
        for threads in [2, 4] {
            for _ in 0..RUNS {
                let pool = pool(threads);
                let once = Arc::new(OnceLock::new());
                let values: Vec<u64> = pool.install(|| {
                    let (tx, rx) = mpsc::channel();
                    for _ in 0..threads * 4 {
                        let (once, tx) = (once.clone(), tx.clone());
                        stealpool::spawn(move || {
                            let v = *once.get_or_init(|| {
                                stealpool::isolate(|| {
                                    let (a, b) = stealpool::join(|| tree(6), || tree(6));
                                    a + b
                                })
                            });
                            tx.send(v).unwrap();
                        });
                    }
                    drop(tx);
                    rx.iter().collect()
                });
                assert_eq!(values, vec![128; threads * 4]);
            }
        }
    });
}

/// The region's halves run on the other worker: `a` returns only once `b` has started,
/// so `b` ran elsewhere, and it reports its worker.
#[test]
fn a_region_hands_its_halves_to_a_free_worker() {
    watchdog(SECS, || {
        let pool = pool(2);
        for _ in 0..RUNS {
            let (a_worker, b_worker) = pool.isolate(halves_that_meet);
            assert_ne!(a_worker, b_worker);
        }
    });
}

/// Everything a region hands out on a one-worker pool runs: a scope's jobs, `spawn_fifo`,
/// a join handle, a broadcast, an install into another pool, nested regions, from the
/// isolated waits alone (there is no free worker).
#[test]
fn a_one_worker_region_runs_all_its_own_jobs() {
    watchdog(SECS, || {
        let other = pool(2);
        let pool = pool(1);
        let sum = pool.isolate(|| {
            let total = AtomicUsize::new(0);
            stealpool::scope(|s| {
                for i in 0..10 {
                    let total = &total;
                    s.spawn(move |_| {
                        total.fetch_add(i, Ordering::SeqCst);
                    });
                }
                s.spawn(|_| {
                    let inner = stealpool::isolate(|| tree(5));
                    total.fetch_add(inner as usize, Ordering::SeqCst);
                });
            });
            stealpool::scope_fifo(|s| {
                for _ in 0..3 {
                    s.spawn_fifo(|_| {
                        total.fetch_add(100, Ordering::SeqCst);
                    });
                }
            });
            let handle = stealpool::spawn_with_handle(|| tree(4));
            let from_handle = handle.join().unwrap();
            let per_worker = stealpool::broadcast(|ctx| ctx.index());
            let from_other = other.install(|| tree(3));
            total.load(Ordering::SeqCst) as u64 + from_handle + per_worker.len() as u64 + from_other
        });
        // 45 + 32 + 300, 16, 1, 8
        assert_eq!(sum, 45 + 32 + 300 + 16 + 1 + 8);
    });
}

/// A region's waits see its jobs wherever they were handed out: a detached `spawn` that
/// outlives the `isolate` runs too, and a panic in `a` or `b` reaches the caller after the
/// other half came back.
#[test]
fn panics_and_detached_jobs_of_a_region() {
    watchdog(SECS, || {
        for threads in [1, 2] {
            let pool = pool(threads);
            let (tx, rx) = mpsc::channel();
            let caught = pool.isolate(|| {
                stealpool::spawn(move || tx.send(tree(3)).unwrap());
                let b_ran = AtomicUsize::new(0);
                let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    stealpool::join(
                        || panic!("expected panic in a"),
                        || {
                            b_ran.fetch_add(1, Ordering::SeqCst);
                        },
                    )
                }));
                assert!(panicked.is_err());
                let in_b = std::panic::catch_unwind(|| {
                    stealpool::join(|| tree(2), || -> u64 { panic!("expected panic in b") })
                });
                assert!(in_b.is_err());
                b_ran.load(Ordering::SeqCst)
            });
            assert_eq!(caught, 1);
            assert_eq!(rx.recv().unwrap(), 8);
        }
    });
}

/// `yield_now` and `yield_local` inside a region run the region's jobs only: a job queued
/// outside it stays queued.
#[test]
fn yields_inside_a_region_run_only_its_jobs() {
    watchdog(SECS, || {
        let pool = pool(1);
        let log = Arc::new(Mutex::new(Vec::new()));
        let outside = log.clone();
        let inside = log.clone();
        pool.install(|| {
            stealpool::spawn(move || outside.lock().unwrap().push("outside"));
            stealpool::isolate(|| {
                stealpool::spawn(move || inside.lock().unwrap().push("inside"));
                assert_eq!(stealpool::yield_local(), Some(stealpool::Yield::Executed));
                assert_eq!(stealpool::yield_now(), Some(stealpool::Yield::Idle));
            });
        });
        pool.install(|| while stealpool::yield_local() == Some(stealpool::Yield::Executed) {});
        assert_eq!(*log.lock().unwrap(), ["inside", "outside"]);
    });
}

/// A worker parked in an isolated wait does not absorb the wake-up meant for a parked
/// searcher: worker 0 of `a` waits inside a region for an `install` on `b` whose job waits
/// for a job injected into `a` later, when both workers of `a` are parked. Only worker 1
/// can run it; a wake-up spent on worker 0 would leave it queued for ever.
#[test]
fn an_isolated_waiter_does_not_take_a_searchers_wake_up() {
    watchdog(SECS, || {
        for _ in 0..20 {
            let a = pool(2);
            let b = pool(1);
            let (tx, rx) = mpsc::channel::<()>();
            let (done_tx, done_rx) = mpsc::channel::<()>();
            a.spawn(move || {
                stealpool::isolate(|| b.install(move || rx.recv().unwrap()));
                done_tx.send(()).unwrap();
            });
            wait_parked(&a, 2);
            a.spawn(move || tx.send(()).unwrap());
            done_rx.recv().unwrap();
        }
    });
}

/// A region's waits run the jobs of the regions nested in it: a nested `isolate`'s `join`
/// whose first half blocks until its second half runs, on two workers where the only free
/// one waits in the outer region (rayon-core completes it by stealing the half).
#[test]
fn an_outer_wait_runs_the_jobs_of_a_nested_region() {
    watchdog(SECS, || {
        let pool = pool(2);
        for _ in 0..RUNS {
            pool.isolate(|| {
                let (outer_tx, outer_rx) = mpsc::channel::<()>();
                stealpool::join(
                    move || outer_rx.recv().unwrap(),
                    move || {
                        outer_tx.send(()).unwrap();
                        stealpool::isolate(|| {
                            let (tx, rx) = mpsc::channel::<()>();
                            stealpool::join(
                                move || rx.recv().unwrap(),
                                move || tx.send(()).unwrap(),
                            );
                        });
                    },
                );
            });
        }
    });
}

/// A broadcast from a region nested in the one a worker waits in reaches that worker.
#[test]
fn a_broadcast_from_a_nested_region_reaches_a_worker_waiting_in_the_outer_one() {
    watchdog(SECS, || {
        let pool = pool(2);
        for _ in 0..RUNS {
            let counts = pool.isolate(|| {
                stealpool::join(
                    || 0,
                    || stealpool::isolate(|| stealpool::broadcast(|_| 1).len()),
                )
            });
            assert_eq!(counts, (0, 2));
        }
    });
}

/// A → isolate → B.install → A.install on a one-worker `a`: the job B hands back to `a`
/// belongs to the region (it runs in a region of `a` nested in it), so `a`'s only worker,
/// waiting there, runs it.
#[test]
fn a_round_trip_through_another_pool_comes_back_into_the_region() {
    watchdog(SECS, || {
        let a = pool(1);
        let b = pool(2);
        for _ in 0..RUNS {
            assert_eq!(a.isolate(|| b.install(|| a.install(|| 7))), 7);
        }
    });
}

/// A job handed to another pool from inside a region runs in a region of that pool
/// (`worker::entry::inject`, which `spawn`, `install` and the other hand-outs to another pool
/// go through): an `install` into `b` whose closure holds a section across a `join` does
/// not run a job injected into `b` from outside meanwhile (with `a.install` instead of
/// `a.isolate`, it does: the control).
#[test]
fn a_job_handed_to_another_pool_from_a_region_waits_isolated_there() {
    check_stolen_half_waits(Held::Mutex, Route::ThroughAnotherPool);
}
