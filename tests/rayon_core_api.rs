//! rayon-core 1.13's public API, item by item, used *only* through the alias
//! below: if this file compiles and passes, code written against rayon-core
//! that uses these items switches to stealpool by changing one `use` line.
//!
//! Every test asserts behaviour (values, indices, counts, exact orders), not
//! just that a call compiles. Bounds are exercised too: where rayon-core does
//! not require `Send` or `'static` (the `in_place_scope` body, the
//! `thread_name` and `spawn_handler` closures, `build_scoped`'s `with_pool`),
//! the tests pass closures that are not `Send` or that borrow locals.
//!
//! The expected sequences of the ordering tests are rayon-core's own (its
//! `spawn/test.rs`, `scope/test.rs` and `thread_pool/test.rs`); the code is
//! written anew.
//!
//! The global pool is per process: the only test that calls `build_global`
//! (and the deprecated `initialize`) first makes sure the global pool exists,
//! so both must fail. Every other test uses dedicated pools, or the lazily
//! built global pool through the free functions.

use stealpool as rayon_core;

mod common;

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::error::Error;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use common::{payload_str, quiet_expected_panics, watchdog, Tally, EXPECTED};
use rayon_core::{ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield};

/// Watchdog limit for one test body (the machine may be busy compiling).
const TIMEOUT: u64 = 60;
/// How long a test waits for an event that must happen (a handler call, a
/// message from a job).
const WAIT: Duration = Duration::from_secs(10);

const ALREADY_IN_POOL: &str = "The current thread is already part of another thread pool.";
const GLOBAL_ALREADY_INITIALIZED: &str = "The global thread pool has already been initialized.";

fn pool(num_threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(num_threads)
        .build()
        .expect("building a pool failed")
}

/// Runs `f`, returning its value or the text of its panic.
fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_text(&*payload))
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload_str(payload)
        .unwrap_or("<non-string panic payload>")
        .to_owned()
}

/// A deliberate panic message (silenced by the quiet hook).
fn expected(what: &str) -> String {
    format!("{EXPECTED} {what}")
}

// ---------------------------------------------------------------------------
// join, join_context, FnContext
// ---------------------------------------------------------------------------

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon_core::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

#[test]
fn join_returns_both_results() {
    watchdog(TIMEOUT, || {
        // Outside any pool: both halves run on workers of the global pool.
        let (a, b) = rayon_core::join(
            rayon_core::current_thread_index,
            rayon_core::current_thread_index,
        );
        let n = rayon_core::current_num_threads();
        assert!(matches!(a, Some(i) if i < n), "{a:?}");
        assert!(matches!(b, Some(i) if i < n), "{b:?}");
        assert_eq!(fib(15), 610);

        let pool = pool(3);
        let (x, y) = pool.install(|| rayon_core::join(|| 6 * 7, || "b".to_owned()));
        assert_eq!((x, y.as_str()), (42, "b"));
        assert_eq!(pool.install(|| fib(20)), 6765);

        // The halves may borrow mutably from the caller's stack.
        let mut data: Vec<u64> = (0..1000).collect();
        let (left, right) = data.split_at_mut(500);
        pool.join(
            || left.iter_mut().for_each(|x| *x *= 2),
            || right.iter_mut().for_each(|x| *x += 1),
        );
        assert_eq!(data[499], 998);
        assert_eq!(data[500], 501);

        // ThreadPool::join runs both halves on this pool's workers.
        let (ia, ib) = pool.join(
            || pool.current_thread_index(),
            || pool.current_thread_index(),
        );
        assert!(matches!(ia, Some(i) if i < 3), "{ia:?}");
        assert!(matches!(ib, Some(i) if i < 3), "{ib:?}");
    });
}

#[test]
fn join_context_migrated_when_called_from_outside() {
    watchdog(TIMEOUT, || {
        // From outside any pool the whole call is injected into the global
        // pool, so both closures count as migrated (rayon-core: `injected`).
        let (a, b) = rayon_core::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
        assert_eq!((a, b), (true, true));
    });
}

#[test]
fn join_context_not_migrated_on_the_calling_worker() {
    watchdog(TIMEOUT, || {
        // One worker, so nothing can be stolen: both run on the caller.
        let pool = pool(1);
        let (a, b) =
            pool.install(|| rayon_core::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
        assert_eq!((a, b), (false, false));
        // Debug is derived (rayon-core lib.rs 839).
        let text = pool.install(|| rayon_core::join_context(|ctx| format!("{ctx:?}"), |_| ()).0);
        assert!(text.contains("FnContext"), "{text}");
        assert!(text.contains("migrated: false"), "{text}");
    });
}

#[test]
fn join_context_stolen_half_is_migrated() {
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let ((a_migrated, a_index, b_index), b_migrated) = pool.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon_core::join_context(
                move |ctx| {
                    // `a` waits until `b` has started, so `b` must have been
                    // stolen by the other worker.
                    let b_index = rx.recv().unwrap();
                    (
                        ctx.migrated(),
                        rayon_core::current_thread_index().unwrap(),
                        b_index,
                    )
                },
                move |ctx| {
                    tx.send(rayon_core::current_thread_index().unwrap())
                        .unwrap();
                    ctx.migrated()
                },
            )
        });
        assert!(!a_migrated);
        assert!(b_migrated);
        assert_ne!(a_index, b_index);
    });
}

#[test]
fn join_panics_propagate_after_both_halves_ran() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        // `a` panics: `b` still runs, `a`'s panic is re-raised.
        let b_ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.join(
                || panic!("{}", expected("join a")),
                || b_ran.fetch_add(1, Ordering::SeqCst),
            )
        })
        .unwrap_err();
        assert_eq!(err, expected("join a"));
        assert_eq!(b_ran.load(Ordering::SeqCst), 1);

        // Only `b` panics: its panic is re-raised after `a` finished.
        let a_ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.install(|| {
                rayon_core::join(
                    || a_ran.fetch_add(1, Ordering::SeqCst),
                    || panic!("{}", expected("join b")),
                )
            })
        })
        .unwrap_err();
        assert_eq!(err, expected("join b"));
        assert_eq!(a_ran.load(Ordering::SeqCst), 1);

        // Both panic: `a`'s panic wins (rayon-core join/mod.rs 93).
        let err = catch(|| {
            pool.join(
                || panic!("{}", expected("join both a")),
                || panic!("{}", expected("join both b")),
            )
        })
        .unwrap_err();
        assert_eq!(err, expected("join both a"));

        // The pool still works.
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
    });
}

// ---------------------------------------------------------------------------
// scope, scope_fifo, Scope::spawn, ScopeFifo::spawn_fifo
// ---------------------------------------------------------------------------

#[test]
fn scope_waits_for_all_jobs_and_returns_the_body_value() {
    watchdog(TIMEOUT, || {
        let pool = pool(3);
        let sum = AtomicUsize::new(0);
        let mut left = 0;
        let mut right = 0;
        let result = pool.install(|| {
            rayon_core::scope(|s| {
                for i in 0..100 {
                    let sum = &sum;
                    s.spawn(move |_| {
                        sum.fetch_add(i, Ordering::SeqCst);
                    });
                }
                s.spawn(|_| left = 1);
                // Jobs receive the scope and may spawn more jobs into it.
                s.spawn(|s| s.spawn(|_| right = 2));
                "body"
            })
        });
        assert_eq!(result, "body");
        assert_eq!(sum.load(Ordering::SeqCst), 4950);
        assert_eq!((left, right), (1, 2));
    });
}

#[test]
fn scope_from_outside_runs_the_body_on_a_global_worker() {
    watchdog(TIMEOUT, || {
        let caller = thread::current().id();
        let n = rayon_core::current_num_threads();
        let job_index = Mutex::new(None);
        let (body_thread, body_index) = rayon_core::scope(|s| {
            s.spawn(|_| *job_index.lock().unwrap() = rayon_core::current_thread_index());
            (thread::current().id(), rayon_core::current_thread_index())
        });
        assert_ne!(body_thread, caller, "scope body ran on the calling thread");
        assert!(matches!(body_index, Some(i) if i < n), "{body_index:?}");
        let job_index = job_index.into_inner().unwrap();
        assert!(matches!(job_index, Some(i) if i < n), "{job_index:?}");

        // scope_fifo likewise.
        let (body_thread, body_index) = rayon_core::scope_fifo(|s| {
            s.spawn_fifo(|_| {});
            (thread::current().id(), rayon_core::current_thread_index())
        });
        assert_ne!(body_thread, caller);
        assert!(body_index.is_some());
    });
}

#[test]
fn thread_pool_scope_and_scope_fifo_run_on_that_pool() {
    watchdog(TIMEOUT, || {
        let pool = pool(3);
        let seen = Mutex::new(Vec::new());
        let body = pool.scope(|s| {
            for _ in 0..10 {
                s.spawn(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (pool.current_thread_index(), format!("{s:?}"))
        });
        assert!(
            body.0.is_some(),
            "ThreadPool::scope body is not on the pool"
        );
        assert!(body.1.starts_with("Scope"), "{}", body.1);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 10);
        assert!(
            seen.iter().all(|i| matches!(i, Some(i) if *i < 3)),
            "{seen:?}"
        );

        let seen = Mutex::new(Vec::new());
        let body = pool.scope_fifo(|s| {
            for _ in 0..10 {
                s.spawn_fifo(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (pool.current_thread_index(), format!("{s:?}"))
        });
        assert!(
            body.0.is_some(),
            "ThreadPool::scope_fifo body is not on the pool"
        );
        assert!(body.1.starts_with("ScopeFifo"), "{}", body.1);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 10);
        assert!(
            seen.iter().all(|i| matches!(i, Some(i) if *i < 3)),
            "{seen:?}"
        );
    });
}

#[test]
fn scope_panic_propagates_after_every_job_ran() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.scope(|s| {
                for i in 0..20 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        if i == 7 {
                            panic!("{}", expected("scope job"));
                        }
                    });
                }
            })
        })
        .unwrap_err();
        assert_eq!(err, expected("scope job"));
        assert_eq!(ran.load(Ordering::SeqCst), 20);

        let ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.scope_fifo(|s| {
                for _ in 0..5 {
                    s.spawn_fifo(|_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                    });
                }
                panic!("{}", expected("scope_fifo body"));
            })
        })
        .unwrap_err();
        assert_eq!(err, expected("scope_fifo body"));
        assert_eq!(ran.load(Ordering::SeqCst), 5);
    });
}

#[test]
fn scope_spawn_broadcast_runs_once_per_worker() {
    watchdog(TIMEOUT, || {
        let pool = pool(4);
        let seen = Mutex::new(Vec::new());
        pool.scope(|s| {
            s.spawn_broadcast(|_, ctx| {
                assert_eq!(rayon_core::current_thread_index(), Some(ctx.index()));
                seen.lock().unwrap().push((ctx.index(), ctx.num_threads()));
            });
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, [(0, 4), (1, 4), (2, 4), (3, 4)]);

        let seen = Mutex::new(Vec::new());
        pool.scope_fifo(|s| {
            s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push(ctx.index()));
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, [0, 1, 2, 3]);
    });
}

#[test]
fn scope_spawn_broadcast_nested() {
    watchdog(TIMEOUT, || {
        let pool = pool(4);
        let sum = AtomicUsize::new(0);
        pool.scope(|s| {
            s.spawn_broadcast(|s, _| {
                s.spawn_broadcast(|_, ctx| {
                    sum.fetch_add(ctx.index(), Ordering::SeqCst);
                });
            });
        });
        // 4 outer runs, each broadcasting 0 + 1 + 2 + 3.
        assert_eq!(sum.load(Ordering::SeqCst), 4 * 6);

        let sum = AtomicUsize::new(0);
        pool.scope_fifo(|s| {
            s.spawn_broadcast(|s, _| {
                s.spawn_broadcast(|_, ctx| {
                    sum.fetch_add(ctx.index(), Ordering::SeqCst);
                });
            });
        });
        assert_eq!(sum.load(Ordering::SeqCst), 4 * 6);
    });
}

#[test]
fn scope_spawn_broadcast_reaches_every_worker_at_once() {
    watchdog(TIMEOUT, || {
        // 7 workers and the caller meet at one barrier: only possible if the
        // broadcast really runs on 7 distinct workers concurrently.
        let pool = pool(7);
        let barrier = Barrier::new(8);
        pool.in_place_scope(|s| {
            s.spawn_broadcast(|_, _| {
                barrier.wait();
            });
            barrier.wait();
        });
        let barrier = Barrier::new(8);
        pool.in_place_scope_fifo(|s| {
            s.spawn_broadcast(|_, _| {
                barrier.wait();
            });
            barrier.wait();
        });
    });
}

#[test]
fn scope_spawn_broadcast_panic_propagates() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(7);
        let count = AtomicUsize::new(0);
        let err = catch(|| {
            pool.scope(|s| {
                s.spawn_broadcast(|_, ctx| {
                    count.fetch_add(1, Ordering::SeqCst);
                    if ctx.index() % 2 == 0 {
                        panic!("{}", expected("scope broadcast"));
                    }
                });
            })
        })
        .unwrap_err();
        assert_eq!(err, expected("scope broadcast"));
        assert_eq!(count.load(Ordering::SeqCst), 7);
    });
}

// ---------------------------------------------------------------------------
// in_place_scope, in_place_scope_fifo
// ---------------------------------------------------------------------------

#[test]
fn in_place_scope_runs_the_body_on_the_calling_thread() {
    watchdog(TIMEOUT, || {
        let caller = thread::current().id();
        // The body need not be Send.
        let not_send = Rc::new(Cell::new(0));
        let mut slot = 0;
        let job_index = Mutex::new(None);
        let body = rayon_core::in_place_scope(|s| {
            not_send.set(5);
            let slot = &mut slot;
            s.spawn(|_| *job_index.lock().unwrap() = rayon_core::current_thread_index());
            s.spawn(move |_| *slot = 7);
            (thread::current().id(), rayon_core::current_thread_index())
        });
        assert_eq!(body, (caller, None));
        assert_eq!((not_send.get(), slot), (5, 7));
        // Jobs go to the global pool.
        let job_index = job_index.into_inner().unwrap();
        assert!(
            matches!(job_index, Some(i) if i < rayon_core::current_num_threads()),
            "{job_index:?}"
        );

        let order = Mutex::new(Vec::new());
        let body = rayon_core::in_place_scope_fifo(|s| {
            not_send.set(6);
            s.spawn_fifo(|_| {
                order
                    .lock()
                    .unwrap()
                    .push(rayon_core::current_thread_index())
            });
            thread::current().id()
        });
        assert_eq!(body, caller);
        assert_eq!(not_send.get(), 6);
        let order = order.into_inner().unwrap();
        assert!(matches!(order[..], [Some(_)]), "{order:?}");
    });
}

#[test]
fn thread_pool_in_place_scope_sends_jobs_to_that_pool() {
    watchdog(TIMEOUT, || {
        let caller = thread::current().id();
        let pool = pool(3);
        let not_send = Rc::new(1);
        let seen = Mutex::new(Vec::new());
        let body = pool.in_place_scope(|s| {
            for _ in 0..6 {
                s.spawn(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (
                *not_send,
                thread::current().id(),
                pool.current_thread_index(),
            )
        });
        assert_eq!(body, (1, caller, None));
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 6);
        assert!(
            seen.iter().all(|i| matches!(i, Some(i) if *i < 3)),
            "{seen:?}"
        );

        let seen = Mutex::new(Vec::new());
        let body = pool.in_place_scope_fifo(|s| {
            for _ in 0..6 {
                s.spawn_fifo(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (
                *not_send,
                thread::current().id(),
                pool.current_thread_index(),
            )
        });
        assert_eq!(body, (1, caller, None));
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 6);
        assert!(
            seen.iter().all(|i| matches!(i, Some(i) if *i < 3)),
            "{seen:?}"
        );
    });
}

#[test]
fn in_place_scope_on_a_worker_of_another_pool() {
    watchdog(TIMEOUT, || {
        let outer = pool(2);
        let inner = pool(2);
        let (body_outer_index, body_inner_index, jobs) = outer.install(|| {
            let jobs = Mutex::new(Vec::new());
            let body = inner.in_place_scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| jobs.lock().unwrap().push(inner.current_thread_index()));
                }
                (outer.current_thread_index(), inner.current_thread_index())
            });
            (body.0, body.1, jobs.into_inner().unwrap())
        });
        // The body stays on the calling worker of `outer`...
        assert!(body_outer_index.is_some());
        assert_eq!(body_inner_index, None);
        // ...and the jobs run on `inner`.
        assert_eq!(jobs.len(), 4);
        assert!(jobs.iter().all(Option::is_some), "{jobs:?}");
    });
}

#[test]
fn in_place_scope_on_a_single_thread_pool_does_not_deadlock() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        // The body blocks until a job has run: only possible because the body
        // does not occupy the pool's only worker.
        let (tx, rx) = mpsc::channel();
        pool.in_place_scope(|s| {
            s.spawn(move |_| tx.send(()).unwrap());
            rx.recv().unwrap();
        });
        let (tx, rx) = mpsc::channel();
        pool.in_place_scope_fifo(|s| {
            s.spawn_fifo(move |_| tx.send(()).unwrap());
            rx.recv().unwrap();
        });
    });
}

// ---------------------------------------------------------------------------
// spawn, spawn_fifo, panic_handler
// ---------------------------------------------------------------------------

#[test]
fn spawn_from_outside_runs_on_the_global_pool() {
    watchdog(TIMEOUT, || {
        let n = rayon_core::current_num_threads();
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        rayon_core::spawn(move || {
            tx.send((
                "spawn",
                rayon_core::current_thread_index(),
                rayon_core::current_num_threads(),
            ))
            .unwrap()
        });
        rayon_core::spawn_fifo(move || {
            tx2.send((
                "spawn_fifo",
                rayon_core::current_thread_index(),
                rayon_core::current_num_threads(),
            ))
            .unwrap()
        });
        let mut got: Vec<_> = (0..2).map(|_| rx.recv_timeout(WAIT).unwrap()).collect();
        got.sort_unstable();
        for (what, index, threads) in got {
            assert!(matches!(index, Some(i) if i < n), "{what}: {index:?}");
            assert_eq!(threads, n, "{what}");
        }
    });
}

#[test]
fn thread_pool_spawn_runs_on_that_pool() {
    watchdog(TIMEOUT, || {
        let pool = Arc::new(pool(3));
        let (tx, rx) = mpsc::channel();
        for fifo in [false, true] {
            let p = Arc::clone(&pool);
            let tx = tx.clone();
            let job = move || {
                tx.send((
                    fifo,
                    p.current_thread_index(),
                    rayon_core::current_num_threads(),
                ))
                .unwrap()
            };
            if fifo {
                pool.spawn_fifo(job);
            } else {
                pool.spawn(job);
            }
        }
        drop(tx);
        let mut got: Vec<_> = rx.iter().collect();
        got.sort_unstable();
        assert_eq!(got.len(), 2);
        for (fifo, index, threads) in got {
            assert!(matches!(index, Some(i) if i < 3), "fifo={fifo}: {index:?}");
            assert_eq!(threads, 3);
        }
    });
}

#[test]
fn spawn_inside_a_worker_uses_that_pool() {
    watchdog(TIMEOUT, || {
        let pool = pool(3);
        let (tx, rx) = mpsc::channel();
        pool.install(|| {
            let tx2 = tx.clone();
            rayon_core::spawn(move || tx.send(rayon_core::current_num_threads()).unwrap());
            rayon_core::spawn_fifo(move || tx2.send(rayon_core::current_num_threads()).unwrap());
        });
        assert_eq!(rx.iter().collect::<Vec<_>>(), [3, 3]);
    });
}

#[test]
fn spawned_jobs_keep_a_dropped_pool_alive() {
    watchdog(TIMEOUT, || {
        let exits = Tally::new();
        let e = Arc::clone(&exits);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .exit_handler(move |i| e.record(i))
            .build()
            .unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || {
            gate_rx.recv().unwrap();
            // A nested spawn goes to the same (dropped) pool and still runs.
            rayon_core::spawn(move || tx.send(22).unwrap());
        });
        drop(pool);
        // The spawned job holds the pool: no worker may have exited.
        assert_eq!(
            exits.count(),
            0,
            "workers exited while a spawned job was pending"
        );
        gate_tx.send(()).unwrap();
        assert_eq!(rx.recv_timeout(WAIT), Ok(22));
        assert_eq!(exits.wait_for(2, WAIT), 2);
        assert_eq!(exits.sorted(), [0, 1]);
    });
}

#[test]
fn panic_handler_receives_spawn_panics_also_from_nested_spawns() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (ptx, prx) = mpsc::channel::<String>();
        let ptx = Mutex::new(ptx);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |payload| {
                ptx.lock().unwrap().send(panic_text(&*payload)).unwrap();
            })
            .build()
            .unwrap();
        pool.spawn(|| panic!("{}", expected("spawn")));
        assert_eq!(prx.recv_timeout(WAIT).unwrap(), expected("spawn"));
        pool.spawn_fifo(|| panic!("{}", expected("spawn_fifo")));
        assert_eq!(prx.recv_timeout(WAIT).unwrap(), expected("spawn_fifo"));
        // A job spawned by a job inherits the pool, and so its handler.
        pool.spawn(|| rayon_core::spawn(|| panic!("{}", expected("nested spawn"))));
        assert_eq!(prx.recv_timeout(WAIT).unwrap(), expected("nested spawn"));
        pool.install(|| rayon_core::spawn_fifo(|| panic!("{}", expected("spawn_fifo in"))));
        assert_eq!(prx.recv_timeout(WAIT).unwrap(), expected("spawn_fifo in"));
        // The pool keeps working.
        assert_eq!(pool.install(|| 5), 5);
    });
}

#[test]
fn panic_handler_receives_spawn_broadcast_panics() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (tx, rx) = mpsc::channel();
        let (ptx, prx) = mpsc::channel::<String>();
        let ptx = Mutex::new(ptx);
        let pool = ThreadPoolBuilder::new()
            .num_threads(7)
            .panic_handler(move |payload| {
                ptx.lock().unwrap().send(panic_text(&*payload)).unwrap();
            })
            .build()
            .unwrap();
        pool.spawn_broadcast(move |ctx| {
            tx.send(ctx.index()).unwrap();
            if ctx.index() % 2 == 0 {
                panic!("{}", expected("spawn_broadcast"));
            }
        });
        drop(pool); // and with it, eventually, the handler's sender
        let mut ran: Vec<_> = rx.iter().collect();
        ran.sort_unstable();
        assert_eq!(ran, (0..7).collect::<Vec<_>>());
        let panics: Vec<_> = prx.iter().collect();
        assert_eq!(panics.len(), 4, "{panics:?}");
        assert!(panics.iter().all(|p| *p == expected("spawn_broadcast")));
    });
}

// --- ordering contracts of spawn / spawn_fifo on a one-thread pool --------

type Job = Box<dyn FnOnce() + Send + 'static>;
type Spawner = fn(Job);

fn lifo(job: Job) {
    rayon_core::spawn(job)
}

fn fifo(job: Job) {
    rayon_core::spawn_fifo(job)
}

/// From inside a one-thread pool, `outer` spawns 10 jobs, each of which uses
/// `inner` to spawn 10 jobs that report `i * 10 + j`.
fn nested_spawn_order(outer: Spawner, inner: Spawner) -> Vec<i32> {
    let pool = pool(1);
    let (tx, rx) = mpsc::channel();
    pool.install(move || {
        for i in 0..10 {
            let tx = tx.clone();
            outer(Box::new(move || {
                for j in 0..10 {
                    let tx = tx.clone();
                    inner(Box::new(move || tx.send(i * 10 + j).unwrap()));
                }
            }));
        }
    });
    rx.iter().collect()
}

/// Spawns 0, -1, 1, -2, 2, -3, 3 from inside a one-thread pool, the
/// non-negative numbers with `pos`, the negative ones with `neg`.
fn mixed_spawn_order(pos: Spawner, neg: Spawner) -> Vec<i32> {
    let pool = pool(1);
    let (tx, rx) = mpsc::channel();
    pool.install(move || {
        for (spawner, value) in [
            (pos, 0),
            (neg, -1),
            (pos, 1),
            (neg, -2),
            (pos, 2),
            (neg, -3),
            (pos, 3),
        ] {
            let tx = tx.clone();
            spawner(Box::new(move || tx.send(value).unwrap()));
        }
    });
    rx.iter().collect()
}

#[test]
fn spawn_lifo_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(lifo, lifo));
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn spawn_fifo_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(fifo, fifo));
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn spawn_lifo_outside_fifo_inside_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(lifo, fifo));
    let want: Vec<i32> = (0..10)
        .rev()
        .flat_map(|i| (0..10).map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn spawn_fifo_outside_lifo_inside_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(fifo, lifo));
    let want: Vec<i32> = (0..10)
        .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn spawn_mixed_lifo_fifo_order() {
    let got = watchdog(TIMEOUT, || mixed_spawn_order(lifo, fifo));
    assert_eq!(got, [3, -1, 2, -2, 1, -3, 0]);
}

#[test]
fn spawn_mixed_fifo_lifo_order() {
    let got = watchdog(TIMEOUT, || mixed_spawn_order(fifo, lifo));
    assert_eq!(got, [0, -3, 1, -2, 2, -1, 3]);
}

#[test]
fn thread_pool_spawn_and_spawn_fifo_order() {
    let (lifo_got, fifo_got) = watchdog(TIMEOUT, || {
        let run = |fifo: bool| {
            let pool = pool(1);
            let (tx, rx) = mpsc::channel();
            pool.install(|| {
                for i in 0..10 {
                    let tx = tx.clone();
                    let job = move || tx.send(i).unwrap();
                    if fifo {
                        pool.spawn_fifo(job);
                    } else {
                        pool.spawn(job);
                    }
                }
            });
            drop(tx);
            rx.iter().collect::<Vec<i32>>()
        };
        (run(false), run(true))
    });
    assert_eq!(lifo_got, (0..10).rev().collect::<Vec<_>>());
    assert_eq!(fifo_got, (0..10).collect::<Vec<_>>());
}

// --- ordering contracts of scope / scope_fifo on a one-thread pool --------

/// `$scope` spawns 10 jobs with `$spawn`, each spawning 10 more into the same
/// scope that log `i * 10 + j`.
macro_rules! scope_order {
    ($scope:path, $spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $scope(|s| {
                    let log = &log;
                    for i in 0..10 {
                        s.$spawn(move |s| {
                            for j in 0..10 {
                                s.$spawn(move |_| log.lock().unwrap().push(i * 10 + j));
                            }
                        });
                    }
                });
                log.into_inner().unwrap()
            })
        })
    };
}

/// The outer scope's 10 jobs each open an inner scope with 10 jobs.
macro_rules! nested_scope_order {
    ($outer:path, $outer_spawn:ident, $inner:path, $inner_spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $outer(|s| {
                    let log = &log;
                    for i in 0..10 {
                        s.$outer_spawn(move |_| {
                            $inner(|s| {
                                for j in 0..10 {
                                    s.$inner_spawn(move |_| log.lock().unwrap().push(i * 10 + j));
                                }
                            });
                        });
                    }
                });
                log.into_inner().unwrap()
            })
        })
    };
}

/// Non-negative numbers go to the outer scope, negative ones to an inner
/// scope opened in the middle of the outer body.
macro_rules! mixed_scope_order {
    ($outer:path, $outer_spawn:ident, $inner:path, $inner_spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $outer(|outer| {
                    let log = &log;
                    outer.$outer_spawn(move |_| log.lock().unwrap().push(0));
                    $inner(|inner| {
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-1));
                        outer.$outer_spawn(move |_| log.lock().unwrap().push(1));
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-2));
                        outer.$outer_spawn(move |_| log.lock().unwrap().push(2));
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-3));
                    });
                    outer.$outer_spawn(move |_| log.lock().unwrap().push(3));
                });
                log.into_inner().unwrap()
            })
        })
    };
}

#[test]
fn scope_lifo_order() {
    let got: Vec<i32> = scope_order!(rayon_core::scope, spawn);
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn scope_fifo_order() {
    let got: Vec<i32> = scope_order!(rayon_core::scope_fifo, spawn_fifo);
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn scope_nested_lifo_order() {
    let got: Vec<i32> = nested_scope_order!(rayon_core::scope, spawn, rayon_core::scope, spawn);
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn scope_nested_fifo_order() {
    let got: Vec<i32> = nested_scope_order!(
        rayon_core::scope_fifo,
        spawn_fifo,
        rayon_core::scope_fifo,
        spawn_fifo
    );
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn scope_nested_lifo_fifo_order() {
    let got: Vec<i32> =
        nested_scope_order!(rayon_core::scope, spawn, rayon_core::scope_fifo, spawn_fifo);
    let want: Vec<i32> = (0..10)
        .rev()
        .flat_map(|i| (0..10).map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn scope_nested_fifo_lifo_order() {
    let got: Vec<i32> =
        nested_scope_order!(rayon_core::scope_fifo, spawn_fifo, rayon_core::scope, spawn);
    let want: Vec<i32> = (0..10)
        .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn scope_mixed_lifo_order() {
    let got: Vec<i32> = mixed_scope_order!(rayon_core::scope, spawn, rayon_core::scope, spawn);
    assert_eq!(got, [-3, 2, -2, 1, -1, 3, 0]);
}

#[test]
fn scope_mixed_fifo_order() {
    let got: Vec<i32> = mixed_scope_order!(
        rayon_core::scope_fifo,
        spawn_fifo,
        rayon_core::scope_fifo,
        spawn_fifo
    );
    assert_eq!(got, [-1, 0, -2, 1, -3, 2, 3]);
}

#[test]
fn scope_mixed_lifo_fifo_order() {
    let got: Vec<i32> =
        mixed_scope_order!(rayon_core::scope, spawn, rayon_core::scope_fifo, spawn_fifo);
    assert_eq!(got, [-1, 2, -2, 1, -3, 3, 0]);
}

#[test]
fn scope_mixed_fifo_lifo_order() {
    let got: Vec<i32> =
        mixed_scope_order!(rayon_core::scope_fifo, spawn_fifo, rayon_core::scope, spawn);
    assert_eq!(got, [-3, 0, -2, 1, -1, 2, 3]);
}

#[test]
fn thread_pool_scope_and_scope_fifo_order() {
    let (lifo_got, fifo_got) = watchdog(TIMEOUT, || {
        let pool = pool(1);
        let lifo_got = pool.install(|| {
            let log = Mutex::new(Vec::new());
            pool.scope(|s| {
                for i in 0..10 {
                    let log = &log;
                    s.spawn(move |_| log.lock().unwrap().push(i));
                }
            });
            log.into_inner().unwrap()
        });
        let fifo_got = pool.install(|| {
            let log = Mutex::new(Vec::new());
            pool.scope_fifo(|s| {
                for i in 0..10 {
                    let log = &log;
                    s.spawn_fifo(move |_| log.lock().unwrap().push(i));
                }
            });
            log.into_inner().unwrap()
        });
        (lifo_got, fifo_got)
    });
    assert_eq!(lifo_got, (0..10).rev().collect::<Vec<_>>());
    assert_eq!(fifo_got, (0..10).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------
// broadcast, spawn_broadcast, BroadcastContext
// ---------------------------------------------------------------------------

#[test]
fn broadcast_runs_once_per_worker_and_returns_in_index_order() {
    watchdog(TIMEOUT, || {
        let pool = pool(5);
        let calls = AtomicUsize::new(0);
        let results = pool.broadcast(|ctx| {
            calls.fetch_add(1, Ordering::SeqCst);
            assert_eq!(rayon_core::current_thread_index(), Some(ctx.index()));
            (ctx.index(), ctx.num_threads(), thread::current().id())
        });
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        let indices: Vec<_> = results.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(indices, [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5)]);
        let threads: HashSet<_> = results.iter().map(|r| r.2).collect();
        assert_eq!(threads.len(), 5, "a worker ran the broadcast twice");
        assert!(!threads.contains(&thread::current().id()));
    });
}

#[test]
fn broadcast_from_outside_uses_the_global_pool() {
    watchdog(TIMEOUT, || {
        let v = rayon_core::broadcast(|ctx| ctx.index());
        assert_eq!(
            v,
            (0..rayon_core::current_num_threads()).collect::<Vec<_>>()
        );
    });
}

#[test]
fn broadcast_inside_a_worker_uses_that_pool() {
    watchdog(TIMEOUT, || {
        let pool = pool(7);
        let v = pool.install(|| rayon_core::broadcast(|ctx| (ctx.index(), ctx.num_threads())));
        assert_eq!(v, (0..7).map(|i| (i, 7)).collect::<Vec<_>>());
    });
}

#[test]
fn broadcast_context_debug() {
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let texts = pool.broadcast(|ctx| format!("{ctx:?}"));
        assert!(texts[1].starts_with("BroadcastContext"), "{}", texts[1]);
        assert!(texts[1].contains("index: 1"), "{}", texts[1]);
        assert!(texts[1].contains("num_threads: 2"), "{}", texts[1]);
    });
}

#[test]
fn spawn_broadcast_runs_once_per_worker() {
    watchdog(TIMEOUT, || {
        // On a pool, from outside.
        let (tx, rx) = mpsc::channel();
        let pool = Arc::new(pool(7));
        pool.spawn_broadcast(move |ctx| tx.send((ctx.index(), ctx.num_threads())).unwrap());
        let mut got: Vec<_> = rx.iter().collect();
        got.sort_unstable();
        assert_eq!(got, (0..7).map(|i| (i, 7)).collect::<Vec<_>>());

        // The free function from a worker targets that worker's pool.
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || rayon_core::spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap()));
        let mut got: Vec<_> = rx.iter().collect();
        got.sort_unstable();
        assert_eq!(got, (0..7).collect::<Vec<_>>());

        // The free function from outside targets the global pool.
        let (tx, rx) = mpsc::channel();
        rayon_core::spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
        let mut got: Vec<_> = rx.iter().collect();
        got.sort_unstable();
        assert_eq!(
            got,
            (0..rayon_core::current_num_threads()).collect::<Vec<_>>()
        );
    });
}

#[test]
fn broadcast_after_spawn_broadcast() {
    watchdog(TIMEOUT, || {
        // A blocking broadcast runs after every earlier broadcast on each
        // worker, so the spawn_broadcast has run everywhere when it returns.
        let pool = pool(4);
        let (tx, rx) = mpsc::channel();
        pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
        pool.broadcast(|_| {});
        let mut v: Vec<_> = rx.try_iter().collect();
        v.sort_unstable();
        assert_eq!(v, [0, 1, 2, 3]);

        // Same with the free functions on the global pool.
        let (tx, rx) = mpsc::channel();
        rayon_core::spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
        rayon_core::broadcast(|_| {});
        let mut v: Vec<_> = rx.try_iter().collect();
        v.sort_unstable();
        assert_eq!(
            v,
            (0..rayon_core::current_num_threads()).collect::<Vec<_>>()
        );
    });
}

#[test]
fn broadcast_after_spawn() {
    watchdog(TIMEOUT, || {
        // A worker drains its own deque before it runs a broadcast job. One
        // thread, so the spawned job cannot be stolen and run late elsewhere.
        let pool = pool(1);
        let (tx, rx) = mpsc::channel();
        pool.install(move || rayon_core::spawn(move || tx.send(22).unwrap()));
        pool.broadcast(|_| {});
        assert_eq!(rx.try_recv(), Ok(22));

        // The same from inside the worker, with the free functions.
        let got = pool.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon_core::spawn(move || tx.send(23).unwrap());
            rayon_core::broadcast(|_| {});
            rx.try_recv()
        });
        assert_eq!(got, Ok(23));
    });
}

#[test]
fn broadcast_mutual() {
    watchdog(TIMEOUT, || {
        let count = AtomicUsize::new(0);
        let pool1 = pool(3);
        let pool2 = pool(7);
        pool1.install(|| {
            pool2.broadcast(|_| {
                pool1.broadcast(|_| {
                    count.fetch_add(1, Ordering::SeqCst);
                })
            })
        });
        assert_eq!(count.load(Ordering::SeqCst), 3 * 7);
    });
}

#[test]
fn spawn_broadcast_mutual() {
    watchdog(TIMEOUT, || {
        let (tx, rx) = mpsc::channel();
        let pool1 = Arc::new(pool(3));
        let pool2 = pool(7);
        let p1 = Arc::clone(&pool1);
        pool1.spawn(move || {
            pool2.spawn_broadcast(move |_| {
                let tx = tx.clone();
                p1.spawn_broadcast(move |_| tx.send(()).unwrap());
            });
        });
        assert_eq!(rx.iter().count(), 3 * 7);
    });
}

#[test]
fn broadcast_panic_propagates_after_every_worker_ran() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(7);
        for many in [false, true] {
            let count = AtomicUsize::new(0);
            let err = catch(|| {
                pool.broadcast(|ctx| {
                    count.fetch_add(1, Ordering::SeqCst);
                    if (many && ctx.index() % 2 == 0) || ctx.index() == 3 {
                        panic!("{}", expected("broadcast"));
                    }
                })
            })
            .unwrap_err();
            assert_eq!(err, expected("broadcast"));
            assert_eq!(count.load(Ordering::SeqCst), 7);
        }
        assert_eq!(
            pool.broadcast(|ctx| ctx.index()),
            (0..7).collect::<Vec<_>>()
        );
    });
}

// ---------------------------------------------------------------------------
// yield_now, yield_local, Yield
// ---------------------------------------------------------------------------

#[test]
fn yield_returns_none_off_pool() {
    watchdog(TIMEOUT, || {
        assert_eq!(rayon_core::yield_now(), None);
        assert_eq!(rayon_core::yield_local(), None);
        let pool = pool(1);
        assert_eq!(pool.yield_now(), None);
        assert_eq!(pool.yield_local(), None);
        // From a worker of another pool: None for this pool, Some for the
        // free functions (which use the worker's own pool).
        let other = self::pool(1);
        let got = other.install(|| {
            (
                pool.yield_now(),
                pool.yield_local(),
                rayon_core::yield_now(),
                rayon_core::yield_local(),
            )
        });
        assert_eq!(got, (None, None, Some(Yield::Idle), Some(Yield::Idle)));
    });
}

#[test]
fn yield_local_runs_a_job_from_the_own_deque() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        pool.install(|| {
            let (tx, rx) = mpsc::channel();
            assert_eq!(rayon_core::current_thread_has_pending_tasks(), Some(false));
            let t = tx.clone();
            rayon_core::spawn(move || t.send(1).unwrap());
            assert_eq!(rayon_core::current_thread_has_pending_tasks(), Some(true));
            assert_eq!(pool.current_thread_has_pending_tasks(), Some(true));
            assert_eq!(rayon_core::yield_local(), Some(Yield::Executed));
            assert_eq!(rx.try_recv(), Ok(1));
            assert_eq!(rayon_core::current_thread_has_pending_tasks(), Some(false));
            assert_eq!(rayon_core::yield_local(), Some(Yield::Idle));
            assert_eq!(rayon_core::yield_now(), Some(Yield::Idle));

            // The ThreadPool methods, from a worker of this pool.
            let t = tx.clone();
            pool.spawn(move || t.send(2).unwrap());
            assert_eq!(pool.yield_local(), Some(Yield::Executed));
            assert_eq!(rx.try_recv(), Ok(2));
            assert_eq!(pool.yield_local(), Some(Yield::Idle));
            let t = tx.clone();
            pool.spawn_fifo(move || t.send(3).unwrap());
            assert_eq!(pool.yield_now(), Some(Yield::Executed));
            assert_eq!(rx.try_recv(), Ok(3));
            assert_eq!(pool.yield_now(), Some(Yield::Idle));
        });
    });
}

#[test]
fn yield_now_takes_injected_work_but_yield_local_does_not() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        pool.install(|| {
            let (tx, rx) = mpsc::channel();
            // Another thread injects a job while the only worker is busy here.
            thread::scope(|s| {
                s.spawn(|| pool.spawn(move || tx.send(7).unwrap()));
            });
            assert_eq!(rayon_core::yield_local(), Some(Yield::Idle));
            assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Empty));
            assert_eq!(rayon_core::yield_now(), Some(Yield::Executed));
            assert_eq!(rx.try_recv(), Ok(7));
            assert_eq!(rayon_core::yield_now(), Some(Yield::Idle));
        });
    });
}

#[test]
/// A deliberate difference in scheduling order (README, "Differences from rayon-core"):
/// the search takes injected jobs *before* stealing from other workers (work from outside
/// is not starved by a busy pool); rayon-core 1.13 steals first (registry.rs 833-842), and
/// this test, with `"stolen"` expected, passes there.
fn yield_now_takes_injected_jobs_before_stealing() {
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let (ran_tx, ran_rx) = mpsc::channel();
        let ran_rx = Mutex::new(ran_rx);
        let (pushed_tx, pushed_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let pushed_rx = Mutex::new(pushed_rx);
        let done_rx = Mutex::new(done_rx);
        let got = pool.broadcast(|ctx| {
            if ctx.index() == 0 {
                // Worker 0 puts a stealable job on its own deque, then blocks
                // in user code (so it does not run that job itself).
                let tx = ran_tx.clone();
                rayon_core::spawn(move || tx.send("stolen").unwrap());
                pushed_tx.send(()).unwrap();
                done_rx.lock().unwrap().recv().unwrap();
                None
            } else {
                pushed_rx.lock().unwrap().recv().unwrap();
                // Another thread injects a job from outside.
                let tx = ran_tx.clone();
                thread::scope(|s| {
                    s.spawn(|| pool.spawn(move || tx.send("injected").unwrap()));
                });
                let first = rayon_core::yield_now();
                let which = ran_rx.lock().unwrap().try_recv();
                done_tx.send(()).unwrap();
                Some((first, which))
            }
        });
        assert_eq!(got[1], Some((Some(Yield::Executed), Ok("injected"))));
    });
}

#[test]
fn yield_local_runs_the_own_broadcast_job() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        pool.install(|| {
            let (tx, rx) = mpsc::channel();
            pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
            // A broadcast job is not in the local deque...
            assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
            // ...but yield_local takes it from the worker's broadcast queue.
            assert_eq!(rayon_core::yield_local(), Some(Yield::Executed));
            assert_eq!(rx.try_recv(), Ok(0));
            assert_eq!(rayon_core::yield_local(), Some(Yield::Idle));
        });
    });
}

#[test]
fn yield_enum_traits() {
    let a = Yield::Executed;
    let b = a; // Copy
    #[allow(clippy::clone_on_copy)]
    let c = b.clone();
    assert_eq!(a, c);
    assert_ne!(Yield::Executed, Yield::Idle);
    assert_eq!(format!("{:?}", Yield::Executed), "Executed");
    assert_eq!(format!("{:?}", Yield::Idle), "Idle");
}

// ---------------------------------------------------------------------------
// current_thread_index, current_num_threads, current_thread_has_pending_tasks,
// max_num_threads
// ---------------------------------------------------------------------------

#[test]
fn current_thread_index_outside_and_inside() {
    watchdog(TIMEOUT, || {
        assert_eq!(rayon_core::current_thread_index(), None);
        let pool1 = pool(4);
        let pool2 = pool(2);
        assert_eq!(pool1.current_thread_index(), None);
        let indices = pool1.broadcast(|_| {
            (
                rayon_core::current_thread_index(),
                pool1.current_thread_index(),
                pool2.current_thread_index(),
            )
        });
        let want: Vec<_> = (0..4).map(|i| (Some(i), Some(i), None)).collect();
        assert_eq!(indices, want);
        // From pool1 into pool2: the index is pool2's now.
        let nested = pool1.install(|| {
            pool2.install(|| (pool1.current_thread_index(), pool2.current_thread_index()))
        });
        assert!(nested.0.is_none());
        assert!(matches!(nested.1, Some(i) if i < 2), "{nested:?}");
    });
}

#[test]
fn current_num_threads_outside_and_inside() {
    watchdog(TIMEOUT, || {
        // Outside any pool: the global pool's size.
        let global = rayon_core::current_num_threads();
        assert!(global >= 1);
        assert_eq!(rayon_core::broadcast(|ctx| ctx.num_threads())[0], global);
        if let Some(n) = common::expected_default_threads() {
            assert_eq!(global, n);
        }
        let pool1 = pool(3);
        let pool2 = pool(5);
        assert_eq!(pool1.current_num_threads(), 3);
        assert_eq!(pool2.current_num_threads(), 5);
        assert_eq!(pool1.install(rayon_core::current_num_threads), 3);
        assert_eq!(
            pool1.install(|| pool2.install(rayon_core::current_num_threads)),
            5
        );
    });
}

#[test]
fn current_thread_has_pending_tasks_outside_and_inside() {
    watchdog(TIMEOUT, || {
        assert_eq!(rayon_core::current_thread_has_pending_tasks(), None);
        let pool = pool(1);
        let other = self::pool(1);
        assert_eq!(pool.current_thread_has_pending_tasks(), None);
        assert_eq!(
            other.install(|| pool.current_thread_has_pending_tasks()),
            None
        );
        assert_eq!(
            other.install(rayon_core::current_thread_has_pending_tasks),
            Some(false)
        );
        // While `a` runs, `b` waits in the (one-thread) worker's deque.
        let (a, b) = pool.join(
            rayon_core::current_thread_has_pending_tasks,
            rayon_core::current_thread_has_pending_tasks,
        );
        assert_eq!((a, b), (Some(true), Some(false)));
    });
}

#[test]
fn max_num_threads_value() {
    let max = rayon_core::max_num_threads();
    #[cfg(target_pointer_width = "64")]
    assert_eq!(max, 0xFFFF);
    #[cfg(target_pointer_width = "32")]
    assert_eq!(max, 0xFF);
    assert!(max >= 1);
}

// ---------------------------------------------------------------------------
// ThreadPool::install and cross-pool installs
// ---------------------------------------------------------------------------

#[test]
fn install_runs_on_a_worker_and_returns_the_value() {
    watchdog(TIMEOUT, || {
        let pool = pool(3);
        let caller = thread::current().id();
        let (index, thread_id, text) = pool.install(|| {
            (
                pool.current_thread_index(),
                thread::current().id(),
                "value".to_owned(),
            )
        });
        assert!(matches!(index, Some(i) if i < 3), "{index:?}");
        assert_ne!(thread_id, caller);
        assert_eq!(text, "value");
        // On a worker of the same pool, install runs inline.
        let (outer, inner) = pool.install(|| {
            let outer = thread::current().id();
            (outer, pool.install(|| thread::current().id()))
        });
        assert_eq!(outer, inner);
    });
}

#[test]
fn install_panic_propagates() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let err = catch(|| pool.install(|| -> i32 { panic!("{}", expected("install")) }));
        assert_eq!(err, Err(expected("install")));
        assert_eq!(pool.install(|| 1), 1);
    });
}

#[test]
fn self_install_on_a_single_thread_pool() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        assert!(pool.install(|| pool.install(|| true)));
    });
}

#[test]
fn mutual_install() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        // pool1 -> pool2 -> pool1: the waiting pool1 worker must run the
        // inner job itself.
        let ok = pool1.install(|| pool2.install(|| pool1.install(|| true)));
        assert!(ok);
    });
}

#[test]
fn mutual_install_after_both_pools_went_idle() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        assert_eq!(pool1.install(|| 1), 1);
        assert_eq!(pool2.install(|| 2), 2);
        let ok = pool1.install(|| pool2.install(|| pool1.install(|| true)));
        assert!(ok);
        // And the other way round.
        let ok = pool2.install(|| pool1.install(|| pool2.install(|| true)));
        assert!(ok);
    });
}

#[test]
fn mutual_install_after_a_barrier_with_the_main_thread() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        assert_eq!(pool1.install(|| 1), 1);
        assert_eq!(pool2.install(|| 2), 2);
        let barrier = Barrier::new(2);
        let ok = thread::scope(|s| {
            let helper = s.spawn(|| {
                pool1.install(|| {
                    // pool1's only worker blocks here with the main thread
                    // before it installs into pool2.
                    barrier.wait();
                    pool2.install(|| pool1.install(|| true))
                })
            });
            barrier.wait();
            helper.join().unwrap()
        });
        assert!(ok);

        // Both levels stop at a barrier with the main thread first.
        let first = Barrier::new(2);
        let second = Barrier::new(2);
        let ok = thread::scope(|s| {
            let helper = s.spawn(|| {
                pool1.install(|| {
                    first.wait();
                    pool2.install(|| {
                        second.wait();
                        pool1.install(|| true)
                    })
                })
            });
            first.wait();
            second.wait();
            helper.join().unwrap()
        });
        assert!(ok);
    });
}

#[test]
fn install_from_another_pool_keeps_running_that_pools_jobs() {
    watchdog(TIMEOUT, || {
        // rayon-core thread_pool/mod.rs 78ff: a worker of pool1 waiting in
        // pool2.install keeps executing pool1's jobs. pool1 has one worker,
        // so the job spawned below can only run inside that wait.
        let pool1 = pool(1);
        let pool2 = pool(1);
        let got = pool1.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon_core::spawn(move || tx.send(rayon_core::current_thread_index()).unwrap());
            pool2.install(move || rx.recv_timeout(WAIT))
        });
        assert_eq!(got, Ok(Some(0)));
    });
}

#[test]
fn thread_pool_debug() {
    let pool = pool(3);
    let text = format!("{pool:?}");
    assert!(text.starts_with("ThreadPool"), "{text}");
    assert!(text.contains("num_threads: 3"), "{text}");
}

// ---------------------------------------------------------------------------
// ThreadPoolBuilder
// ---------------------------------------------------------------------------

#[test]
fn builder_new_and_default_use_the_default_thread_count() {
    watchdog(TIMEOUT, || {
        let a = ThreadPoolBuilder::new().build().unwrap();
        let b = ThreadPoolBuilder::default().build().unwrap();
        assert_eq!(a.current_num_threads(), b.current_num_threads());
        assert!(a.current_num_threads() >= 1);
        if let Some(n) = common::expected_default_threads() {
            assert_eq!(a.current_num_threads(), n);
        }
        assert_eq!(a.broadcast(|_| ()).len(), a.current_num_threads());
    });
}

#[test]
fn builder_num_threads() {
    watchdog(TIMEOUT, || {
        for n in [1, 2, 3, 5, 8] {
            let pool = pool(n);
            assert_eq!(pool.current_num_threads(), n);
            assert_eq!(
                pool.broadcast(|ctx| ctx.index()),
                (0..n).collect::<Vec<_>>()
            );
        }
        // The last call wins.
        let pool = ThreadPoolBuilder::new()
            .num_threads(5)
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.current_num_threads(), 2);
    });
}

#[test]
fn builder_thread_name() {
    watchdog(TIMEOUT, || {
        let builder_thread = thread::current().id();
        // The closure need not be Send: it runs on the building thread,
        // once per index.
        let calls: Rc<RefCell<Vec<(usize, thread::ThreadId)>>> = Rc::default();
        let c = Rc::clone(&calls);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(move |i| {
                c.borrow_mut().push((i, thread::current().id()));
                format!("api-worker-{i}")
            })
            .build()
            .unwrap();
        let calls = calls.borrow().clone();
        let want: Vec<_> = (0..3).map(|i| (i, builder_thread)).collect();
        assert_eq!(calls, want);
        let names = pool.broadcast(|_| thread::current().name().map(str::to_owned));
        assert_eq!(
            names,
            [
                Some("api-worker-0".to_owned()),
                Some("api-worker-1".to_owned()),
                Some("api-worker-2".to_owned())
            ]
        );
    });
}

#[test]
fn builder_thread_name_panic_propagates_and_started_threads_exit() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let starts = Tally::new();
        let exits = Tally::new();
        let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
        let builder = ThreadPoolBuilder::new()
            .num_threads(10)
            .start_handler(move |i| s.record(i))
            .exit_handler(move |i| e.record(i))
            .thread_name(|i| {
                if i >= 5 {
                    panic!("{}", expected("thread_name"));
                }
                format!("thread-name-panic-{i}")
            });
        let err = catch(move || builder.build().map(drop)).unwrap_err();
        assert_eq!(err, expected("thread_name"));
        // Threads 0..5 were started before the panic, and are terminated.
        assert_eq!(starts.wait_for(5, WAIT), 5);
        assert_eq!(exits.wait_for(5, WAIT), 5);
        assert_eq!(starts.sorted(), [0, 1, 2, 3, 4]);
        assert_eq!(exits.sorted(), [0, 1, 2, 3, 4]);
    });
}

#[test]
fn builder_stack_size() {
    watchdog(TIMEOUT, || {
        const STACK: usize = 32 << 20;
        // Recursion that needs about 6 MiB of stack: more than a default
        // thread's 2 MiB, well within STACK. If the stack size were ignored,
        // the worker would overflow its stack.
        fn deep(n: usize) -> usize {
            let buf = std::hint::black_box([1u8; 1024]);
            if n == 0 {
                return 0;
            }
            deep(n - 1) + usize::from(buf[n % 1024])
        }
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .stack_size(STACK)
            .build()
            .unwrap();
        assert_eq!(pool.broadcast(|_| deep(6000)), [6000, 6000]);
    });
}

#[test]
fn builder_stack_size_failure_is_an_io_error() {
    watchdog(TIMEOUT, || {
        let starts = Tally::new();
        let exits = Tally::new();
        let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
        let result = ThreadPoolBuilder::new()
            .num_threads(10)
            .stack_size(isize::MAX as usize)
            .start_handler(move |i| s.record(i))
            .exit_handler(move |i| e.record(i))
            .build();
        let err = result.expect_err("a thread with an isize::MAX stack started");
        let source = err.source().expect("an I/O build error has a source");
        assert!(source.downcast_ref::<io::Error>().is_some(), "{source:?}");
        // At most the first thread may have started; whatever started exits.
        let started = starts.count();
        assert!(started <= 1, "{started} threads started");
        assert!(common::wait_until(WAIT, || exits.count() == starts.count()));
    });
}

#[test]
fn builder_start_and_exit_handlers_run_once_per_worker_on_that_worker() {
    watchdog(TIMEOUT, || {
        let starts = Arc::new(Mutex::new(Vec::new()));
        let exits = Tally::new();
        let exit_details = Arc::new(Mutex::new(Vec::new()));
        let (s, e, ed) = (
            Arc::clone(&starts),
            Arc::clone(&exits),
            Arc::clone(&exit_details),
        );
        let pool = ThreadPoolBuilder::new()
            .num_threads(4)
            .thread_name(|i| format!("handler-test-{i}"))
            .start_handler(move |i| {
                s.lock().unwrap().push((
                    i,
                    rayon_core::current_thread_index(),
                    thread::current().name().map(str::to_owned),
                ));
            })
            .exit_handler(move |i| {
                ed.lock()
                    .unwrap()
                    .push((i, rayon_core::current_thread_index()));
                e.record(i);
            })
            .build()
            .unwrap();
        // A broadcast runs on every worker, so every worker has started (the
        // start handler runs before a worker takes any job).
        pool.broadcast(|_| ());
        let mut got = starts.lock().unwrap().clone();
        got.sort_unstable();
        let want: Vec<_> = (0..4)
            .map(|i| (i, Some(i), Some(format!("handler-test-{i}"))))
            .collect();
        assert_eq!(got, want);
        assert_eq!(exits.count(), 0, "exit handler ran while the pool is alive");

        drop(pool);
        assert_eq!(exits.wait_for(4, WAIT), 4);
        let mut got = exit_details.lock().unwrap().clone();
        got.sort_unstable();
        assert_eq!(got, (0..4).map(|i| (i, Some(i))).collect::<Vec<_>>());
        assert_eq!(starts.lock().unwrap().len(), 4);
    });
}

#[test]
fn builder_spawn_handler_and_thread_builder() {
    watchdog(TIMEOUT, || {
        // The handler may borrow locals (no 'static bound) and need not be
        // Send.
        let mut handles = Vec::new();
        let mut seen = Vec::new();
        let not_send = Rc::new(());
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| format!("custom-{i}"))
            .stack_size(2 << 20)
            .spawn_handler(|tb: ThreadBuilder| {
                let _ = &not_send;
                let debug = format!("{tb:?}");
                assert!(debug.starts_with("ThreadBuilder"), "{debug}");
                seen.push((tb.index(), tb.name().map(str::to_owned), tb.stack_size()));
                let mut b = thread::Builder::new();
                if let Some(name) = tb.name() {
                    b = b.name(format!("{name}-spawned"));
                }
                if let Some(size) = tb.stack_size() {
                    b = b.stack_size(size);
                }
                handles.push(b.spawn(move || tb.run())?);
                Ok(())
            })
            .build()
            .unwrap();
        let want: Vec<_> = (0..3)
            .map(|i| (i, Some(format!("custom-{i}")), Some(2 << 20)))
            .collect();
        assert_eq!(seen, want);
        let names =
            pool.broadcast(|ctx| (ctx.index(), thread::current().name().map(str::to_owned)));
        let want: Vec<_> = (0..3)
            .map(|i| (i, Some(format!("custom-{i}-spawned"))))
            .collect();
        assert_eq!(names, want);
        assert_eq!(pool.install(|| fib(12)), 144);
        // `run` returns once the pool has terminated.
        drop(pool);
        for handle in handles {
            handle.join().unwrap();
        }

        // Without thread_name and stack_size the ThreadBuilder reports None.
        let seen = Mutex::new(Vec::new());
        let mut handles = Vec::new();
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .spawn_handler(|tb| {
                seen.lock()
                    .unwrap()
                    .push((tb.index(), tb.name().is_none(), tb.stack_size()));
                handles.push(thread::spawn(move || tb.run()));
                Ok(())
            })
            .build()
            .unwrap();
        assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
        drop(pool);
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(
            seen.into_inner().unwrap(),
            [(0, true, None), (1, true, None)]
        );
    });
}

#[test]
fn builder_spawn_handler_error_fails_the_build_and_stops_started_threads() {
    watchdog(TIMEOUT, || {
        let starts = Tally::new();
        let exits = Tally::new();
        let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
        let mut handles = Vec::new();
        let mut asked = Vec::new();
        let result = ThreadPoolBuilder::new()
            .num_threads(4)
            .start_handler(move |i| s.record(i))
            .exit_handler(move |i| e.record(i))
            .spawn_handler(|tb| {
                asked.push(tb.index());
                if tb.index() == 2 {
                    return Err(io::Error::other("spawn refused for index 2"));
                }
                handles.push(thread::spawn(move || tb.run()));
                Ok(())
            })
            .build();
        let err = result.expect_err("build succeeded despite the spawn error");
        assert_eq!(asked, [0, 1, 2], "spawn handler called past the failure");
        let source = err.source().expect("I/O build error without a source");
        let io_err = source
            .downcast_ref::<io::Error>()
            .expect("source is not the io::Error");
        assert_eq!(io_err.kind(), io::ErrorKind::Other);
        assert_eq!(io_err.to_string(), "spawn refused for index 2");
        assert!(
            err.to_string().contains("spawn refused for index 2"),
            "Display does not show the I/O error: {err}"
        );
        assert!(!format!("{err:?}").is_empty());

        // Threads 0 and 1 were started; they start, see the pool terminated,
        // and exit.
        assert_eq!(starts.wait_for(2, WAIT), 2);
        assert!(
            common::wait_until(WAIT, || exits.count() == starts.count()),
            "started threads did not exit: {} started, {} exited",
            starts.count(),
            exits.count()
        );
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(starts.sorted(), [0, 1]);
        assert_eq!(exits.sorted(), [0, 1]);
    });
}

#[test]
fn build_error_display_is_the_io_error_display() {
    let err = ThreadPoolBuilder::new()
        .num_threads(1)
        .spawn_handler(|_| Err(io::Error::other("refused")))
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "refused");
}

#[test]
fn builder_build_scoped() {
    watchdog(TIMEOUT, || {
        struct CountOnDrop<'a>(&'a AtomicUsize);
        impl Drop for CountOnDrop<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let exits = Tally::new();
        let e = Arc::clone(&exits);
        // The wrapper borrows locals: the threads are scoped.
        let wrapped = Mutex::new(Vec::new());
        let finished = AtomicUsize::new(0);
        let data = [1, 2, 3, 4];
        let not_send = Rc::new(10);
        let result = ThreadPoolBuilder::new()
            .num_threads(3)
            .exit_handler(move |i| e.record(i))
            .build_scoped(
                |tb| {
                    wrapped.lock().unwrap().push(tb.index());
                    let _guard = CountOnDrop(&finished);
                    tb.run();
                },
                // with_pool need not be Send.
                |pool| {
                    assert_eq!(pool.current_num_threads(), 3);
                    pool.install(|| data.iter().sum::<i32>()) + *not_send
                },
            )
            .unwrap();
        assert_eq!(result, 20);
        // build_scoped joined every worker before returning: no waiting.
        assert_eq!(finished.load(Ordering::SeqCst), 3);
        assert_eq!(exits.count(), 3);
        assert_eq!(exits.sorted(), [0, 1, 2]);
        let mut wrapped = wrapped.into_inner().unwrap();
        wrapped.sort_unstable();
        assert_eq!(wrapped, [0, 1, 2]);
    });
}

#[test]
fn builder_build_scoped_error() {
    watchdog(TIMEOUT, || {
        let called = AtomicUsize::new(0);
        let result = ThreadPoolBuilder::new()
            .num_threads(2)
            .stack_size(isize::MAX as usize)
            .build_scoped(|tb| tb.run(), |_| called.fetch_add(1, Ordering::SeqCst));
        let err = result.expect_err("build_scoped succeeded with an isize::MAX stack");
        assert!(err.source().is_some());
        assert_eq!(called.load(Ordering::SeqCst), 0, "with_pool ran");
    });
}

#[test]
fn builder_use_current_thread() {
    watchdog(TIMEOUT, || {
        // A fresh thread: it becomes worker 0 for the rest of its life.
        let body = thread::spawn(|| {
            let starts = Tally::new();
            let exits = Tally::new();
            let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
            let mut spawned = Vec::new();
            let mut handles = Vec::new();
            let pool = ThreadPoolBuilder::new()
                .num_threads(3)
                .use_current_thread()
                .start_handler(move |i| s.record(i))
                .exit_handler(move |i| e.record(i))
                .spawn_handler(|tb| {
                    spawned.push(tb.index());
                    handles.push(thread::spawn(move || tb.run()));
                    Ok(())
                })
                .build()
                .unwrap();
            // Only workers 1 and 2 are new threads.
            assert_eq!(spawned, [1, 2]);
            assert_eq!(rayon_core::current_thread_index(), Some(0));
            assert_eq!(pool.current_thread_index(), Some(0));
            assert_eq!(rayon_core::current_num_threads(), 3);
            assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
            // install from worker 0 runs inline.
            let me = thread::current().id();
            assert_eq!(
                pool.install(|| (thread::current().id(), rayon_core::current_thread_index())),
                (me, Some(0))
            );
            assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);

            // A second use_current_thread pool on this thread is refused.
            let err = ThreadPoolBuilder::new()
                .num_threads(2)
                .use_current_thread()
                .build()
                .expect_err("the thread joined a second pool");
            assert_eq!(err.to_string(), ALREADY_IN_POOL);
            assert!(err.source().is_none());

            // Jobs spawned from worker 0 go to its deque; as it does not run
            // the main loop, another worker takes them while it blocks.
            let (tx, rx) = mpsc::channel();
            pool.spawn(move || tx.send(rayon_core::current_thread_index()).unwrap());
            let ran_on = rx.recv_timeout(WAIT).expect("spawned job never ran");
            assert!(matches!(ran_on, Some(1 | 2)), "{ran_on:?}");

            // A scope body on worker 0 and a job on another worker meet.
            let barrier = Barrier::new(2);
            pool.scope(|s| {
                s.spawn(|_| {
                    barrier.wait();
                });
                barrier.wait();
            });

            // Start and exit handlers do not run for worker 0.
            assert_eq!(starts.wait_for(2, WAIT), 2);
            assert_eq!(starts.sorted(), [1, 2]);
            drop(pool);
            for handle in handles {
                handle.join().unwrap();
            }
            assert_eq!(exits.sorted(), [1, 2]);
            // Still worker 0 of the (terminated) pool.
            assert_eq!(rayon_core::current_thread_index(), Some(0));
        });
        if let Err(payload) = body.join() {
            panic::resume_unwind(payload);
        }
    });
}

#[test]
fn builder_use_current_thread_on_a_pool_worker_is_an_error() {
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let result = pool.install(|| {
            ThreadPoolBuilder::new()
                .num_threads(2)
                .use_current_thread()
                .build()
                .map(drop)
        });
        let err = result.expect_err("a pool worker joined a second pool");
        assert_eq!(err.to_string(), ALREADY_IN_POOL);
        assert!(err.source().is_none());
        // Without use_current_thread, building a pool on a worker is fine.
        let nested = pool.install(|| {
            let inner = self::pool(2);
            inner.install(rayon_core::current_num_threads)
        });
        assert_eq!(nested, 2);
    });
}

#[test]
fn builder_use_current_thread_still_names_index_0() {
    let calls = thread::spawn(|| {
        let calls: Rc<RefCell<Vec<usize>>> = Rc::default();
        let c = Rc::clone(&calls);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .thread_name(move |i| {
                c.borrow_mut().push(i);
                format!("named-{i}")
            })
            .build()
            .unwrap();
        drop(pool);
        let calls = calls.borrow().clone();
        calls
    })
    .join()
    .unwrap();
    assert_eq!(calls, [0, 1]);
}

#[test]
fn builder_debug() {
    let text = format!(
        "{:?}",
        ThreadPoolBuilder::new()
            .num_threads(5)
            .thread_name(|i| format!("{i}"))
            .use_current_thread()
    );
    assert!(text.starts_with("ThreadPoolBuilder"), "{text}");
    assert!(text.contains("num_threads: 5"), "{text}");
    assert!(text.contains("use_current_thread: true"), "{text}");
    assert!(text.contains("get_thread_name: Some("), "{text}");
    assert!(text.contains("<closure>"), "{text}");
    assert!(text.contains("panic_handler: None"), "{text}");
    assert!(text.contains("stack_size: None"), "{text}");
    let text = format!(
        "{:?}",
        ThreadPoolBuilder::default()
            .stack_size(1 << 20)
            .panic_handler(|_| ())
            .start_handler(|_| ())
            .exit_handler(|_| ())
    );
    assert!(text.contains("stack_size: Some(1048576)"), "{text}");
    assert!(text.contains("panic_handler: Some("), "{text}");
    assert!(text.contains("start_handler: Some("), "{text}");
    assert!(text.contains("exit_handler: Some("), "{text}");
    // spawn_handler changes the type parameter; Debug still works.
    let text = format!(
        "{:?}",
        ThreadPoolBuilder::new().spawn_handler(|tb| {
            thread::spawn(move || tb.run());
            Ok(())
        })
    );
    assert!(text.starts_with("ThreadPoolBuilder"), "{text}");
}

#[test]
fn builder_debug_matches_rayon_core_format() {
    let text = format!(
        "{:?}",
        ThreadPoolBuilder::new()
            .num_threads(5)
            .thread_name(|i| format!("{i}"))
            .use_current_thread()
    );
    assert_eq!(
        text,
        "ThreadPoolBuilder { num_threads: 5, use_current_thread: true, \
         get_thread_name: Some(<closure>), panic_handler: None, stack_size: None, \
         start_handler: None, exit_handler: None, breadth_first: false }"
    );
}

#[test]
#[allow(deprecated)]
fn build_global_and_initialize_fail_once_the_global_pool_exists() {
    watchdog(TIMEOUT, || {
        // Make sure the global pool exists.
        let n = rayon_core::current_num_threads();
        let err: ThreadPoolBuildError = ThreadPoolBuilder::new()
            .num_threads(3)
            .build_global()
            .expect_err("build_global succeeded although the global pool exists");
        assert_eq!(err.to_string(), GLOBAL_ALREADY_INITIALIZED);
        assert!(err.source().is_none());
        assert!(format!("{err:?}").contains("GlobalPoolAlreadyInitialized"));

        let err = rayon_core::initialize(rayon_core::Configuration::new().num_threads(3))
            .expect_err("initialize succeeded although the global pool exists");
        assert_eq!(err.to_string(), GLOBAL_ALREADY_INITIALIZED);

        // The global pool is unchanged.
        assert_eq!(rayon_core::current_num_threads(), n);
        assert_eq!(rayon_core::broadcast(|ctx| ctx.index()).len(), n);
    });
}

#[test]
fn build_error_is_a_std_error() {
    let err = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| Err(io::Error::new(io::ErrorKind::Unsupported, "no threads")))
        .build()
        .unwrap_err();
    let boxed: Box<dyn Error + Send + Sync + 'static> = Box::new(err);
    let source = boxed.source().unwrap();
    assert_eq!(
        source.downcast_ref::<io::Error>().map(io::Error::kind),
        Some(io::ErrorKind::Unsupported)
    );
    assert!(boxed.to_string().contains("no threads"), "{boxed}");
}

// ---------------------------------------------------------------------------
// Deprecated API: Configuration, initialize, ThreadPool::new, breadth_first
// ---------------------------------------------------------------------------

#[test]
#[allow(deprecated)]
fn deprecated_configuration_and_thread_pool_new() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let starts = Tally::new();
        let exits = Tally::new();
        let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
        let (ptx, prx) = mpsc::channel::<String>();
        let ptx = Mutex::new(ptx);
        let config = rayon_core::Configuration::new()
            .num_threads(3)
            .thread_name(|i| format!("config-{i}"))
            .stack_size(2 << 20)
            .start_handler(move |i| s.record(i))
            .exit_handler(move |i| e.record(i))
            .panic_handler(move |p| ptx.lock().unwrap().send(panic_text(&*p)).unwrap());
        let debug = format!("{config:?}");
        assert!(debug.contains("num_threads: 3"), "{debug}");
        let pool = ThreadPool::new(config).unwrap();
        assert_eq!(pool.current_num_threads(), 3);
        assert_eq!(
            pool.broadcast(|_| thread::current().name().map(str::to_owned)),
            [
                Some("config-0".to_owned()),
                Some("config-1".to_owned()),
                Some("config-2".to_owned())
            ]
        );
        assert_eq!(starts.wait_for(3, WAIT), 3);
        pool.spawn(|| panic!("{}", expected("configuration")));
        assert_eq!(prx.recv_timeout(WAIT).unwrap(), expected("configuration"));
        drop(pool);
        assert_eq!(exits.wait_for(3, WAIT), 3);

        // Configuration::build and Default.
        let pool = rayon_core::Configuration::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.current_num_threads(), 2);
        let pool = ThreadPool::new(rayon_core::Configuration::default()).unwrap();
        assert!(pool.current_num_threads() >= 1);

        // Errors come back boxed.
        let err: Box<dyn Error> = rayon_core::Configuration::new()
            .num_threads(2)
            .stack_size(isize::MAX as usize)
            .build()
            .unwrap_err();
        assert!(err.source().is_some());
    });
}

/// Outer `spawn` of 10 jobs each spawning 10 more, on a one-thread pool whose
/// deque is FIFO (`breadth_first`): everything runs in spawn order.
fn breadth_first_order(pool: ThreadPool) -> Vec<i32> {
    let (tx, rx) = mpsc::channel();
    pool.install(move || {
        for i in 0..10 {
            let tx = tx.clone();
            rayon_core::spawn(move || {
                for j in 0..10 {
                    let tx = tx.clone();
                    rayon_core::spawn(move || tx.send(i * 10 + j).unwrap());
                }
            });
        }
    });
    rx.iter().collect()
}

#[test]
#[allow(deprecated)]
fn deprecated_breadth_first() {
    let (builder_got, config_got) = watchdog(TIMEOUT, || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(1)
            .breadth_first()
            .build()
            .unwrap();
        let builder_got = breadth_first_order(pool);
        let pool = ThreadPool::new(
            rayon_core::Configuration::new()
                .num_threads(1)
                .breadth_first(),
        )
        .unwrap();
        (builder_got, breadth_first_order(pool))
    });
    assert_eq!(builder_got, (0..100).collect::<Vec<_>>());
    assert_eq!(config_got, (0..100).collect::<Vec<_>>());
}
