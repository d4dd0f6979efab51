//! Broadcasts against the sleep protocol: every worker must wake for its own job, also
//! when the others race to sleep right after running theirs.

mod common;

use common::{quiet_expected_panics, watchdog, EXPECTED};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use stealpool::ThreadPoolBuilder;

#[test]
fn broadcast_into_a_sleeping_pool_many_times() {
    // Each round: wait until all workers are parked, then broadcast. A lost wake-up of
    // any one worker hangs the broadcast (the watchdog fails the test).
    watchdog(120, || {
        for n in [1, 2, 3, 4] {
            let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
            for round in 0..20 {
                if round % 2 == 0 {
                    common::wait_parked(&pool, n);
                }
                let got = pool.broadcast(|ctx| ctx.index());
                assert_eq!(got, (0..n).collect::<Vec<_>>());
            }
        }
    });
}

#[test]
fn back_to_back_broadcasts_race_with_falling_asleep() {
    // Like rayon-core's broadcast_sleep_race: tiny broadcasts in a tight loop, so that
    // workers that ran their copy go to sleep while others' copies are still queued.
    watchdog(120, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let runs = AtomicUsize::new(0);
        let broadcast = |i: usize| {
            pool.broadcast(|ctx| {
                if ctx.index() == i % 4 {
                    std::hint::black_box((0..200).sum::<u64>());
                }
                runs.fetch_add(1, Ordering::Relaxed);
            })
        };
        // The first broadcast wakes the workers parked since the build; count from after it.
        broadcast(0);
        let before = pool.metrics().total().unparks;
        // The race needs workers that fell asleep between broadcasts: go on past 3000 until
        // some did, and woke (on a loaded machine a run of 3000 may see none). If none ever
        // does, the watchdog fails the test.
        let mut sent = 1;
        while sent < 3000 || pool.metrics().total().unparks == before {
            broadcast(sent);
            sent += 1;
        }
        assert_eq!(runs.load(Ordering::Relaxed), sent * 4);
    });
}

#[test]
fn spawn_broadcast_runs_exactly_once_per_worker() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for _ in 0..50 {
            let s = Arc::clone(&seen);
            pool.spawn_broadcast(move |ctx| s.lock().unwrap().push(ctx.index()));
        }
        pool.wait_idle().unwrap();
        let mut seen = seen.lock().unwrap().clone();
        seen.sort_unstable();
        let expected: Vec<usize> = (0..3).flat_map(|i| std::iter::repeat(i).take(50)).collect();
        assert_eq!(seen, expected);
    });
}

#[test]
fn broadcast_panics_reach_the_caller_after_every_worker_ran() {
    quiet_expected_panics();
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let ran = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.broadcast(|ctx| {
                ran.fetch_add(1, Ordering::SeqCst);
                if ctx.index() % 2 == 1 {
                    panic!("{EXPECTED} broadcast {}", ctx.index());
                }
            })
        }));
        let payload = result.unwrap_err();
        assert_eq!(ran.load(Ordering::SeqCst), 4);
        // The lowest index's panic wins.
        assert_eq!(
            common::payload_str(&*payload),
            Some(&*format!("{EXPECTED} broadcast 1"))
        );
        // The pool still works.
        assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2, 3]);
    });
}

#[test]
fn scope_spawn_broadcast_borrows_and_is_waited_for() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut hits = [0usize; 3];
        let cells: Vec<Mutex<&mut usize>> = hits.iter_mut().map(Mutex::new).collect();
        pool.scope(|s| {
            s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 1);
        });
        pool.scope_fifo(|s| {
            s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 10);
        });
        drop(cells);
        assert_eq!(hits, [11, 11, 11]);
    });
}
