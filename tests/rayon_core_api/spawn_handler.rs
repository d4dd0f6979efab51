//! rayon-core 1.13's API: how a pool's worker threads are made. `spawn_handler` with
//! `ThreadBuilder`, `build_scoped`, `use_current_thread`.

use super::*;

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
        let starts = Recorded::new();
        let exits = Recorded::new();
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
        let exits = Recorded::new();
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
        // The watchdog's body runs on a fresh thread: it becomes worker 0 for the rest of
        // its life.
        let starts = Recorded::new();
        let exits = Recorded::new();
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
    // On a fresh thread (the watchdog's): it becomes worker 0.
    let calls = watchdog(TIMEOUT, || {
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
    });
    assert_eq!(calls, [0, 1]);
}
