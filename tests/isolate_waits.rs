//! `ThreadPoolBuilder::isolate_waits` and `STEALPOOL_ISOLATE_WAITS` (`docs/isolation.md`):
//! every job taken from a pool's queues runs as if inside its own `isolate`, so a wait
//! inside it runs only the jobs handed out inside it. Each pattern of rayon-rs/rayon#592
//! (a `Mutex`), #1205 (an `RwLock`), #1253 (a thread-local `RefCell`) and #1251
//! (`OnceLock` initialisers that join) completes without a re-entry, with the builder's
//! switch and with the environment variable; `tests/isolate.rs` shows the same scenarios
//! re-entering without isolation. Every body runs under a watchdog.

mod common;

use common::child::ran_in_child;
use common::held::{Held, Locks};
use common::isolation::{halves_that_meet, stolen_half_wait, tree, Isolation, Route};
use common::watchdog;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use stealpool::{ThreadPool, ThreadPoolBuilder, ISOLATE_WAITS_ENV};

/// Watchdog per test, in seconds; a healthy run takes well under one.
const SECS: u64 = 60;
/// Runs of each scenario: the state the workers start in varies.
const RUNS: usize = 20;

const HELD: [Held; 3] = [Held::Mutex, Held::RwLock, Held::ThreadLocal];
const ROUTES: [Route; 2] = [Route::Spawned, Route::ThroughAnotherPool];

/// The forced wait of each pattern, isolated as `how` says: no re-entry.
fn no_stolen_half_wait_reenters(how: Isolation) {
    for run in 0..RUNS {
        for held in HELD {
            for route in ROUTES {
                let reentries = stolen_half_wait(held, route, how);
                assert_eq!(reentries, 0, "run {run}: {held:?}, {route:?}, {how:?}");
            }
        }
    }
}

/// rayon-rs/rayon#1251 on `pool` (the global pool for `None`): jobs spawned at once, each
/// calling `get_or_init` on one `OnceLock` whose initialiser runs a `join` tree, with no
/// `isolate` in the code. A wait inside the initialiser that started another of the jobs
/// would re-enter the `OnceLock` (std's deadlocks, which the watchdog reports).
fn once_lock_initialisers_complete(pool: Option<&ThreadPool>, jobs: usize) {
    let once = Arc::new(OnceLock::new());
    let (tx, rx) = mpsc::channel();
    let spawn_all = || {
        for _ in 0..jobs {
            let (once, tx) = (once.clone(), tx.clone());
            stealpool::spawn(move || {
                let v = *once.get_or_init(|| {
                    let (a, b) = stealpool::join(|| tree(6), || tree(6));
                    a + b
                });
                tx.send(v).unwrap();
            });
        }
    };
    match pool {
        Some(pool) => pool.install(spawn_all),
        None => stealpool::scope(|_| spawn_all()),
    }
    drop(tx);
    assert_eq!(rx.iter().collect::<Vec<u64>>(), vec![128; jobs]);
}

/// rayon-rs/rayon#592 as it is reported: the leaves of a parallel loop (a `join` tree)
/// each hold `held` across parallel work of their own. Returns how many leaves found the
/// section already held on their thread (they then skip it instead of waiting on
/// themselves): a wait inside a section that ran another leaf.
fn leaves_that_met_a_held_section(held: Held, depth: u32) -> usize {
    let locks = Locks::default();
    let met = AtomicUsize::new(0);
    fn leaves(depth: u32, leaf: &(dyn Fn() + Sync)) {
        if depth == 0 {
            return leaf();
        }
        stealpool::join(|| leaves(depth - 1, leaf), || leaves(depth - 1, leaf));
    }
    leaves(depth, &|| {
        if held.is_held_here(&locks) {
            met.fetch_add(1, Ordering::SeqCst);
        } else {
            held.hold(&locks, || assert_eq!(tree(4), 16));
        }
    });
    met.into_inner()
}

/// The forced form of [`leaves_that_met_a_held_section`], on a three-worker pool built as
/// `how` says: `install(join(section, other))`, where the section holds `held` across
/// `join(x, y)`; `x` returns once `y` started on another worker and `other` (the other
/// half of the enclosing loop, on the third worker) has pushed a leaf `l` that tries the
/// section, so the section's worker waits for `y` while `l` waits in its reach if the
/// halves share a region (the other two workers are busy: `other`'s blocks until `l` ran,
/// and `y` returns only once the section's worker parked, which it does only with
/// nothing it may run). Returns how often `other` or `l` found the
/// section held on its thread: 0 when each half of a `join` is in a region of its own
/// (both are of `other`'s region, out of the section's reach). With the halves in the
/// caller's region the section's wait takes `other` itself if it is still queued, or
/// rescues `l`: either way one of them meets the section.
fn outer_leaf_meets_the_section(held: Held, how: Isolation) -> usize {
    let pool = how.pool(3);
    let locks = Locks::default();
    let met = AtomicUsize::new(0);
    let (y_started_tx, y_started_rx) = mpsc::channel::<()>();
    let (l_out_tx, l_out_rx) = mpsc::channel::<()>();
    let (l_pushed_tx, l_pushed_rx) = mpsc::channel::<()>();
    let (l_ran_tx, l_ran_rx) = mpsc::channel::<()>();
    let (locks, met, pool_ref) = (&locks, &met, &*pool);
    pool.install(move || {
        stealpool::join(
            move || {
                held.hold(locks, || {
                    stealpool::join(
                        move || {
                            y_started_rx.recv().unwrap();
                            l_pushed_rx.recv().unwrap();
                        },
                        move || {
                            y_started_tx.send(()).unwrap();
                            l_out_rx.recv().unwrap();
                            common::wait_parked(pool_ref, 1);
                        },
                    )
                })
            },
            move || {
                // `other` itself may be what the section's wait picks up.
                if held.is_held_here(locks) {
                    met.fetch_add(1, Ordering::SeqCst);
                }
                stealpool::join(
                    move || {
                        // `l` is on this worker's private stack (a `join` pushes its
                        // second half before it runs the first).
                        l_out_tx.send(()).unwrap();
                        l_pushed_tx.send(()).unwrap();
                        l_ran_rx.recv().unwrap();
                    },
                    move || {
                        if held.is_held_here(locks) {
                            met.fetch_add(1, Ordering::SeqCst);
                        }
                        l_ran_tx.send(()).unwrap();
                    },
                )
            },
        )
    });
    met.load(Ordering::SeqCst)
}

#[test]
fn a_wait_inside_a_section_never_runs_a_leaf_of_the_enclosing_loop() {
    watchdog(SECS, || {
        for run in 0..RUNS {
            for held in HELD {
                let met = outer_leaf_meets_the_section(held, Isolation::Builder);
                assert_eq!(met, 0, "run {run}: {held:?}");
            }
        }
    });
}

#[test]
fn the_builders_switch_isolates_the_wait_of_each_pattern() {
    watchdog(SECS, || no_stolen_half_wait_reenters(Isolation::Builder));
}

#[test]
fn once_lock_initialisers_that_join_complete_in_an_isolating_pool() {
    watchdog(SECS, || {
        for threads in [2, 4] {
            for _ in 0..RUNS {
                let pool = Isolation::Builder.pool(threads);
                once_lock_initialisers_complete(Some(&pool), threads * 4);
            }
        }
    });
}

#[test]
fn sections_in_the_leaves_of_a_parallel_loop_are_never_met_again() {
    watchdog(SECS, || {
        for threads in [2, 4] {
            let pool = Isolation::Builder.pool(threads);
            for held in HELD {
                for _ in 0..RUNS {
                    let met = pool.install(|| leaves_that_met_a_held_section(held, 6));
                    assert_eq!(met, 0, "{held:?} on {threads} workers");
                }
            }
        }
    });
}

/// Isolation keeps the pool's parallelism: a `join` whose `a` returns only once `b` has
/// started completes (`b` runs on the other worker), also inside a spawned job's own
/// region and in a job of a scope.
#[test]
fn jobs_of_an_isolating_pool_still_hand_their_halves_to_free_workers() {
    watchdog(SECS, || {
        let pool = Isolation::Builder.pool(2);
        let meet = || {
            let (a, b) = halves_that_meet();
            assert_ne!(a, b);
        };
        for _ in 0..RUNS {
            pool.install(meet);
            pool.scope(|s| s.spawn(|_| meet()));
        }
    });
}

/// A leaf that hands two jobs out and waits for them in the two halves of a `join`.
fn handles_joined_in_halves(i: u64) -> u64 {
    let h1 = stealpool::spawn_with_handle(move || i);
    let h2 = stealpool::spawn_with_handle(move || 2 * i);
    let (a, b) = stealpool::join(move || h1.join().unwrap(), move || h2.join().unwrap());
    a + b
}

/// A `join` tree over `lo..hi` whose leaves are [`handles_joined_in_halves`].
fn loop_of_handles(lo: u64, hi: u64) -> u64 {
    if hi - lo == 1 {
        return handles_joined_in_halves(lo);
    }
    let mid = (lo + hi) / 2;
    let (a, b) = stealpool::join(|| loop_of_handles(lo, mid), || loop_of_handles(mid, hi));
    a + b
}

/// A wait inside a `join` half runs what the code around the `join` handed out before it
/// (here the job of the join handle the half waits for): a `join`'s halves are isolated
/// from each other, not from the job they belong to. On one worker nobody else could run
/// it: the wait for `h1` promotes `b`, which splits the `join`, and the handle's job is
/// in the region around it.
#[test]
fn a_wait_inside_a_join_half_runs_the_jobs_handed_out_around_the_join() {
    watchdog(SECS, || {
        for threads in [1, 2, 3] {
            let pool = Isolation::Builder.pool(threads);
            for _ in 0..RUNS {
                assert_eq!(pool.install(|| handles_joined_in_halves(5)), 15);
                assert_eq!(pool.install(|| loop_of_handles(0, 8)), 3 * 28);
            }
        }
    });
}

/// A one-worker isolating pool runs every kind of job from its waits alone: scope jobs
/// (each in its own region, nested in the scope's), `spawn_fifo`, a join handle, a
/// broadcast, an install into another pool.
#[test]
fn a_one_worker_isolating_pool_runs_every_kind_of_job() {
    watchdog(SECS, || {
        let other = Isolation::Builder.pool(2);
        let pool = Isolation::Builder.pool(1);
        let total = AtomicUsize::new(0);
        pool.scope(|s| {
            for i in 0..10 {
                let total = &total;
                s.spawn(move |_| {
                    let (a, b) = stealpool::join(|| tree(3), || i);
                    total.fetch_add(a as usize + b, Ordering::SeqCst);
                });
            }
        });
        let from_handle = pool.install(|| stealpool::spawn_with_handle(|| tree(4)).join().unwrap());
        let per_worker = pool.broadcast(|_| tree(2));
        let from_other = pool.install(|| other.install(|| tree(3)));
        pool.scope_fifo(|s| {
            for _ in 0..3 {
                s.spawn_fifo(|_| {
                    total.fetch_add(100, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(total.into_inner(), 10 * 8 + 45 + 300);
        assert_eq!((from_handle, per_worker, from_other), (16, vec![4], 8));
    });
}

/// `STEALPOOL_ISOLATE_WAITS=1` isolates every pool whose builder did not choose, the global
/// pool included, and the builder's `isolate_waits(false)` wins over it. A value other
/// than `0` or `1` fails the build with a message that names the variable. In a child
/// process: the variable is process-wide.
#[test]
fn the_environment_variable_isolates_every_pool_and_the_global_one() {
    const NAME: &str = "the_environment_variable_isolates_every_pool_and_the_global_one";
    if ran_in_child(
        NAME,
        120,
        "the scenarios with STEALPOOL_ISOLATE_WAITS=1 failed",
    ) {
        return;
    }
    // No pool exists yet in this process (the child runs this test alone).
    std::env::set_var(ISOLATE_WAITS_ENV, "1");
    watchdog(SECS, || {
        no_stolen_half_wait_reenters(Isolation::Environment);
        for run in 0..RUNS {
            let held = HELD[run % HELD.len()];
            assert_eq!(
                stolen_half_wait(held, Route::Spawned, Isolation::Off),
                1,
                "run {run}"
            );
            once_lock_initialisers_complete(None, 8);
            let met = stealpool::join(|| leaves_that_met_a_held_section(held, 6), || 0).0;
            assert_eq!(met, 0, "run {run}: {held:?} on the global pool");
        }
    });
    for bad in ["yes", "2", "true"] {
        std::env::set_var(ISOLATE_WAITS_ENV, bad);
        let err = ThreadPoolBuilder::new().num_threads(1).build().unwrap_err();
        assert!(err.to_string().contains(ISOLATE_WAITS_ENV), "{err}");
    }
    for off in ["0", "", " 1 "] {
        std::env::set_var(ISOLATE_WAITS_ENV, off);
        assert!(
            ThreadPoolBuilder::new().num_threads(1).build().is_ok(),
            "{off:?}"
        );
    }
}
