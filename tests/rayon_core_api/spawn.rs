//! rayon-core 1.13's API: spawn, spawn_fifo, panic_handler.

use super::*;

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

/// A job still pending (blocked on a gate) when the pool's last handle is dropped keeps
/// the workers alive: none exits within a detection window after the drop, and all of
/// them exit once the job (and the job it spawns) has run.
#[test]
fn spawned_jobs_keep_a_dropped_pool_alive() {
    watchdog(TIMEOUT, || {
        let exits = Recorded::new();
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
        // The spawned job holds the pool, so no worker may exit. Workers exit on their own
        // threads, after the drop has returned: this is a detection window in which an
        // early exit would be seen, not synchronisation.
        assert!(
            !common::wait_until(Duration::from_millis(500), || exits.count() > 0),
            "workers exited while a spawned job was pending: {:?}",
            exits.sorted()
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
