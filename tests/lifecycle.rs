//! A pool's life: `install` into its own pool, handlers that use the free functions, the
//! last handle dropped inside the pool's own job, pools built and dropped many times (also
//! with every worker exiting at once), `build` failing half-way, `build_global` racing the
//! lazy global pool or called from its own `thread_name` closure. Scenarios that need a
//! fresh process (the global pool, thread counts) run in a child process
//! (`common::child`).

use std::ffi::OsStr;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use stealpool::ThreadPoolBuilder;

mod common;

use common::child::{is_child, ran_in_child, run_child, skip_without_child_processes, task_count};
use common::pool;
use common::{quiet_expected_panics, watchdog};

// ------------------------------------------------------------------------------------
// build_global whose thread_name closure touches the global pool
// ------------------------------------------------------------------------------------
//
// Holding the global pool's non-reentrant init lock while `Registry::new` calls the
// user's `thread_name` closure would make any free function that reaches
// `global_registry()` from there (e.g. `current_num_threads()`) wait for that same lock on
// the same thread for ever. So the registry is built first, with no lock held, and then
// offered to the `OnceLock` (`pool/global.rs`). rayon-core 1.13 deadlocks.

/// A hang is killed after the timeout and fails the test.
#[test]
fn build_global_with_thread_name_calling_a_free_function_does_not_hang() {
    const NAME: &str = "build_global_with_thread_name_calling_a_free_function_does_not_hang";
    if !is_child(NAME) {
        if skip_without_child_processes() {
            return;
        }
        let run = run_child(NAME, 5, &[]);
        assert!(
            run.status.is_some(),
            "build_global deadlocked: its thread_name closure called \
             stealpool::current_num_threads(): {run}"
        );
        return;
    }
    let result = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("g{i}-of-{}", stealpool::current_num_threads()))
        .build_global();
    // Either outcome is acceptable (an error, or a pool); hanging is not.
    let _ = result;
}

// ------------------------------------------------------------------------------------
// The rest of a pool's life
// ------------------------------------------------------------------------------------

/// `install` into the same pool from one of its workers runs inline on that worker.
#[test]
fn install_into_own_pool_runs_inline() {
    watchdog(20, || {
        let p = Arc::new(pool(2));
        let p2 = p.clone();
        let (outer, inner) = p.install(move || {
            let outer = (thread::current().id(), p2.current_thread_index());
            let inner = p2.install(|| (thread::current().id(), p2.current_thread_index()));
            (outer, inner)
        });
        assert_eq!(outer, inner);
        assert!(outer.1.is_some());
    });
}

/// The exit handler may use the free functions: join, scope, spawn (runs inline into
/// the terminated pool), install into another pool, current_thread_index.
#[test]
fn exit_handler_can_use_the_free_functions() {
    watchdog(20, || {
        let out = Arc::new(Mutex::new(Vec::new()));
        let o2 = out.clone();
        let other = Arc::new(pool(1));
        let p = ThreadPoolBuilder::new()
            .num_threads(2)
            .exit_handler(move |i| {
                let idx = stealpool::current_thread_index();
                let j = stealpool::join(|| 1, || 2);
                let c = AtomicUsize::new(0);
                stealpool::scope(|s| {
                    for _ in 0..10 {
                        s.spawn(|_| {
                            c.fetch_add(1, SeqCst);
                        });
                    }
                });
                let (tx, rx) = mpsc::channel();
                stealpool::spawn(move || tx.send(7).unwrap());
                let spawned = rx.recv_timeout(Duration::from_secs(5)).ok();
                let x = other.install(|| 42);
                o2.lock()
                    .unwrap()
                    .push((i, idx, j, c.load(SeqCst), spawned, x));
            })
            .build()
            .unwrap();
        p.install(|| ());
        drop(p);
        assert!(
            common::wait_until(Duration::from_secs(10), || out.lock().unwrap().len() >= 2),
            "exit handlers did not finish"
        );
        let mut v = out.lock().unwrap().clone();
        v.sort();
        assert_eq!(
            v,
            [
                (0, Some(0), (1, 2), 10, Some(7), 42),
                (1, Some(1), (1, 2), 10, Some(7), 42)
            ]
        );
    });
}

/// The last handle is dropped inside one of the pool's own jobs, which then keeps
/// spawning: every job runs, then the workers exit.
#[test]
fn pool_dropped_inside_its_own_job_then_spawning_more() {
    watchdog(30, || {
        for _ in 0..200 {
            let exits = Arc::new(AtomicUsize::new(0));
            let e2 = exits.clone();
            let p = ThreadPoolBuilder::new()
                .num_threads(2)
                .exit_handler(move |_| {
                    e2.fetch_add(1, SeqCst);
                })
                .build()
                .unwrap();
            let slot = Arc::new(Mutex::new(Some(p)));
            let s2 = slot.clone();
            let (tx, rx) = mpsc::channel();
            let guard = slot.lock().unwrap();
            guard.as_ref().unwrap().spawn(move || {
                drop(s2.lock().unwrap().take()); // the last handle, on its own worker
                for _ in 0..10 {
                    let tx = tx.clone();
                    stealpool::spawn(move || stealpool::spawn(move || tx.send(()).unwrap()));
                }
            });
            drop(guard);
            for _ in 0..10 {
                rx.recv_timeout(Duration::from_secs(5))
                    .expect("job spawned after drop lost");
            }
            assert!(
                common::wait_until(Duration::from_secs(5), || exits.load(SeqCst) >= 2),
                "workers did not exit"
            );
        }
    });
}

/// Many pools created, used and dropped: every worker thread ends (child process, so
/// that other tests' threads do not disturb the count).
#[test]
fn pool_churn_leaks_no_threads() {
    if ran_in_child(
        "pool_churn_leaks_no_threads",
        60,
        "the scenario failed in its child process",
    ) {
        return;
    }
    let base = task_count();
    for i in 0..300 {
        let p = pool(1 + i % 4);
        assert_eq!(p.install(|| stealpool::join(|| 1, || 2)), (1, 2));
        p.spawn(|| {});
    }
    assert!(
        common::wait_until(Duration::from_secs(20), || task_count() <= base),
        "{} threads left, baseline {base}",
        task_count()
    );
}

/// Pools whose workers all exit at once, from four threads at a time. The stacks are
/// larger than glibc's stack cache (40 MiB), so an exited worker's stack is unmapped at
/// once. A registry whose last owner dropped (detached) the handle of a worker still on
/// its way out let glibc's `pthread_detach` read that worker's descriptor after the
/// worker had freed it, and crashed; each worker now detaches itself while it still runs
/// (`Registry::detach_own_thread`). The race is inside glibc and cannot be forced from
/// here: this test gives it its chances (the crash itself was seen in
/// `join_fast_path.rs` under qemu, 2 runs in 80). Each pool's workers must all have
/// started (a broadcast) so that every one of them exits on its own.
#[test]
fn dropped_pools_whose_workers_exit_at_once_never_crash() {
    watchdog(120, || {
        let droppers: Vec<_> = (0..4)
            .map(|_| {
                thread::spawn(|| {
                    for _ in 0..25 {
                        let pool = ThreadPoolBuilder::new()
                            .num_threads(16)
                            .stack_size(64 << 20)
                            .build()
                            .unwrap();
                        assert_eq!(
                            pool.broadcast(|ctx| ctx.index()),
                            (0..16).collect::<Vec<_>>()
                        );
                    }
                })
            })
            .collect();
        for dropper in droppers {
            dropper.join().unwrap();
        }
    });
}

/// A thread name with a NUL byte: `build` panics (std's `thread::Builder` rejects it;
/// rayon-core behaves the same) rather than returning `ThreadPoolBuildError`, but the
/// workers already started must still exit.
#[test]
fn nul_in_thread_name_leaves_no_threads_behind() {
    if ran_in_child(
        "nul_in_thread_name_leaves_no_threads_behind",
        30,
        "the scenario failed in its child process",
    ) {
        return;
    }
    quiet_expected_panics();
    let base = task_count();
    let exits = Arc::new(AtomicUsize::new(0));
    let e2 = exits.clone();
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| {
                if i == 2 {
                    "bad\0name".into()
                } else {
                    format!("w{i}")
                }
            })
            .exit_handler(move |_| {
                e2.fetch_add(1, SeqCst);
            })
            .build()
    }));
    assert!(
        !matches!(r, Ok(Ok(_))),
        "a NUL thread name cannot give a pool"
    );
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            task_count() <= base && exits.load(SeqCst) >= 2
        }),
        "started workers did not exit"
    );
}

/// `build_global` against the lazy initialisation of the global pool by a free function.
/// The global pool is per process, so each of three scenarios runs in a process of its
/// own: the child runs the first and starts this test twice more, with
/// `STEALPOOL_TEST_GLOBAL_ORDER` naming the scenario (`run_child` marks them as children
/// of this test, so `ran_in_child` lets them run it). The pool `build_global` asks for has
/// one thread more than the default, so the global pool's thread count tells who won.
///
/// * Lazy call first (forced): `build_global`'s `thread_name` closure, called for its last
///   worker after the others were started, blocks until another thread's free call has
///   built the default global pool. `build_global` then fails, and every worker it started
///   exits (its handlers are dropped once the last one has).
/// * `build_global` first (forced): it succeeds, and a free call that another thread
///   makes once it returned runs on its pool.
/// * Race (not forced): `build_global` and free calls from 8 threads lined up by a
///   barrier. At most one `build_global` succeeds, and every free call runs on the one
///   global pool, the built one exactly when a `build_global` succeeded.
///
/// In each, nobody hangs, and a later `build_global` fails.
#[test]
fn build_global_racing_lazy_init() {
    const NAME: &str = "build_global_racing_lazy_init";
    const ORDER: &str = "STEALPOOL_TEST_GLOBAL_ORDER";
    if ran_in_child(NAME, 60, "the scenario failed in its child process") {
        return;
    }
    let order = std::env::var(ORDER).ok();
    if order.is_none() {
        for scenario in ["build-first", "race"] {
            // Each scenario's own watchdog (20 s) ends it first.
            run_child(NAME, 25, &[(ORDER, OsStr::new(scenario))])
                .expect_success(&format!("scenario {scenario}"));
        }
    }
    let default =
        common::pools::expected_default_threads().expect("a thread count from the environment");
    let built = default + 1;
    watchdog(20, move || {
        let oks = match order.as_deref() {
            None => {
                let starts = common::Recorded::new();
                let exits = common::Recorded::new();
                let (s, e) = (Arc::clone(&starts), Arc::clone(&exits));
                let (naming_tx, naming_rx) = mpsc::channel();
                let (lazy_done_tx, lazy_done_rx) = mpsc::channel::<()>();
                let builder = thread::spawn(move || {
                    ThreadPoolBuilder::new()
                        .num_threads(built)
                        .start_handler(move |i| s.record(i))
                        .exit_handler(move |i| e.record(i))
                        .thread_name(move |i| {
                            if i == built - 1 {
                                naming_tx.send(()).unwrap();
                                lazy_done_rx.recv().unwrap();
                            }
                            format!("candidate-{i}")
                        })
                        .build_global()
                });
                naming_rx.recv().unwrap();
                let lazy =
                    thread::spawn(|| stealpool::join(stealpool::current_num_threads, || ()).0);
                assert_eq!(lazy.join().unwrap(), default);
                lazy_done_tx.send(()).unwrap();
                let err = builder
                    .join()
                    .unwrap()
                    .expect_err("build_global succeeded after the global pool was built");
                assert!(
                    err.to_string().contains("already been initialized"),
                    "{err}"
                );
                assert!(
                    common::wait_until(Duration::from_secs(10), || {
                        Arc::strong_count(&starts) == 1 && Arc::strong_count(&exits) == 1
                    }),
                    "the losing registry was not dropped (started {:?}, exited {:?})",
                    starts.sorted(),
                    exits.sorted()
                );
                assert_eq!(starts.sorted(), (0..built).collect::<Vec<_>>());
                assert_eq!(exits.sorted(), starts.sorted());
                0
            }
            Some("build-first") => {
                let (built_tx, built_rx) = mpsc::channel::<()>();
                let lazy = thread::spawn(move || {
                    built_rx.recv().unwrap();
                    stealpool::join(stealpool::current_num_threads, || ()).0
                });
                ThreadPoolBuilder::new()
                    .num_threads(built)
                    .build_global()
                    .expect("build_global before any free call");
                built_tx.send(()).unwrap();
                assert_eq!(lazy.join().unwrap(), built);
                1
            }
            Some("race") => {
                let go = Arc::new(Barrier::new(8));
                let hs: Vec<_> = (0..8)
                    .map(|i| {
                        let go = go.clone();
                        thread::spawn(move || {
                            go.wait();
                            if i % 2 == 0 {
                                let ok = ThreadPoolBuilder::new()
                                    .num_threads(built)
                                    .build_global()
                                    .is_ok();
                                (ok, None)
                            } else {
                                let (n, ()) =
                                    stealpool::join(stealpool::current_num_threads, || ());
                                (false, Some(n))
                            }
                        })
                    })
                    .collect();
                let results: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
                let global = stealpool::current_num_threads();
                for (_, n) in &results {
                    assert!(
                        n.map_or(true, |n| n == global),
                        "{results:?}: global {global}"
                    );
                }
                let oks = results.iter().filter(|(ok, _)| *ok).count();
                assert!(oks <= 1, "{results:?}");
                oks
            }
            Some(other) => panic!("{ORDER}={other}: no such scenario"),
        };
        assert_eq!(
            oks == 1,
            stealpool::current_num_threads() == built,
            "{oks} successful build_global calls, a global pool of {}",
            stealpool::current_num_threads()
        );
        assert!(ThreadPoolBuilder::new().build_global().is_err());
    });
}
