//! rayon-core 1.13's API: join, join_context, FnContext.

use super::*;

#[test]
fn join_returns_both_results() {
    watchdog(TIMEOUT, || {
        // Outside any pool: both halves run on workers of the global pool.
        let (a, b) = rayon_core::join(
            rayon_core::current_thread_index,
            rayon_core::current_thread_index,
        );
        let n = rayon_core::current_num_threads();
        assert!(matches!(a, Some(i) if i < n), "{a:?}");
        assert!(matches!(b, Some(i) if i < n), "{b:?}");
        assert_eq!(fib(15), 610);

        let pool = pool(3);
        let (x, y) = pool.install(|| rayon_core::join(|| 6 * 7, || "b".to_owned()));
        assert_eq!((x, y.as_str()), (42, "b"));
        assert_eq!(pool.install(|| fib(20)), 6765);

        // The halves may borrow mutably from the caller's stack.
        let mut data: Vec<u64> = (0..1000).collect();
        let (left, right) = data.split_at_mut(500);
        pool.join(
            || left.iter_mut().for_each(|x| *x *= 2),
            || right.iter_mut().for_each(|x| *x += 1),
        );
        assert_eq!(data[499], 998);
        assert_eq!(data[500], 501);

        // ThreadPool::join runs both halves on this pool's workers.
        let (ia, ib) = pool.join(
            || pool.current_thread_index(),
            || pool.current_thread_index(),
        );
        assert!(matches!(ia, Some(i) if i < 3), "{ia:?}");
        assert!(matches!(ib, Some(i) if i < 3), "{ib:?}");
    });
}

#[test]
fn join_context_migrated_when_called_from_outside() {
    watchdog(TIMEOUT, || {
        // From outside any pool the whole call is injected into the global
        // pool, so both closures count as migrated (rayon-core: `injected`).
        let (a, b) = rayon_core::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
        assert_eq!((a, b), (true, true));
    });
}

#[test]
fn join_context_not_migrated_on_the_calling_worker() {
    watchdog(TIMEOUT, || {
        // One worker, so nothing can be stolen: both run on the caller.
        let pool = pool(1);
        let (a, b) =
            pool.install(|| rayon_core::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated()));
        assert_eq!((a, b), (false, false));
        // Debug is derived (rayon-core lib.rs 839).
        let text = pool.install(|| rayon_core::join_context(|ctx| format!("{ctx:?}"), |_| ()).0);
        assert!(text.contains("FnContext"), "{text}");
        assert!(text.contains("migrated: false"), "{text}");
    });
}

#[test]
fn join_context_stolen_half_is_migrated() {
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let ((a_migrated, a_index, b_index), b_migrated) = pool.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon_core::join_context(
                move |ctx| {
                    // `a` waits until `b` has started, so `b` must have been
                    // stolen by the other worker.
                    let b_index = rx.recv().unwrap();
                    (
                        ctx.migrated(),
                        rayon_core::current_thread_index().unwrap(),
                        b_index,
                    )
                },
                move |ctx| {
                    tx.send(rayon_core::current_thread_index().unwrap())
                        .unwrap();
                    ctx.migrated()
                },
            )
        });
        assert!(!a_migrated);
        assert!(b_migrated);
        assert_ne!(a_index, b_index);
    });
}

#[test]
fn join_panics_propagate_after_both_halves_ran() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        // `a` panics: `b` still runs, `a`'s panic is re-raised.
        let b_ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.join(
                || panic!("{}", expected("join a")),
                || b_ran.fetch_add(1, Ordering::SeqCst),
            )
        })
        .unwrap_err();
        assert_eq!(err, expected("join a"));
        assert_eq!(b_ran.load(Ordering::SeqCst), 1);

        // Only `b` panics: its panic is re-raised after `a` finished.
        let a_ran = AtomicUsize::new(0);
        let err = catch(|| {
            pool.install(|| {
                rayon_core::join(
                    || a_ran.fetch_add(1, Ordering::SeqCst),
                    || panic!("{}", expected("join b")),
                )
            })
        })
        .unwrap_err();
        assert_eq!(err, expected("join b"));
        assert_eq!(a_ran.load(Ordering::SeqCst), 1);

        // Both panic: `a`'s panic wins (rayon-core join/mod.rs 93).
        let err = catch(|| {
            pool.join(
                || panic!("{}", expected("join both a")),
                || panic!("{}", expected("join both b")),
            )
        })
        .unwrap_err();
        assert_eq!(err, expected("join both a"));

        // The pool still works.
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
    });
}
