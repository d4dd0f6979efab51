//! rayon-core 1.13's API: broadcast, spawn_broadcast, BroadcastContext.

use super::*;

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
