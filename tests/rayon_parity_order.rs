//! The order in which a worker takes jobs, against rayon-core 1.13 (`docs/guarantees.md`,
//! "Where a worker runs other jobs"): outside `spawn` and `spawn_fifo` on a one-thread
//! pool, a broadcast queued while a job runs or made inside `join`, how many jobs
//! `yield_now` takes, `current_thread_has_pending_tasks`, and the order of scope jobs and
//! of a worker's own spawns.
//!
//! rayon-core's search (`WorkerThread::find_work`) takes the worker's own deque (LIFO,
//! with `spawn_fifo` jobs in FIFO order), then its own broadcast queue, then steals one
//! job from another worker, and only then pops one job from the front of the injector;
//! a wait searches the same way. stealpool's steals take batches, whose rest waits in a
//! batch queue that is not the own deque, so these orders stay rayon-core's. Every scenario is written once and runs on both crates
//! (`common::parity`): `sp::*` on stealpool, `rc::*` on rayon-core.
//!
//! Two orders are deliberately not rayon-core's and are not checked here (`docs/rayon-core.md`,
//! "Differences from rayon-core"): between top-level jobs of a worker whose deque stays
//! full, stealpool's scheduling loop takes one injected job every 61 local ones, where
//! rayon-core runs the local jobs first (`tests/lazy_join.rs:
//! injected_work_starts_between_top_level_jobs_that_keep_the_deque_full` checks it); and
//! its search takes the injector before other workers' deques, where rayon-core steals
//! first (`tests/rayon_core_api/yield_.rs: yield_now_takes_injected_jobs_before_stealing`).

mod common;

use common::parity::{expect, on_both_crates, recv, repeat, Log};
use std::sync::{mpsc, Arc, Mutex};

/// Runs per scenario. Every job a scenario checks is queued while the worker that could
/// take it is held (in `occupy` or on a channel), or by the job whose wait or yield then
/// takes it, so the outcome does not depend on timing and a regression fails the first
/// run. The repetitions cover what does vary, the state a fresh pool's workers are in
/// (starting, spinning, parked) when the first job arrives. A run takes about a
/// millisecond: both files together take about 1.5 s in a debug build on two cores.
const RUNS: usize = 100;
/// Watchdog per run, in seconds; a healthy run takes milliseconds.
const SECS: u64 = 10;

/// The first position where `order` is not `0, 1, 2, ...`, with its neighbourhood.
fn out_of_order(order: &[usize]) -> Result<(), String> {
    match order.iter().enumerate().find(|&(pos, &i)| pos != i) {
        None => Ok(()),
        Some((pos, &i)) => Err(format!(
            "job {i} ran at position {pos}: {:?}",
            &order[pos.saturating_sub(2)..(pos + 3).min(order.len())]
        )),
    }
}

macro_rules! scenarios {
    () => {
        /// `N` jobs spawned from outside a one-thread pool whose worker is held until all
        /// are queued: rayon-core's worker pops the injector's front job each time, so
        /// they run in the order spawned. `N` is long enough that a worker moving several
        /// injected jobs at once onto its deque, or taking one out of turn, shows.
        fn outside_spawns_in_order(fifo: bool) -> Result<(), String> {
            const N: usize = 300;
            let pool = pool(1);
            let gate = occupy(&pool);
            let order = Arc::new(Mutex::new(Vec::with_capacity(N)));
            let (done_tx, done_rx) = mpsc::channel::<()>();
            for i in 0..N {
                let (order, done) = (order.clone(), done_tx.clone());
                let job = move || {
                    order.lock().unwrap().push(i);
                    done.send(()).unwrap();
                };
                if fifo {
                    pool.spawn_fifo(job)
                } else {
                    pool.spawn(job)
                }
            }
            gate.send(()).unwrap();
            for _ in 0..N {
                recv(&done_rx);
            }
            let order = order.lock().unwrap();
            out_of_order(&order)
        }

        #[test]
        fn outside_spawns_run_in_spawn_order_on_a_one_thread_pool() {
            repeat(RUNS, SECS, || outside_spawns_in_order(false));
        }

        #[test]
        fn outside_spawn_fifos_run_in_spawn_order_on_a_one_thread_pool() {
            repeat(RUNS, SECS, || outside_spawns_in_order(true));
        }

        /// A job taken from the injector, with more injected jobs behind it: its worker
        /// has no pending task, since rayon-core counts only the own deque.
        #[test]
        fn an_injected_job_has_no_pending_tasks_while_more_are_injected() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let gate = occupy(&pool);
                let (tx, rx) = mpsc::channel();
                pool.spawn(move || tx.send(rp::current_thread_has_pending_tasks()).unwrap());
                for _ in 0..10 {
                    pool.spawn(|| ());
                }
                gate.send(()).unwrap();
                expect("current_thread_has_pending_tasks()", recv(&rx), Some(false))
            });
        }

        /// A broadcast queued while injected job `I1` runs, with `I2` and `I3` injected
        /// before it: when `I1` ends the own deque is empty and the own broadcast queue
        /// comes before the injector, so `B` runs second.
        #[test]
        fn a_broadcast_queued_during_an_injected_job_runs_next() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let gate = occupy(&pool);
                let log = Log::default();
                let (started_tx, started_rx) = mpsc::channel::<()>();
                let (go_tx, go_rx) = mpsc::channel::<()>();
                let (done_tx, done_rx) = mpsc::channel::<()>();
                let first = log.clone();
                pool.spawn(move || {
                    started_tx.send(()).unwrap();
                    recv(&go_rx);
                    first.push("I1");
                });
                for name in ["I2", "I3"] {
                    let (log, done) = (log.clone(), done_tx.clone());
                    pool.spawn(move || {
                        log.push(name);
                        done.send(()).unwrap();
                    });
                }
                gate.send(()).unwrap();
                recv(&started_rx);
                let (broadcast, done) = (log.clone(), done_tx.clone());
                pool.spawn_broadcast(move |_| {
                    broadcast.push("B");
                    done.send(()).unwrap();
                });
                go_tx.send(()).unwrap();
                for _ in 0..3 {
                    recv(&done_rx);
                }
                expect("the order", log.events(), ["I1", "B", "I2", "I3"])
            });
        }

        /// `broadcast` inside `a` on a one-thread pool: its wait pops the own deque first,
        /// where `b` is, then runs the worker's own copy.
        #[test]
        fn a_broadcast_inside_a_runs_b_then_its_copy() {
            repeat(RUNS, SECS, || {
                let log = Log::default();
                pool(1).install(|| {
                    rp::join(
                        || {
                            rp::broadcast(|_| log.push("broadcast"));
                            log.push("a");
                        },
                        || log.push("b"),
                    )
                });
                expect("the order", log.events(), ["b", "broadcast", "a"])
            });
        }

        /// `yield_now` in an injected job of a one-thread pool with ten more injected runs
        /// one of them and leaves the others in the injector: afterwards the worker has no
        /// pending task and `yield_local` finds nothing.
        #[test]
        fn yield_now_takes_one_injected_job() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let gate = occupy(&pool);
                let (tx, rx) = mpsc::channel();
                pool.spawn(move || {
                    let now = rp::yield_now();
                    let pending = rp::current_thread_has_pending_tasks();
                    let local = rp::yield_local();
                    tx.send(format!("{now:?} {pending:?} {local:?}")).unwrap();
                });
                for _ in 0..10 {
                    pool.spawn(|| ());
                }
                gate.send(()).unwrap();
                expect("yields", recv(&rx), "Some(Executed) Some(false) Some(Idle)")
            });
        }

        /// Runs `worker1` on worker 1 of a two-thread pool, then `between` on the test
        /// thread, then `worker0` on worker 0, and returns what `worker0` reported. Both
        /// workers are inside one broadcast before `worker1` starts, and worker 1 stays
        /// there, blocked on a channel (stealing nothing), until `worker0` has returned.
        fn on_two_workers<W1, W0>(
            worker1: W1,
            between: impl FnOnce(&rp::ThreadPool),
            worker0: W0,
        ) -> String
        where
            W1: FnOnce() + Send + 'static,
            W0: FnOnce() -> String + Send + 'static,
        {
            let pool = pool(2);
            let (inside_tx, inside_rx) = mpsc::channel::<()>();
            let (placed_tx, placed_rx) = mpsc::channel::<()>();
            let (go_tx, go_rx) = mpsc::channel::<()>();
            let (result_tx, result_rx) = mpsc::channel();
            let (release_tx, release_rx) = mpsc::channel::<()>();
            let one = Mutex::new(Some((worker1, inside_rx, placed_tx, release_rx)));
            let zero = Mutex::new(Some((worker0, inside_tx, go_rx, result_tx)));
            pool.spawn_broadcast(move |ctx| {
                if ctx.index() == 1 {
                    let (worker1, inside, placed, release) = one.lock().unwrap().take().unwrap();
                    recv(&inside);
                    worker1();
                    placed.send(()).unwrap();
                    let _ = release.recv();
                } else {
                    let (worker0, inside, go, result) = zero.lock().unwrap().take().unwrap();
                    inside.send(()).unwrap();
                    recv(&go);
                    result.send(worker0()).unwrap();
                }
            });
            recv(&placed_rx);
            between(&pool);
            go_tx.send(()).unwrap();
            let got = recv(&result_rx);
            drop(release_tx);
            got
        }

        /// `yield_now` on worker 0 while worker 1's deque holds eight jobs: rayon-core
        /// steals one job, so a `yield_local` right after finds nothing of its own.
        #[test]
        fn yield_now_steals_one_job() {
            repeat(RUNS, SECS, || {
                let got = on_two_workers(
                    || (0..8).for_each(|_| rp::spawn(|| ())),
                    |_| (),
                    || format!("{:?} {:?}", rp::yield_now(), rp::yield_local()),
                );
                expect("yields", got, "Some(Executed) Some(Idle)")
            });
        }

        /// `scope_fifo` on a one-thread pool: its jobs run in the order spawned, and the
        /// jobs they spawn after them, in order too; a global `spawn_fifo` made in the
        /// scope (whose place is not checked) does not reorder them.
        #[test]
        fn scope_fifo_jobs_run_in_spawn_order_on_one_thread() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let log = Log::default();
                pool.install(|| {
                    rp::scope_fifo(|s| {
                        for i in 0..3 {
                            let log = &log;
                            s.spawn_fifo(move |s| {
                                log.push(format!("f{i}"));
                                s.spawn_fifo(move |_| log.push(format!("g{i}")));
                            });
                        }
                        let global = log.clone();
                        rp::spawn_fifo(move || global.push("global"));
                    })
                });
                // Runs the global job if the worker has not yet.
                pool.install(|| while rp::yield_local() == Some(rp::Yield::Executed) {});
                let mut got = log.events();
                got.retain(|event| event != "global");
                expect("the order", got, ["f0", "f1", "f2", "g0", "g1", "g2"])
            });
        }

        /// A job of a one-thread pool: an `in_place_scope` runs its spawns last-in first
        /// out; then the job's own `spawn`s (LIFO) and `spawn_fifo`s (FIFO, pushed last so
        /// they come first) run after it, from its deque.
        #[test]
        fn a_workers_own_spawns_run_lifo_and_its_spawn_fifos_fifo() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let log = Log::default();
                let (done_tx, done_rx) = mpsc::channel::<()>();
                let job_log = log.clone();
                pool.spawn(move || {
                    let log = job_log;
                    rp::in_place_scope(|s| {
                        for i in 0..3 {
                            let log = &log;
                            s.spawn(move |_| log.push(format!("s{i}")));
                        }
                    });
                    for (name, fifo) in [("L", false), ("F", true)] {
                        for i in 0..3 {
                            let (log, done) = (log.clone(), done_tx.clone());
                            let job = move || {
                                log.push(format!("{name}{i}"));
                                done.send(()).unwrap();
                            };
                            if fifo {
                                rp::spawn_fifo(job)
                            } else {
                                rp::spawn(job)
                            }
                        }
                    }
                });
                for _ in 0..6 {
                    recv(&done_rx);
                }
                let want = ["s2", "s1", "s0", "F0", "F1", "F2", "L2", "L1", "L0"];
                expect("the order", log.events(), want)
            });
        }
    };
}

on_both_crates!(scenarios);
