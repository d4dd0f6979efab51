//! rayon-core 1.13's API: ThreadPoolBuilder's options, `Debug`, errors and the global
//! pool (`spawn_handler.rs`: how the worker threads are made).

use super::*;

#[test]
fn builder_new_and_default_use_the_default_thread_count() {
    watchdog(TIMEOUT, || {
        let a = ThreadPoolBuilder::new().build().unwrap();
        let b = ThreadPoolBuilder::default().build().unwrap();
        assert_eq!(a.current_num_threads(), b.current_num_threads());
        assert!(a.current_num_threads() >= 1);
        if let Some(n) = common::pools::expected_default_threads() {
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
        let starts = Recorded::new();
        let exits = Recorded::new();
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
        let starts = Recorded::new();
        let exits = Recorded::new();
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
        // The failed build's registry, and with it the handlers, is dropped once the last
        // thread it started has run its exit handler: then both tallies are final. At
        // most the first thread may have started; whatever started has exited.
        assert!(
            common::wait_until(WAIT, || {
                Arc::strong_count(&starts) == 1 && Arc::strong_count(&exits) == 1
            }),
            "the failed build still holds its handlers (started {:?}, exited {:?})",
            starts.sorted(),
            exits.sorted()
        );
        let started = starts.count();
        assert!(started <= 1, "{started} threads started");
        assert_eq!(exits.sorted(), starts.sorted());
    });
}

#[test]
fn builder_start_and_exit_handlers_run_once_per_worker_on_that_worker() {
    watchdog(TIMEOUT, || {
        let starts = Arc::new(Mutex::new(Vec::new()));
        let exits = Recorded::new();
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
