//! The lazy `join` (docs/join.md): second halves stay private until someone can take
//! them. These tests pin what that must not change: a half some other worker has to run
//! still gets run (promotion, rescue), work from outside still starts between top-level
//! jobs that keep the deque full (fair injection), and `migrated()` stays exact. Every body runs
//! under a watchdog: the failure mode of each is a hang.

mod common;

use common::watchdog;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use stealpool::ThreadPoolBuilder;

/// A `join` whose first half waits for the second, made while the only other worker is
/// busy: the second half stays private at the `join`, and must be *rescued* when the
/// other worker comes free (the first half never calls into the pool again).
///
/// Each round forces that order on a two-worker pool. A spawned job occupies one worker
/// (its start is awaited) and spins until the first half has started; the `install`
/// that makes the `join` then runs on the other one. At the `join`'s poll no worker is
/// idle, so nothing is promoted, and the first half blocks on a barrier that only the
/// second half reaches: the second half leaves the private stack only by a rescue, taken
/// by the spinner's worker once the spin ends. It is the only job in any queue besides
/// the two injected ones, so each round asserts at least one rescue and no steal.
#[test]
fn a_blocked_first_half_gets_its_second_half_rescued() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for round in 0..50 {
            let joined = Arc::new(AtomicBool::new(false));
            let barrier = Barrier::new(2);
            let (started_tx, started_rx) = mpsc::channel();
            {
                let joined = Arc::clone(&joined);
                pool.spawn(move || {
                    started_tx.send(()).unwrap();
                    while !joined.load(Ordering::SeqCst) {
                        std::hint::spin_loop();
                    }
                });
            }
            started_rx.recv().unwrap();
            let before = pool.metrics().total();
            let (a, b) = pool.install(|| {
                stealpool::join_context(
                    |ctx| {
                        joined.store(true, Ordering::SeqCst);
                        barrier.wait();
                        ctx.migrated()
                    },
                    |ctx| {
                        barrier.wait();
                        ctx.migrated()
                    },
                )
            });
            let after = pool.metrics().total();
            assert!(!a, "the first half runs on the caller");
            assert!(b, "the second half ran on the other worker");
            let (rescues, steals) = (after.rescues - before.rescues, after.steals - before.steals);
            assert!(
                rescues >= 1 && steals == 0,
                "round {round}: {rescues} rescues and {steals} steals for a private second \
                 half whose owner blocks"
            );
        }
    });
}

/// A one-worker pool whose top-level jobs keep its deque full (each spawns the next):
/// between two of them the worker takes an injected job now and then, so the outside
/// `spawn` that ends the chain starts (rayon-core pops its own deque first and never
/// would; rayon issue 1054). Inside a job the worker never does this
/// (`tests/reentrancy.rs`).
#[test]
fn injected_work_starts_between_top_level_jobs_that_keep_the_deque_full() {
    watchdog(60, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let chained = Arc::new(AtomicUsize::new(0));
        fn next(done: Arc<AtomicBool>, chained: Arc<AtomicUsize>) {
            if !done.load(Ordering::SeqCst) {
                chained.fetch_add(1, Ordering::SeqCst);
                // On the worker: a push to its own deque, popped by its main loop.
                stealpool::spawn(move || next(done, chained));
            }
        }
        {
            let (done, chained) = (done.clone(), chained.clone());
            pool.spawn(move || next(done, chained));
        }
        // The chain runs on its own: wait until it did for a while, then inject.
        assert!(common::wait_until(
            std::time::Duration::from_secs(30),
            || chained.load(Ordering::SeqCst) > 1000
        ));
        let (flag, at_start) = (done.clone(), Arc::new(AtomicUsize::new(0)));
        {
            let (chained, at_start) = (chained.clone(), at_start.clone());
            pool.spawn(move || {
                at_start.store(chained.load(Ordering::SeqCst), Ordering::SeqCst);
                flag.store(true, Ordering::SeqCst);
            });
        }
        // Read after the job was queued: at most one chain job was running then.
        let queued_at = chained.load(Ordering::SeqCst);
        // The chain never ends by itself: the flag is set only by the injected job.
        assert!(
            common::wait_until(std::time::Duration::from_secs(30), || done
                .load(Ordering::SeqCst)),
            "the injected job never started"
        );
        // The fair look comes every 61 local pops (the one running at the spawn aside).
        let overtaken = at_start.load(Ordering::SeqCst) - queued_at;
        assert!(
            overtaken <= 61 + 1,
            "{overtaken} local jobs ran before the injected one"
        );
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
