//! `ThreadPoolBuilder::use_current_thread`: the building thread becomes worker 0 for life.
//! These pin the faults a breaker found around that thread: it must not be adopted by a
//! pool that `build_global` threw away, and pools it keeps using after their handle is
//! gone must neither hang nor lose jobs.
//!
//! Only `build_global_race_does_not_adopt_the_loser` touches the global pool (this binary
//! is its own process, so the global pool does not exist before that test).

mod common;

use common::watchdog;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;
use stealpool::ThreadPoolBuilder;

/// How long a test waits for an event that must happen (a job starting).
const WAIT: Duration = Duration::from_secs(10);

/// Makes the calling thread worker 0 of a new `use_current_thread` pool of `n` workers,
/// spawns one job that blocks (on another worker) until the returned sender sends, and
/// drops the pool handle: that job then holds the pool's last terminate reference, so the
/// pool terminates the moment it is released.
fn handleless_pool_with_running_spawn(n: usize) -> Sender<()> {
    let pool = ThreadPoolBuilder::new()
        .num_threads(n)
        .use_current_thread()
        .build()
        .unwrap();
    let (started_tx, started_rx) = channel();
    let (release_tx, release_rx) = channel::<()>();
    pool.spawn(move || {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    started_rx.recv().unwrap();
    drop(pool);
    release_tx
}

/// Builds a `use_current_thread` pool on the calling thread and checks that the thread
/// became its worker 0: nothing left it a worker of another pool.
fn assert_becomes_worker_0_of_a_new_pool() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    assert_eq!(pool.current_thread_index(), Some(0));
}

#[test]
fn build_global_race_does_not_adopt_the_loser() {
    watchdog(60, || {
        thread::spawn(|| {
            // The thread_name closure builds the default global pool first (a free
            // function), so this `build_global` loses and its registry is thrown away.
            let err = ThreadPoolBuilder::new()
                .num_threads(2)
                .use_current_thread()
                .thread_name(|i| {
                    let _ = stealpool::current_num_threads();
                    format!("loser-{i}")
                })
                .build_global()
                .unwrap_err();
            assert!(
                err.to_string().contains("already been initialized"),
                "{err}"
            );
            // The thread is not a worker of the discarded pool.
            assert_eq!(stealpool::current_thread_index(), None);
            let (tx, rx) = channel();
            stealpool::spawn(move || tx.send(stealpool::current_thread_index()).unwrap());
            assert!(
                rx.recv().unwrap().is_some(),
                "spawn ran inline, not on the global pool"
            );
            // And it can still become worker 0 of a pool of its own.
            assert_becomes_worker_0_of_a_new_pool();
        })
        .join()
        .unwrap();
    });
}

#[test]
fn broadcast_keeps_a_handleless_pool_alive_until_every_copy_ran() {
    watchdog(60, || {
        thread::spawn(|| {
            // The spawned job's reference is released from worker 0's broadcast copy,
            // mid-broadcast.
            let release_tx = handleless_pool_with_running_spawn(3);
            let release_tx = std::sync::Mutex::new(Some(release_tx));
            let got = stealpool::broadcast(|ctx| {
                if ctx.index() == 0 {
                    // The spawn finishes now; without the broadcast's own reference the
                    // pool would terminate here and strand the other copies.
                    release_tx.lock().unwrap().take().unwrap().send(()).unwrap();
                }
                ctx.index()
            });
            assert_eq!(got, [0, 1, 2]);
        })
        .join()
        .unwrap();
    });
}

#[test]
fn scope_broadcast_into_a_terminated_pool_panics_instead_of_hanging() {
    watchdog(60, || {
        thread::spawn(|| {
            let pool = ThreadPoolBuilder::new()
                .num_threads(2)
                .use_current_thread()
                .build()
                .unwrap();
            pool.shutdown().unwrap();
            let result = std::panic::catch_unwind(|| {
                stealpool::scope(|s| s.spawn_broadcast(|_, _| ()));
            });
            assert!(result.is_err());
            let result = std::panic::catch_unwind(|| stealpool::spawn_broadcast(|_| ()));
            assert!(result.is_err());
            // Plain scopes still work on the thread alone.
            let hits = AtomicUsize::new(0);
            stealpool::scope(|s| {
                for _ in 0..10 {
                    s.spawn(|_| {
                        hits.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
            assert_eq!(hits.load(Ordering::SeqCst), 10);
        })
        .join()
        .unwrap();
    });
}

#[test]
fn workers_that_terminate_under_a_running_scope_leave_no_job_behind() {
    // The building thread's scope has a job J whose children sit in J's worker's deque
    // when the pool terminates (its last reference is released meanwhile). That worker
    // must not exit (or, in debug builds, abort) with them queued: every child runs.
    watchdog(60, || {
        thread::spawn(|| {
            let release_tx = handleless_pool_with_running_spawn(3);
            let ran = Arc::new(AtomicUsize::new(0));
            let (pushed_tx, pushed_rx) = channel();
            let (finish_tx, finish_rx) = channel::<()>();
            stealpool::in_place_scope(|s| {
                let ran = Arc::clone(&ran);
                s.spawn(move |s| {
                    for _ in 0..10 {
                        let ran = Arc::clone(&ran);
                        s.spawn(move |_| {
                            ran.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                    pushed_tx.send(()).unwrap();
                    finish_rx.recv().unwrap();
                });
                // In the body (blocking in user code, not in the pool): let the pool
                // terminate while J's children are queued, then let J return.
                pushed_rx.recv().unwrap();
                release_tx.send(()).unwrap();
                finish_tx.send(()).unwrap();
            });
            assert_eq!(ran.load(Ordering::SeqCst), 10);
        })
        .join()
        .unwrap();
    });
}

/// The building thread queues `spawn_fifo` jobs, hands the pool to another thread and
/// exits: its worker state is freed with the thread, but the stubs on its deque still
/// point at its FIFO, and the other workers steal and run them. The FIFO must outlive the
/// thread (it lives in the registry). Before that fix: a use-after-free (segfault, a lost
/// job, or "FIFO stub executed with an empty FIFO"; valgrind: invalid read in
/// `JobFifo::execute`), found by the breaker helper.
///
/// The order is forced: the building thread is worker 0 and runs no job while it is in
/// its own code, and workers 1 and 2 each run a job (stolen from worker 0's deque) that
/// blocks on a gate, both confirmed started before the FIFO jobs are queued. So none of
/// them runs before the building thread has exited (asserted), and all of them run after
/// the gate opens, on workers 1 and 2.
#[test]
fn fifo_jobs_queued_by_a_building_thread_that_exits_still_run() {
    watchdog(60, || {
        for _ in 0..50 {
            let ran = Arc::new(AtomicUsize::new(0));
            // The two blockers and the test thread.
            let gate = Arc::new(Barrier::new(3));
            let blocking = common::Countdown::new(2);
            let pool = {
                let (ran, gate, blocking) =
                    (Arc::clone(&ran), Arc::clone(&gate), Arc::clone(&blocking));
                thread::spawn(move || {
                    let pool = ThreadPoolBuilder::new()
                        .num_threads(3)
                        .use_current_thread()
                        .build()
                        .unwrap();
                    assert_eq!(pool.current_thread_index(), Some(0));
                    for _ in 0..2 {
                        let (gate, blocking) = (Arc::clone(&gate), Arc::clone(&blocking));
                        pool.spawn(move || {
                            blocking.count_down();
                            gate.wait();
                        });
                    }
                    assert_eq!(
                        blocking.wait(WAIT),
                        0,
                        "workers 1 and 2 never took the blockers"
                    );
                    for _ in 0..20 {
                        let ran = Arc::clone(&ran);
                        pool.spawn_fifo(move || {
                            ran.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                    pool
                })
                .join()
                .unwrap()
            };
            assert_eq!(
                ran.load(Ordering::SeqCst),
                0,
                "a FIFO job ran before the building thread exited"
            );
            gate.wait();
            pool.wait_idle().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 20);
        }
    });
}

/// The message of a build refused because the thread already is (or is becoming) a worker.
const ALREADY_IN_POOL: &str = "The current thread is already part of another thread pool.";

/// User code that runs while a `use_current_thread` pool is built on this thread (its
/// spawn handler, its `thread_name` closure) tries to make the thread worker 0 of another
/// pool first. As on rayon-core, which adopts the thread before it starts the other
/// workers, that inner build fails and the outer one succeeds; the thread used to become
/// the inner pool's worker, which made the outer build panic (and abort, in a debug
/// build) and left the inner pool without its worker 0.
#[test]
fn user_code_in_a_use_current_thread_build_cannot_adopt_the_thread_first() {
    watchdog(60, || {
        for through_thread_name in [false, true] {
            thread::spawn(move || {
                let inner_errors = Arc::new(std::sync::Mutex::new(Vec::new()));
                let try_inner = {
                    let inner_errors = Arc::clone(&inner_errors);
                    move || {
                        let inner = ThreadPoolBuilder::new()
                            .num_threads(1)
                            .use_current_thread()
                            .build();
                        inner_errors
                            .lock()
                            .unwrap()
                            .push(inner.map(drop).map_err(|e| e.to_string()));
                    }
                };
                let builder = ThreadPoolBuilder::new().num_threads(3).use_current_thread();
                let outer = if through_thread_name {
                    builder
                        .thread_name(move |i| {
                            try_inner();
                            format!("outer-{i}")
                        })
                        .build()
                } else {
                    builder
                        .spawn_handler(move |t| {
                            try_inner();
                            thread::Builder::new().spawn(move || t.run()).map(drop)
                        })
                        .build()
                }
                .unwrap();
                let errors = inner_errors.lock().unwrap().clone();
                assert!(!errors.is_empty(), "the user code did not run");
                for inner in errors {
                    assert_eq!(inner, Err(ALREADY_IN_POOL.to_string()));
                }
                assert_eq!(outer.current_thread_index(), Some(0));
                assert_eq!(outer.broadcast(|ctx| ctx.index()), [0, 1, 2]);
                assert_eq!(outer.install(|| stealpool::join(|| 1, || 2)), (1, 2));
            })
            .join()
            .unwrap();
        }
    });
}

/// A spawn handler that runs a worker's body on the building thread of a
/// `use_current_thread` pool (instead of a new thread) panics, as on rayon-core; the
/// threads already started exit, and the thread can still build a pool of its own.
#[test]
fn a_spawn_handler_cannot_run_a_worker_on_the_adopting_thread() {
    watchdog(60, || {
        thread::spawn(|| {
            let exits = Arc::new(AtomicUsize::new(0));
            let exits_in_pool = Arc::clone(&exits);
            let started = Arc::new(AtomicUsize::new(0));
            let started_in_handler = Arc::clone(&started);
            let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ThreadPoolBuilder::new()
                    .num_threads(3)
                    .use_current_thread()
                    .exit_handler(move |_| {
                        exits_in_pool.fetch_add(1, Ordering::SeqCst);
                    })
                    .spawn_handler(move |t| {
                        if t.index() == 2 {
                            t.run(); // on this very thread: refused
                        } else {
                            started_in_handler.fetch_add(1, Ordering::SeqCst);
                            thread::Builder::new().spawn(move || t.run())?;
                        }
                        Ok(())
                    })
                    .build()
            }))
            .expect_err("the build ran a worker on the adopting thread");
            let message = common::payload_str(&*panic).unwrap_or_default().to_string();
            assert!(message.contains("already a pool worker"), "{message}");
            assert!(common::wait_until(WAIT, || {
                exits.load(Ordering::SeqCst) == started.load(Ordering::SeqCst)
            }));
            assert_eq!(started.load(Ordering::SeqCst), 1);
            assert_eq!(stealpool::current_thread_index(), None);
            assert_becomes_worker_0_of_a_new_pool();
        })
        .join()
        .unwrap();
    });
}
