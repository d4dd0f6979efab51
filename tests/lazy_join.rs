//! The lazy `join` (docs/join.md): second halves stay private until someone can take
//! them. These tests pin what that must not change: a half some other worker has to run
//! still gets run (promotion, rescue), work from outside still starts while every worker
//! is busy with `join`s (fair injection), and `migrated()` stays exact. Every body runs
//! under a watchdog: the failure mode of each is a hang.

mod common;

use common::watchdog;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use stealpool::ThreadPoolBuilder;

/// A `join` whose first half waits for the second, made while the only other worker is
/// busy: the second half stays private at the `join`, and must be *rescued* when the
/// other worker comes free (the first half never calls into the pool again).
#[test]
fn a_blocked_first_half_gets_its_second_half_rescued() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for _ in 0..50 {
            let joined = AtomicBool::new(false);
            let barrier = Barrier::new(2);
            let (a, b) = pool.install(|| {
                stealpool::join_context(
                    |_| {
                        // Keep the other worker busy until our inner `join` has started.
                        stealpool::join(
                            || {
                                let (a, b) = stealpool::join_context(
                                    |ctx| {
                                        joined.store(true, Ordering::SeqCst);
                                        barrier.wait();
                                        ctx.migrated()
                                    },
                                    |ctx| {
                                        barrier.wait();
                                        ctx.migrated()
                                    },
                                );
                                (a, b)
                            },
                            || {
                                while !joined.load(Ordering::SeqCst) {
                                    std::hint::spin_loop();
                                }
                            },
                        )
                        .0
                    },
                    |_| (),
                )
                .0
            });
            assert!(!a, "the first half runs on the caller");
            assert!(b, "the second half ran on the other worker");
        }
        let metrics = pool.metrics().total();
        assert!(metrics.rescues + metrics.steals > 0);
    });
}

/// A one-worker pool kept busy by `join`s that end only when an injected job has run: the
/// worker never runs dry, never searches, so only the periodic look at the injector lets
/// the outside `spawn` start (rayon-core issue 1054: it never would, and this hangs).
#[test]
fn injected_work_starts_while_the_only_worker_only_joins() {
    watchdog(60, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let busy = {
            let (pool, done) = (pool.clone(), done.clone());
            std::thread::spawn(move || {
                pool.install(|| {
                    let _ = started_tx.send(());
                    let mut joins = 0u64;
                    while !done.load(Ordering::SeqCst) {
                        let (a, b) = stealpool::join(|| 1, || 1);
                        joins += a + b;
                    }
                    joins
                })
            })
        };
        started_rx.recv().unwrap();
        let flag = done.clone();
        pool.spawn(move || flag.store(true, Ordering::SeqCst));
        assert!(busy.join().unwrap() > 0);
        assert_eq!(
            pool.metrics().total().injector_batches,
            2,
            "install, then the spawn"
        );
    });
}

/// The same with a scope's own jobs instead of `join`s: a worker that keeps popping its
/// own deque looks at the injector every 61 local jobs.
#[test]
fn injected_work_starts_while_the_only_worker_pops_its_own_deque() {
    watchdog(60, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let spawned = Arc::new(AtomicUsize::new(0));
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let busy = {
            let (pool, done, spawned) = (pool.clone(), done.clone(), spawned.clone());
            std::thread::spawn(move || {
                pool.scope(|s| {
                    fn again<'s>(
                        s: &stealpool::Scope<'s>,
                        done: &'s AtomicBool,
                        spawned: &'s AtomicUsize,
                    ) {
                        if !done.load(Ordering::SeqCst) {
                            spawned.fetch_add(1, Ordering::Relaxed);
                            s.spawn(move |s| again(s, done, spawned));
                        }
                    }
                    let _ = started_tx.send(());
                    again(s, &done, &spawned);
                })
            })
        };
        started_rx.recv().unwrap();
        let flag = done.clone();
        pool.spawn(move || flag.store(true, Ordering::SeqCst));
        busy.join().unwrap();
        assert!(spawned.load(Ordering::Relaxed) > 0);
    });
}

/// More nested `join`s on one worker than the private stack has slots (64): the oldest
/// halves are promoted to make room, and every frame still finds its own half. (A
/// breaker run found the first version reading a reused slot here: a debug assertion at
/// depth 65, a job run twice at 66.)
#[test]
fn nesting_deeper_than_the_private_stack() {
    fn rec(depth: usize) -> usize {
        if depth == 0 {
            return 0;
        }
        stealpool::join(|| rec(depth - 1), || ()).0 + 1
    }
    watchdog(60, || {
        for threads in [1, 2] {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for depth in [63, 64, 65, 66, 200] {
                assert_eq!(pool.install(|| rec(depth)), depth);
            }
        }
    });
}

/// `join(a, b)` where `b` waits for a message `a` sends after a nested scope: the scope's
/// wait must run the scope's own job before the enclosing `join`'s `b` (which would
/// block the thread). rayon-core never deadlocks here; the first lazy `join` did, because
/// promoting before a wait put the enclosing half above the scope's job on the deque.
#[test]
fn a_wait_inside_the_first_half_runs_its_own_jobs_before_the_enclosing_half() {
    watchdog(60, || {
        for threads in [1, 2, 3] {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for _ in 0..300 {
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                pool.install(|| {
                    stealpool::join(
                        move || {
                            stealpool::scope(|s| s.spawn(|_| ()));
                            tx.send(()).unwrap();
                        },
                        move || rx.recv().unwrap(),
                    )
                });
            }
        }
    });
}

/// While `current_thread_has_pending_tasks()` says a task is pending (here the private
/// second half), `yield_local` must be able to run it, as in rayon-core: a "help until
/// drained" loop would otherwise spin for ever on a one-thread pool.
#[test]
fn yield_local_runs_a_pending_second_half() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let ran = AtomicBool::new(false);
        pool.install(|| {
            stealpool::join(
                || {
                    while stealpool::current_thread_has_pending_tasks() == Some(true) {
                        stealpool::yield_local();
                    }
                },
                || ran.store(true, Ordering::SeqCst),
            )
        });
        assert!(ran.load(Ordering::SeqCst));
    });
}
