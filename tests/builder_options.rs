//! The builder's options, one by one: `num_threads` (and 0 for the default),
//! `thread_name`, the start and exit handlers, `stack_size`.
//!
//! This binary never sets environment variables (see `env_threads.rs`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::pools::{expected_default_threads, run_on_all_workers};
use common::{watchdog, Recorded};
use stealpool::ThreadPoolBuilder;

const TIMEOUT: u64 = 30;
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn num_threads_is_honoured() {
    watchdog(TIMEOUT, || {
        for n in [1, 2, 3, 5] {
            let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
            assert_eq!(pool.current_num_threads(), n);
            assert_eq!(pool.install(stealpool::current_num_threads), n);
            // All n workers exist and can run at the same time.
            assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        }
    });
}

#[test]
fn zero_threads_means_default() {
    watchdog(TIMEOUT, || {
        let expected = expected_default_threads();
        let builders = [
            ("new()", ThreadPoolBuilder::new()),
            ("default()", ThreadPoolBuilder::default()),
            ("num_threads(0)", ThreadPoolBuilder::new().num_threads(0)),
            (
                "num_threads(7).num_threads(0)",
                ThreadPoolBuilder::new().num_threads(7).num_threads(0),
            ),
        ];
        for (what, builder) in builders {
            match (builder.build(), expected) {
                (Ok(pool), Some(n)) => {
                    assert_eq!(pool.current_num_threads(), n, "{what}");
                    assert_eq!(pool.install(stealpool::current_num_threads), n, "{what}");
                }
                (Err(e), None) => assert!(e.to_string().contains("STEALPOOL_NUM_THREADS")),
                (Ok(_), None) => {
                    panic!("{what}: built despite a non-numeric STEALPOOL_NUM_THREADS")
                }
                (Err(e), Some(_)) => panic!("{what}: build failed: {e}"),
            }
        }
    });
}

#[test]
fn thread_name_visible_inside_install() {
    watchdog(TIMEOUT, || {
        let n = 3;
        let pool = ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("api-named-{i}"))
            .build()
            .unwrap();
        let (index, name) = pool.install(|| {
            (
                stealpool::current_thread_index().unwrap(),
                thread::current().name().map(str::to_owned),
            )
        });
        assert_eq!(name.as_deref(), Some(format!("api-named-{index}").as_str()));

        // Every worker carries the name built from its own index.
        let names = Mutex::new(Vec::new());
        let barrier = std::sync::Barrier::new(n);
        pool.scope(|s| {
            for _ in 0..n {
                s.spawn(|_| {
                    barrier.wait();
                    let i = stealpool::current_thread_index().unwrap();
                    let name = thread::current().name().unwrap().to_owned();
                    names.lock().unwrap().push((i, name));
                });
            }
        });
        let mut names = names.into_inner().unwrap();
        names.sort();
        let expected: Vec<_> = (0..n).map(|i| (i, format!("api-named-{i}"))).collect();
        assert_eq!(names, expected);
    });
}

#[test]
fn start_handler_runs_once_per_worker_on_that_worker() {
    watchdog(TIMEOUT, || {
        let n = 4;
        let started = Recorded::new();
        let wrong_thread = Arc::new(AtomicUsize::new(0));
        let pool = {
            let started = Arc::clone(&started);
            let wrong_thread = Arc::clone(&wrong_thread);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("api-start-{i}"))
                .start_handler(move |i| {
                    if thread::current().name() != Some(format!("api-start-{i}").as_str()) {
                        wrong_thread.fetch_add(1, Ordering::SeqCst);
                    }
                    started.record(i);
                })
                .build()
                .unwrap()
        };
        assert_eq!(started.wait_for(n, WAIT), n, "start_handler calls");
        // Using every worker must not start anything again.
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        pool.install(|| stealpool::join(|| (), || ()));
        assert_eq!(started.sorted(), (0..n).collect::<Vec<_>>());
        assert_eq!(
            wrong_thread.load(Ordering::SeqCst),
            0,
            "start_handler(i) ran on a thread not named for worker i"
        );
    });
}

#[test]
fn exit_handler_runs_once_per_worker_after_drop() {
    watchdog(TIMEOUT, || {
        let n = 3;
        let started = Recorded::new();
        let exited = Recorded::new();
        let pool = {
            let started = Arc::clone(&started);
            let exited = Arc::clone(&exited);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .start_handler(move |i| started.record(i))
                .exit_handler(move |i| exited.record(i))
                .build()
                .unwrap()
        };
        assert_eq!(started.wait_for(n, WAIT), n);
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        assert_eq!(
            exited.count(),
            0,
            "exit_handler ran while the pool is alive"
        );

        drop(pool);
        assert_eq!(exited.wait_for(n, WAIT), n, "exit_handler calls after drop");
        assert_eq!(exited.sorted(), (0..n).collect::<Vec<_>>());
        assert_eq!(started.count(), n);
    });
}

#[test]
fn stack_size_is_honoured() {
    // Uses ~4 MiB of stack, twice the 2 MiB that Rust gives threads by
    // default: without a working `stack_size` the worker overflows its stack.
    fn deep(depth: usize) -> u64 {
        let frame = std::hint::black_box([depth as u8; 64 * 1024]);
        if depth == 0 {
            frame.iter().map(|&b| u64::from(b)).sum()
        } else {
            deep(depth - 1) + u64::from(frame[depth % frame.len()])
        }
    }
    watchdog(TIMEOUT, || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(1)
            .stack_size(32 << 20)
            .build()
            .unwrap();
        let sum = pool.install(|| deep(64));
        assert_eq!(sum, (1..=64u64).sum::<u64>());
    });
}
