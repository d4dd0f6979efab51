//! `build()` failures: they are reported (as an `Err`, or for a panicking
//! `thread_name` closure as a panic out of `build`), never leave threads
//! behind, and release the builder's closures.

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use common::{payload_str, quiet_expected_panics, wait_until, watchdog, Recorded, EXPECTED};
use stealpool::ThreadPoolBuilder;

const WAIT: Duration = Duration::from_secs(20);

/// Waits until every thread that ran `start_handler` has also run
/// `exit_handler` and the pool's copies of the handlers are gone (that is,
/// no worker and no registry survived the failed build), then checks it.
fn assert_all_started_threads_exited(started: &Arc<Recorded>, exited: &Arc<Recorded>) {
    let released = wait_until(WAIT, || {
        Arc::strong_count(started) == 1 && Arc::strong_count(exited) == 1
    });
    assert!(
        released,
        "the failed build still holds its start/exit handlers after {WAIT:?} \
         (started = {:?}, exited = {:?}): leaked worker thread or registry",
        started.sorted(),
        exited.sorted()
    );
    assert_eq!(
        started.sorted(),
        exited.sorted(),
        "threads that started must all have exited"
    );
}

#[test]
fn absurd_stack_size_makes_build_return_err() {
    watchdog(60, || {
        let started = Recorded::new();
        let exited = Recorded::new();
        let result = {
            let started = Arc::clone(&started);
            let exited = Arc::clone(&exited);
            panic::catch_unwind(AssertUnwindSafe(|| {
                ThreadPoolBuilder::new()
                    .num_threads(4)
                    .stack_size(usize::MAX / 2)
                    .start_handler(move |i| started.record(i))
                    .exit_handler(move |i| exited.record(i))
                    .build()
            }))
        };
        match result {
            Err(_) => panic!("build() panicked instead of returning Err"),
            Ok(Ok(_)) => panic!("build() succeeded with a stack of usize::MAX / 2 bytes"),
            Ok(Err(err)) => {
                assert!(!err.to_string().is_empty(), "empty error message");
                // As in rayon-core, the cause is the OS error from spawning.
                let source = std::error::Error::source(&err)
                    .expect("error for a thread that could not start has no source()");
                assert!(
                    source.downcast_ref::<std::io::Error>().is_some(),
                    "source() is not the io::Error: {source:?}"
                );
            }
        }
        assert_all_started_threads_exited(&started, &exited);
        println!("workers started (all exited): {:?}", started.sorted());
        // The process can still build pools.
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(|| 1), 1);
    });
}

/// rayon-core calls `thread_name(i)` right before spawning worker `i`, so a
/// panic in it propagates out of `build()` and the workers already started
/// are told to terminate. We accept that or an `Err` from `build()`; a pool
/// must not be returned, and every thread that started must exit.
#[test]
fn panicking_thread_name_fails_the_build_and_stops_started_threads() {
    quiet_expected_panics();
    watchdog(60, || {
        let started = Recorded::new();
        let exited = Recorded::new();
        let result = {
            let started = Arc::clone(&started);
            let exited = Arc::clone(&exited);
            panic::catch_unwind(AssertUnwindSafe(|| {
                ThreadPoolBuilder::new()
                    .num_threads(4)
                    .thread_name(|i| {
                        if i >= 2 {
                            panic!("{EXPECTED} thread_name({i})");
                        }
                        format!("named-{i}")
                    })
                    .start_handler(move |i| started.record(i))
                    .exit_handler(move |i| exited.record(i))
                    .build()
            }))
        };
        match result {
            Ok(Ok(_)) => panic!("build() returned a pool although thread_name panicked"),
            Ok(Err(err)) => assert!(!err.to_string().is_empty()),
            Err(payload) => {
                assert_eq!(
                    payload_str(&*payload),
                    Some(format!("{EXPECTED} thread_name(2)").as_str())
                )
            }
        }
        assert_all_started_threads_exited(&started, &exited);
        let s = started.sorted();
        println!("workers started before the panic (all exited): {s:?}");
        assert!(s.iter().all(|&i| i < 2), "a worker >= 2 started: {s:?}");
    });
}
