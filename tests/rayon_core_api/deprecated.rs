//! rayon-core 1.13's API: Deprecated API: Configuration, initialize, ThreadPool::new, breadth_first.

use super::*;

#[test]
#[allow(deprecated)]
fn deprecated_configuration_and_thread_pool_new() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let starts = Recorded::new();
        let exits = Recorded::new();
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
