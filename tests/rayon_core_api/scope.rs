//! rayon-core 1.13's API: scope, scope_fifo, Scope::spawn, ScopeFifo::spawn_fifo.

use super::*;

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
        assert_all_ran_on_the_pool(seen, 10, 3);

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
        assert_all_ran_on_the_pool(seen, 10, 3);
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
