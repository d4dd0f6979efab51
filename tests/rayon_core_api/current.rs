//! rayon-core 1.13's API: current_thread_index, current_num_threads, current_thread_has_pending_tasks, max_num_threads.

use super::*;

#[test]
fn current_thread_index_outside_and_inside() {
    watchdog(TIMEOUT, || {
        assert_eq!(rayon_core::current_thread_index(), None);
        let pool1 = pool(4);
        let pool2 = pool(2);
        assert_eq!(pool1.current_thread_index(), None);
        let indices = pool1.broadcast(|_| {
            (
                rayon_core::current_thread_index(),
                pool1.current_thread_index(),
                pool2.current_thread_index(),
            )
        });
        let want: Vec<_> = (0..4).map(|i| (Some(i), Some(i), None)).collect();
        assert_eq!(indices, want);
        // From pool1 into pool2: the index is pool2's now.
        let nested = pool1.install(|| {
            pool2.install(|| (pool1.current_thread_index(), pool2.current_thread_index()))
        });
        assert!(nested.0.is_none());
        assert!(matches!(nested.1, Some(i) if i < 2), "{nested:?}");
    });
}

#[test]
fn current_num_threads_outside_and_inside() {
    watchdog(TIMEOUT, || {
        // Outside any pool: the global pool's size.
        let global = rayon_core::current_num_threads();
        assert!(global >= 1);
        assert_eq!(rayon_core::broadcast(|ctx| ctx.num_threads())[0], global);
        if let Some(n) = common::pools::expected_default_threads() {
            assert_eq!(global, n);
        }
        let pool1 = pool(3);
        let pool2 = pool(5);
        assert_eq!(pool1.current_num_threads(), 3);
        assert_eq!(pool2.current_num_threads(), 5);
        assert_eq!(pool1.install(rayon_core::current_num_threads), 3);
        assert_eq!(
            pool1.install(|| pool2.install(rayon_core::current_num_threads)),
            5
        );
    });
}

#[test]
fn current_thread_has_pending_tasks_outside_and_inside() {
    watchdog(TIMEOUT, || {
        assert_eq!(rayon_core::current_thread_has_pending_tasks(), None);
        let pool = pool(1);
        let other = self::pool(1);
        assert_eq!(pool.current_thread_has_pending_tasks(), None);
        assert_eq!(
            other.install(|| pool.current_thread_has_pending_tasks()),
            None
        );
        assert_eq!(
            other.install(rayon_core::current_thread_has_pending_tasks),
            Some(false)
        );
        // While `a` runs, `b` waits in the (one-thread) worker's deque.
        let (a, b) = pool.join(
            rayon_core::current_thread_has_pending_tasks,
            rayon_core::current_thread_has_pending_tasks,
        );
        assert_eq!((a, b), (Some(true), Some(false)));
    });
}

#[test]
fn max_num_threads_value() {
    let max = rayon_core::max_num_threads();
    #[cfg(target_pointer_width = "64")]
    assert_eq!(max, 0xFFFF);
    #[cfg(target_pointer_width = "32")]
    assert_eq!(max, 0xFF);
    assert!(max >= 1);
}
