//! Wake-ups under load: pushes, injections and latch sets aimed at workers on their way
//! to sleep (`docs/sleep.md`). The interleavings themselves are forced in the loom
//! models (`loom_sleep.rs`, `loom_latch.rs`); here the real pool meets them at random
//! moments, many times, under a watchdog. Each randomized test counts the rounds whose
//! work woke another worker (`common::wake::another_worker_woke`) and asserts there were
//! some, so that the race it aims at was reached; where a test can force its
//! interleaving (every worker parked first, a job held until a worker parked) it does.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

mod common;

use common::wake::{another_worker_woke, assert_some_woke, Pacer};
use common::work::spin_for;
use common::{pool, wait_parked, watchdog};

/// `join` where `a` blocks on a barrier until `b` runs on the other worker, started each
/// time right after the whole 2-thread pool went to sleep, then paced inside the job
/// (`common::wake::Pacer::pace_in_job`) so that the other worker is often on its way to
/// sleep when `b` is pushed.
#[test]
fn join_with_barrier_after_and_while_the_pool_goes_to_sleep() {
    watchdog(60, || {
        let p = pool(2);
        for _ in 0..100 {
            wait_parked(&p, 2);
            let b = Barrier::new(2);
            p.join(|| b.wait(), || b.wait());
        }
        let mut pacer = Pacer::new(7);
        let (mut paused, mut woke) = (0, 0);
        for _ in 0..1000 {
            let (paused_at_random, other_woke) = another_worker_woke(&p, || {
                let paused_at_random = pacer.pace_in_job(&p, 2);
                let b = Barrier::new(2);
                stealpool::join(|| b.wait(), || b.wait());
                paused_at_random
            });
            if paused_at_random {
                paused += 1;
                woke += usize::from(other_woke);
            }
        }
        assert_some_woke(woke, paused, "joins after random pauses");
    });
}

/// A worker pushes a job on its own deque, paced inside its job
/// (`common::wake::Pacer::pace_in_job`) so that the other worker is often on its way to
/// sleep, then blocks outside the pool until the job ran elsewhere: the push must wake (or
/// be seen by) the parking worker.
#[test]
fn push_while_the_other_worker_parks_is_never_lost() {
    watchdog(60, || {
        let p = pool(2);
        let mut pacer = Pacer::new(11);
        let (mut paused, mut woke) = (0, 0);
        for i in 0..2000 {
            let ((ok, paused_at_random), other_woke) = another_worker_woke(&p, || {
                let paused_at_random = pacer.pace_in_job(&p, 2);
                let (tx, rx) = mpsc::channel();
                stealpool::spawn(move || tx.send(()).unwrap());
                let ok = rx.recv_timeout(Duration::from_secs(5)).is_ok();
                (ok, paused_at_random)
            });
            assert!(ok, "iteration {i}: pushed job never ran (lost wake-up)");
            if paused_at_random {
                paused += 1;
                woke += usize::from(other_woke);
            }
        }
        assert_some_woke(woke, paused, "pushes after random pauses");
    });
}

/// One-thread pool A waits (and parks) for an install into one-thread pool B whose op
/// finishes after a random delay: the cross-pool latch must wake A's worker. Every tenth
/// round forces it: B's op is held until A's worker parked in its wait, and A's worker
/// must then wake.
#[test]
fn cross_pool_latch_wakes_a_parking_worker() {
    watchdog(30, || {
        let a = pool(1);
        let b = Arc::new(pool(1));
        let mut rng = common::work::rng(3);
        for i in 0..1000 {
            let delay = rng.u64(0..100_000);
            let (release, held) = mpsc::channel::<()>();
            let (started, op_started) = mpsc::channel();
            let forced = i % 10 == 0;
            let bb = b.clone();
            let (tx, rx) = mpsc::channel();
            a.spawn(move || {
                bb.install(move || {
                    if forced {
                        started.send(()).unwrap();
                        // Returns once `release` is dropped.
                        let _ = held.recv();
                    }
                    spin_for(delay);
                });
                tx.send(()).unwrap();
            });
            let before = if forced {
                op_started.recv_timeout(Duration::from_secs(5)).unwrap();
                wait_parked(&a, 1);
                Some(a.metrics().total().unparks)
            } else {
                None
            };
            drop(release);
            rx.recv_timeout(Duration::from_secs(5))
                .unwrap_or_else(|_| panic!("iteration {i}: cross-pool wake-up lost"));
            if let Some(before) = before {
                assert!(
                    a.metrics().total().unparks > before,
                    "iteration {i}: A's worker finished its wait without waking from its park"
                );
            }
        }
    });
}

/// Mutual install between two sleeping one-thread pools, from two outside threads at
/// once (A -> B -> A -> B and B -> A -> B -> A): both first installs are running before
/// either goes on (a barrier in each), so each pool's worker waits for the other pool
/// while its own pool gets a job from the other thread.
#[test]
fn mutual_install_between_sleeping_one_thread_pools() {
    watchdog(30, || {
        let a = Arc::new(pool(1));
        let b = Arc::new(pool(1));
        for _ in 0..200 {
            wait_parked(&a, 1);
            wait_parked(&b, 1);
            let both_in = Arc::new(Barrier::new(2));
            let (a1, b1, a2, b2) = (a.clone(), b.clone(), a.clone(), b.clone());
            let (in1, in2) = (both_in.clone(), both_in);
            let t1 = thread::spawn(move || {
                a1.install(|| {
                    in1.wait();
                    b1.install(|| a1.install(|| b1.install(|| 1)))
                })
            });
            let t2 = thread::spawn(move || {
                b2.install(|| {
                    in2.wait();
                    a2.install(|| b2.install(|| a2.install(|| 2)))
                })
            });
            assert_eq!(t1.join().unwrap(), 1);
            assert_eq!(t2.join().unwrap(), 2);
        }
    });
}

/// N outside threads install jobs that wait on one barrier of N into an N-thread pool
/// that is asleep: the injector's batch steal may put all of them on one worker's
/// deque, and the others must still be woken to steal them.
#[test]
fn rendezvous_of_injected_jobs_after_sleep() {
    watchdog(30, || {
        const N: usize = 4;
        let p = Arc::new(pool(N));
        for _ in 0..150 {
            wait_parked(&p, N);
            let bar = Arc::new(Barrier::new(N));
            let go = Arc::new(Barrier::new(N));
            let hs: Vec<_> = (0..N)
                .map(|_| {
                    let (p, bar, go) = (p.clone(), bar.clone(), go.clone());
                    thread::spawn(move || {
                        go.wait();
                        p.install(|| {
                            bar.wait();
                        })
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        }
    });
}

/// Bursts of `spawn` from many outside threads while the workers park; every job runs
/// exactly once.
#[test]
fn injection_bursts_from_many_threads_run_exactly_once() {
    watchdog(30, || {
        let p = Arc::new(pool(2));
        for round in 0..30 {
            if round % 3 == 0 {
                wait_parked(&p, 2);
            }
            let hits: Arc<Vec<AtomicUsize>> =
                Arc::new((0..800).map(|_| AtomicUsize::new(0)).collect());
            let (tx, rx) = mpsc::channel();
            let go = Arc::new(Barrier::new(8));
            let hs: Vec<_> = (0..8)
                .map(|t| {
                    let (p, hits, tx, go) = (p.clone(), hits.clone(), tx.clone(), go.clone());
                    thread::spawn(move || {
                        go.wait();
                        for k in 0..100 {
                            let (hits, tx) = (hits.clone(), tx.clone());
                            p.spawn(move || {
                                hits[t * 100 + k].fetch_add(1, SeqCst);
                                tx.send(()).unwrap();
                            });
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            for _ in 0..800 {
                rx.recv_timeout(Duration::from_secs(5))
                    .unwrap_or_else(|_| panic!("round {round}: an injected job never ran"));
            }
            assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "a job ran twice");
        }
    });
}
