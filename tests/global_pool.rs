//! The global pool is per process, so this binary has a single test that
//! configures it with `build_global` before anything else can touch it.

mod common;

use std::sync::mpsc;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

const WAIT: Duration = Duration::from_secs(10);

fn name() -> String {
    thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[test]
fn build_global_configures_the_free_functions() {
    watchdog(60, || {
        ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| format!("global-worker-{i}"))
            .build_global()
            .expect("first build_global failed");

        // Outside any pool the free functions use the global pool.
        assert_eq!(stealpool::current_num_threads(), 3);
        assert_eq!(stealpool::current_thread_index(), None);

        let ((ia, na), (ib, nb)) = stealpool::join(
            || (stealpool::current_thread_index(), name()),
            || (stealpool::current_thread_index(), name()),
        );
        for (index, name) in [(ia, na), (ib, nb)] {
            assert!(
                index.is_some_and(|i| i < 3),
                "join closure off the global pool"
            );
            assert_eq!(name, format!("global-worker-{}", index.unwrap()));
        }

        let (tx, rx) = mpsc::channel();
        stealpool::spawn(move || {
            tx.send((
                stealpool::current_thread_index(),
                name(),
                stealpool::current_num_threads(),
            ))
            .unwrap();
        });
        let (index, name_seen, threads) = rx.recv_timeout(WAIT).expect("global spawn never ran");
        assert!(index.is_some_and(|i| i < 3));
        assert!(
            name_seen.starts_with("global-worker-"),
            "ran on {name_seen}"
        );
        assert_eq!(threads, 3);

        let seen = Mutex::new(Vec::new());
        stealpool::scope(|s| {
            for _ in 0..16 {
                s.spawn(|_| seen.lock().unwrap().push(name()));
            }
        });
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 16);
        assert!(
            seen.iter().all(|n| n.starts_with("global-worker-")),
            "{seen:?}"
        );

        // A second build_global fails and leaves the global pool alone.
        let err = ThreadPoolBuilder::new()
            .num_threads(5)
            .build_global()
            .expect_err("second build_global succeeded");
        let msg = err.to_string().to_lowercase();
        assert!(
            msg.contains("already") && msg.contains("initiali"),
            "error does not say the global pool is already initialized: {err}"
        );
        assert_eq!(stealpool::current_num_threads(), 3);
        let (a, b) = stealpool::join(|| 40, || 2);
        assert_eq!(a + b, 42);

        // A pool built separately does not replace the global one.
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(stealpool::current_num_threads), 2);
        assert_eq!(stealpool::current_num_threads(), 3);
    });
}
