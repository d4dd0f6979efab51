//! rayon-core 1.13's API: yield_now, yield_local, Yield.

use super::*;

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
/// A deliberate difference in scheduling order (`docs/rayon-core.md`, "Differences from rayon-core"):
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
