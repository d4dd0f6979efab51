//! The public API, item by item: `ThreadPool` methods, the free functions and `Scope`
//! (`builder_options.rs` holds the builder's options).
//!
//! This binary never sets environment variables (see `env_threads.rs`) and
//! never configures the global pool explicitly except in
//! `build_error_display_and_error_trait`, which builds it with the default
//! settings, i.e. the same pool the lazy initialisation would create.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::pools::{expected_default_threads, run_on_all_workers};
use common::{watchdog, Recorded};
use stealpool::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

const TIMEOUT: u64 = 30;
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn pool_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ThreadPool>();
    assert_send_sync::<ThreadPoolBuildError>();
}

#[test]
fn install_returns_values() {
    watchdog(TIMEOUT, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(|| 6 * 7), 42);
        assert_eq!(pool.install(|| String::from("owned")), "owned");
        let data: Vec<u64> = (1..=1000).collect();
        let caller = thread::current().id();
        let (sum, on_worker, other_thread) = pool.install(|| {
            (
                data.iter().sum::<u64>(),
                pool.current_thread_index().is_some(),
                thread::current().id() != caller,
            )
        });
        assert_eq!(sum, 500_500);
        assert!(
            on_worker,
            "install closure did not run on a worker of the pool"
        );
        assert!(other_thread, "install closure ran on the calling thread");
    });
}

#[test]
fn install_inside_own_worker_runs_inline() {
    watchdog(TIMEOUT, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let (outer, inner, value) = pool.install(|| {
            let outer = thread::current().id();
            let (inner, value) = pool.install(|| (thread::current().id(), pool.install(|| 5) + 1));
            (outer, inner, value)
        });
        assert_eq!(outer, inner, "nested install left the worker thread");
        assert_eq!(value, 6);
    });
}

#[test]
fn install_into_another_pool_from_a_worker() {
    watchdog(TIMEOUT, || {
        let a = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("api-other-{i}"))
            .build()
            .unwrap();
        let (in_a, in_b, name) = a.install(|| {
            b.install(|| {
                (
                    a.current_thread_index(),
                    b.current_thread_index(),
                    thread::current().name().map(str::to_owned),
                )
            })
        });
        assert_eq!(in_a, None);
        assert!(in_b.is_some_and(|i| i < 2));
        assert!(name.unwrap().starts_with("api-other-"));
    });
}

#[test]
fn current_thread_index_outside_and_inside() {
    watchdog(TIMEOUT, || {
        let n = 3;
        assert_eq!(stealpool::current_thread_index(), None);
        let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert_eq!(pool.current_thread_index(), None);

        let (free, method, in_other) = pool.install(|| {
            (
                stealpool::current_thread_index(),
                pool.current_thread_index(),
                other.current_thread_index(),
            )
        });
        let index = free.expect("current_thread_index() is None inside install");
        assert!(index < n);
        assert_eq!(method, Some(index));
        assert_eq!(in_other, None, "index reported for a pool we are not in");

        // Every index in 0..n is used.
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        // Still None on the test thread afterwards.
        assert_eq!(stealpool::current_thread_index(), None);
        assert_eq!(pool.current_thread_index(), None);
    });
}

#[test]
fn current_num_threads_outside_and_inside() {
    watchdog(TIMEOUT, || {
        // Outside any pool: the global pool, which has the default size.
        let expected = expected_default_threads().expect("bad STEALPOOL_NUM_THREADS");
        assert_eq!(stealpool::current_num_threads(), expected);

        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        assert_eq!(pool.current_num_threads(), 3);
        assert_eq!(pool.install(stealpool::current_num_threads), 3);
        // Still the global pool's size outside.
        assert_eq!(stealpool::current_num_threads(), expected);
    });
}

#[test]
fn join_returns_both_results() {
    watchdog(TIMEOUT, || {
        // Free join from outside any pool (global pool).
        let (a, b) = stealpool::join(|| 1 + 1, || String::from("b"));
        assert_eq!((a, b.as_str()), (2, "b"));

        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (a, b) = pool.join(|| vec![1, 2, 3], || "right");
        assert_eq!((a, b), (vec![1, 2, 3], "right"));

        // Both closures of a join inside the pool run on the pool's workers.
        let (a, b) = pool.install(|| {
            stealpool::join(
                || pool.current_thread_index(),
                || pool.current_thread_index(),
            )
        });
        assert!(a.is_some() && b.is_some());

        // Borrowed, mutably split data.
        let mut data = vec![0u32; 1000];
        let (left, right) = data.split_at_mut(500);
        pool.join(
            || left.iter_mut().for_each(|x| *x = 1),
            || right.iter_mut().for_each(|x| *x = 2),
        );
        assert!(data[..500].iter().all(|&x| x == 1));
        assert!(data[500..].iter().all(|&x| x == 2));

        // Recursive join computes the right thing.
        fn sum(v: &[u64]) -> u64 {
            if v.len() <= 8 {
                return v.iter().sum();
            }
            let (l, r) = v.split_at(v.len() / 2);
            let (a, b) = stealpool::join(|| sum(l), || sum(r));
            a + b
        }
        let v: Vec<u64> = (0..10_000).collect();
        assert_eq!(pool.install(|| sum(&v)), 10_000 * 9_999 / 2);
    });
}

#[test]
fn scope_spawns_mutate_borrowed_data() {
    watchdog(TIMEOUT, || {
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut data = vec![0usize; 200];
        let total = AtomicUsize::new(0);
        let ret = pool.scope(|s| {
            for (i, x) in data.iter_mut().enumerate() {
                let total = &total;
                s.spawn(move |_| {
                    *x = i * 2;
                    total.fetch_add(i, Ordering::SeqCst);
                });
            }
            "scope result"
        });
        assert_eq!(ret, "scope result");
        assert_eq!(data, (0..200).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(total.load(Ordering::SeqCst), 199 * 200 / 2);

        // Free scope from outside any pool (global pool).
        let mut words = vec![String::new(); 10];
        stealpool::scope(|s| {
            for (i, w) in words.iter_mut().enumerate() {
                s.spawn(move |_| *w = format!("w{i}"));
            }
        });
        assert_eq!(words, (0..10).map(|i| format!("w{i}")).collect::<Vec<_>>());
    });
}

#[test]
fn scope_spawn_nested() {
    watchdog(TIMEOUT, || {
        // A binary tree of nested Scope::spawn calls, depth 10: 2047 tasks.
        fn grow<'s>(s: &stealpool::Scope<'s>, depth: u32, count: &'s AtomicUsize) {
            count.fetch_add(1, Ordering::SeqCst);
            if depth > 0 {
                s.spawn(move |s| grow(s, depth - 1, count));
                s.spawn(move |s| grow(s, depth - 1, count));
            }
        }
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let count = AtomicUsize::new(0);
        pool.scope(|s| s.spawn(|s| grow(s, 10, &count)));
        // scope returns only after every nested task has finished.
        assert_eq!(count.load(Ordering::SeqCst), (1 << 11) - 1);

        // Nested spawns may borrow data from outside the scope.
        let mut cells = vec![0u32; 64];
        pool.scope(|s| {
            for chunk in cells.chunks_mut(8) {
                s.spawn(move |s| {
                    for c in chunk.iter_mut() {
                        s.spawn(move |_| *c += 1);
                    }
                });
            }
        });
        assert!(cells.iter().all(|&c| c == 1));
    });
}

#[test]
fn free_functions_inside_a_worker_use_that_pool() {
    watchdog(TIMEOUT, || {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .num_threads(2)
                .thread_name(|i| format!("api-free-{i}"))
                .build()
                .unwrap(),
        );

        // Free spawn from a worker: runs in that worker's pool.
        let (tx, rx) = mpsc::channel();
        {
            let p = Arc::clone(&pool);
            pool.install(move || {
                stealpool::spawn(move || {
                    let name = thread::current().name().map(str::to_owned);
                    tx.send((p.current_thread_index(), name)).unwrap();
                });
            });
        }
        let (index, name) = rx.recv_timeout(WAIT).expect("spawned job never ran");
        assert!(index.is_some_and(|i| i < 2), "free spawn left the pool");
        assert!(name.unwrap().starts_with("api-free-"));

        // Free spawn from outside any pool: runs in the global pool instead.
        let (tx, rx) = mpsc::channel();
        {
            let p = Arc::clone(&pool);
            stealpool::spawn(move || {
                let name = thread::current().name().map(str::to_owned);
                let global_index = stealpool::current_thread_index();
                tx.send((p.current_thread_index(), global_index, name))
                    .unwrap();
            });
        }
        let (index, global_index, name) = rx.recv_timeout(WAIT).expect("global job never ran");
        assert_eq!(index, None, "free spawn from outside ran in our pool");
        assert!(global_index.is_some(), "free spawn did not run on a worker");
        assert!(!name.is_some_and(|n| n.starts_with("api-free-")));

        // Free join, scope and current_num_threads inside a worker use that pool.
        let (a, b, in_scope, threads) = pool.install(|| {
            let (a, b) = stealpool::join(
                || pool.current_thread_index(),
                || pool.current_thread_index(),
            );
            let in_scope = Mutex::new(Vec::new());
            stealpool::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|_| in_scope.lock().unwrap().push(pool.current_thread_index()));
                }
            });
            (
                a,
                b,
                in_scope.into_inner().unwrap(),
                stealpool::current_num_threads(),
            )
        });
        assert!(a.is_some() && b.is_some());
        assert_eq!(in_scope.len(), 8);
        assert!(in_scope.iter().all(Option::is_some));
        assert_eq!(threads, 2);
    });
}

#[test]
fn pool_spawn_delivers_through_channel() {
    watchdog(TIMEOUT, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(3).build().unwrap());
        let (tx, rx) = mpsc::channel();
        for i in 0..100usize {
            let tx = tx.clone();
            let p = Arc::clone(&pool);
            pool.spawn(move || {
                let on_worker = p.current_thread_index().is_some();
                tx.send((i, on_worker)).unwrap();
            });
        }
        drop(tx);
        let mut got = Vec::new();
        for _ in 0..100 {
            got.push(rx.recv_timeout(WAIT).expect("a spawned job never ran"));
        }
        assert!(got.iter().all(|&(_, on_worker)| on_worker));
        let mut indices: Vec<usize> = got.into_iter().map(|(i, _)| i).collect();
        indices.sort_unstable();
        assert_eq!(indices, (0..100).collect::<Vec<_>>());
        // Nothing more arrives, and every job's closure (holding a sender)
        // was dropped after it ran.
        assert_eq!(rx.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
    });
}

#[test]
fn spawned_jobs_all_run_even_if_the_pool_is_dropped() {
    watchdog(TIMEOUT, || {
        let ran = Arc::new(AtomicUsize::new(0));
        let exited = Recorded::new();
        let (tx, rx) = mpsc::channel::<()>();
        let gate = Arc::new(AtomicBool::new(false));
        let pool = {
            let exited = Arc::clone(&exited);
            ThreadPoolBuilder::new()
                .num_threads(2)
                .exit_handler(move |i| exited.record(i))
                .build()
                .unwrap()
        };
        for _ in 0..1000 {
            let ran = Arc::clone(&ran);
            let tx = tx.clone();
            let gate = Arc::clone(&gate);
            pool.spawn(move || {
                while !gate.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
                ran.fetch_add(1, Ordering::SeqCst);
                drop(tx);
            });
        }
        drop(tx);
        // Drop while (most) jobs are still queued, then let them go. Like
        // rayon's, the drop must return without waiting for the jobs.
        let (dropped_tx, dropped_rx) = mpsc::channel();
        thread::spawn(move || {
            drop(pool);
            dropped_tx.send(()).unwrap();
        });
        let dropped = dropped_rx.recv_timeout(WAIT);
        gate.store(true, Ordering::SeqCst);
        assert!(
            dropped.is_ok(),
            "dropping the ThreadPool blocked while spawned jobs were still pending"
        );
        // The channel disconnects once every job (each holding a sender) is done.
        assert_eq!(
            rx.recv_timeout(WAIT),
            Err(RecvTimeoutError::Disconnected),
            "not all jobs spawned before the drop finished"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 1000);
        assert_eq!(exited.wait_for(2, WAIT), 2);
    });
}

#[test]
fn build_error_display_and_error_trait() {
    watchdog(TIMEOUT, || {
        // The first call may or may not win (the global pool may already
        // exist); either way the second one must fail.
        let _ = ThreadPoolBuilder::new().build_global();
        let err = ThreadPoolBuilder::new()
            .build_global()
            .expect_err("second build_global succeeded");
        assert!(!err.to_string().trim().is_empty(), "empty Display");
        assert!(!format!("{err:?}").is_empty(), "empty Debug");
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
        assert!(!boxed.to_string().is_empty());
        // The global pool still works and has the default size.
        let expected = expected_default_threads().expect("bad STEALPOOL_NUM_THREADS");
        assert_eq!(stealpool::current_num_threads(), expected);
        assert_eq!(stealpool::join(|| 1, || 2), (1, 2));
    });
}
