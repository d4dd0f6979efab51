//! A pool's life: `install` into its own pool, handlers that use the free functions, the
//! last handle dropped inside the pool's own job, pools built and dropped many times,
//! `build` failing half-way, `build_global` racing the lazy global pool or called from
//! its own `thread_name` closure. Scenarios that need a fresh process (the global pool,
//! thread counts) run in a child process (`common::child`).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use stealpool::ThreadPoolBuilder;

mod common;

use common::child::{child, ran_in_child, task_count};
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
// offered to the `OnceLock` (`pool/registry/global.rs`). rayon-core 1.13 deadlocks.

/// A hang is killed after the timeout and fails the test.
#[test]
fn build_global_with_thread_name_calling_a_free_function_does_not_hang() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child(
        "build_global_with_thread_name_calling_a_free_function_does_not_hang",
        5,
    ) {
        assert!(
            run.status.is_some(),
            "build_global deadlocked: its thread_name closure called \
             stealpool::current_num_threads()\n--- child output ---\n{}",
            run.output
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

/// build_global raced against lazy initialisation from many threads: at most one
/// build_global succeeds, nobody hangs, and later build_global calls fail.
#[test]
fn build_global_racing_lazy_init() {
    if ran_in_child(
        "build_global_racing_lazy_init",
        30,
        "the scenario failed in its child process",
    ) {
        return;
    }
    let go = Arc::new(Barrier::new(8));
    let hs: Vec<_> = (0..8)
        .map(|i| {
            let go = go.clone();
            thread::spawn(move || {
                go.wait();
                if i % 2 == 0 {
                    ThreadPoolBuilder::new()
                        .num_threads(3)
                        .build_global()
                        .is_ok()
                } else {
                    let (n, ()) = stealpool::join(stealpool::current_num_threads, || ());
                    assert!(n > 0);
                    false
                }
            })
        })
        .collect();
    let oks: usize = hs.into_iter().map(|h| h.join().unwrap() as usize).sum();
    assert!(oks <= 1);
    assert!(ThreadPoolBuilder::new().build_global().is_err());
}
