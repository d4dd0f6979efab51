//! Deferred count-downs (`src/pool/worker/deferred.rs`): a worker that runs several jobs of
//! one scope reports their completions to the scope once. A deferred count keeps its scope
//! from completing, so it must be delivered before the worker runs anything that could wait
//! for that scope. Each test builds one way to wait for it, on a one-thread pool where the
//! order of jobs is fixed, and hangs (the watchdog fails it) if the count stays deferred.
//!
//! The shape of each: an outside thread `T` opens an `in_place_scope` on the pool and
//! spawns a job `a` into it, so `T` blocks until the worker has run `a` *and* delivered
//! its count. Then the worker gets something that waits for `T` to return. Each test was
//! checked to hang with its delivery point removed.

mod common;

use common::watchdog;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

fn one_thread_pool() -> Arc<ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap())
}

/// Starts `T`: an `in_place_scope` on `pool` from outside, with one spawned job that runs
/// `a` and returns. Returns once the job is injected, and a receiver that gets a message
/// when `T`'s scope has returned.
fn outside_scope(pool: &Arc<ThreadPool>, a: impl FnOnce() + Send + 'static) -> Receiver<()> {
    let (spawned_tx, spawned_rx) = channel();
    let (done_tx, done_rx) = channel();
    let pool = Arc::clone(pool);
    thread::spawn(move || {
        pool.in_place_scope(|s| {
            s.spawn(move |_| a());
            spawned_tx.send(()).unwrap();
        });
        done_tx.send(()).unwrap();
    });
    spawned_rx.recv().unwrap();
    done_rx
}

/// `a` spawns, on the worker's own deque, a plain `spawn` job that waits for `T`'s scope:
/// the count of `a` must be delivered before the worker runs that job next.
#[test]
fn a_count_is_delivered_before_a_job_that_is_not_a_scope_job() {
    watchdog(20, || {
        let pool = one_thread_pool();
        let (done_tx, done_rx) = channel::<()>();
        let (finished_tx, finished_rx) = channel();
        let t_done = outside_scope(&pool, move || {
            stealpool::spawn(move || {
                done_rx.recv().unwrap();
                finished_tx.send(()).unwrap();
            })
        });
        t_done.recv().unwrap();
        done_tx.send(()).unwrap();
        finished_rx.recv().unwrap();
    });
}

/// A job of `T`'s scope pushes, on the worker's own deque, a job `b` of an enclosing
/// scope that waits for `T`'s scope to return, then `a`, another job of `T`'s scope. The
/// worker runs `a`, then `b`: the counts of `T`'s scope must be delivered before `b`, a
/// job of another scope, starts.
#[test]
fn a_count_is_delivered_before_a_job_of_another_scope() {
    watchdog(20, || {
        let pool = one_thread_pool();
        let (inner_done_tx, inner_done_rx) = channel::<()>();
        pool.in_place_scope(|outer| {
            pool.in_place_scope(|inner| {
                inner.spawn(move |inner| {
                    outer.spawn(move |_| inner_done_rx.recv().unwrap());
                    inner.spawn(|_| ());
                });
            });
            inner_done_tx.send(()).unwrap();
        });
    });
}

/// The worker runs `a` inside a wait (a job of this pool waiting for an `install` on
/// another pool), and the code after the wait waits for `T`'s scope: the count must be
/// delivered before the wait returns to its caller.
#[test]
fn a_count_is_delivered_before_a_wait_returns() {
    watchdog(20, || {
        let pool = one_thread_pool();
        let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let (gate_tx, gate_rx) = channel::<()>();
        let (waiting_tx, waiting_rx) = channel();
        let (t_done_tx, t_done_rx) = channel::<Receiver<()>>();
        let (finished_tx, finished_rx) = channel();
        pool.spawn(move || {
            waiting_tx.send(()).unwrap();
            // The only worker waits here, running this pool's jobs: `a` among them.
            other.install(move || gate_rx.recv().unwrap());
            t_done_rx.recv().unwrap().recv().unwrap();
            finished_tx.send(()).unwrap();
        });
        waiting_rx.recv().unwrap();
        let (a_ran_tx, a_ran_rx) = channel();
        let t_done = outside_scope(&pool, move || a_ran_tx.send(()).unwrap());
        a_ran_rx.recv().unwrap();
        t_done_tx.send(t_done).unwrap();
        gate_tx.send(()).unwrap();
        finished_rx.recv().unwrap();
    });
}

/// Many scope jobs stolen in batches by another worker: every scope still completes with
/// every job run once (the deferred counts all arrive), including when jobs panic.
///
/// With more than one worker the theft is forced: the scope's body, after spawning, blocks
/// (in its own code, so its worker runs none of the jobs it pushed on its deque) until a
/// job reports running on another worker. That job was stolen, so each round asserts
/// that the pool's `steals` went up.
#[test]
fn batched_counts_add_up_with_thieves_and_panics() {
    watchdog(60, || {
        for threads in [1, 2, 3] {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for round in 0..50 {
                let runs = AtomicUsize::new(0);
                let stolen = AtomicBool::new(false);
                let stolen_latch = common::Countdown::new(1);
                let steals_before = pool.metrics().total().steals;
                let result = panic::catch_unwind(AssertUnwindSafe(|| {
                    pool.scope(|s| {
                        let body = stealpool::current_thread_index();
                        for i in 0..2_000 {
                            let (runs, stolen, stolen_latch) = (&runs, &stolen, &stolen_latch);
                            s.spawn(move |s| {
                                if stealpool::current_thread_index() != body
                                    && !stolen.swap(true, Ordering::SeqCst)
                                {
                                    stolen_latch.count_down();
                                }
                                runs.fetch_add(1, Ordering::Relaxed);
                                if i % 500 == 0 {
                                    // Nested spawns count too.
                                    s.spawn(move |_| {
                                        runs.fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                                if round % 10 == 0 && i == 1_234 {
                                    panic!("job panics");
                                }
                            });
                        }
                        if threads > 1 {
                            assert_eq!(
                                stolen_latch.wait(Duration::from_secs(10)),
                                0,
                                "no job ran on another worker while the body blocked"
                            );
                        }
                    })
                }));
                assert_eq!(result.is_err(), round % 10 == 0);
                assert_eq!(runs.into_inner(), 2_004);
                if threads > 1 {
                    let steals = pool.metrics().total().steals - steals_before;
                    assert!(steals > 0, "round {round}: a job ran on a thief, 0 steals");
                }
            }
        }
    });
}
