//! Panic propagation out of `join`, `scope` and `install`, `panic_handler`
//! for `spawn`, and pools surviving many panicking jobs.
//!
//! Every test first calls `common::quiet_expected_panics()`, which installs a
//! process-wide panic hook (shared by all tests of this binary, which run in
//! parallel) that silences deliberate panics (messages starting with
//! `common::EXPECTED` or an `ExpectedPayload` payload) and counts them; any
//! other panic, such as a failing assertion, is printed by the default hook.

mod common;

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::panics::{expected_panic_count, ExpectedPayload};
use common::pools::{pool_with_counting_handler, run_on_all_workers};
use common::{payload_str, quiet_expected_panics, watchdog, Recorded, EXPECTED};
use stealpool::ThreadPoolBuilder;

const TIMEOUT: u64 = 60;
const WAIT: Duration = Duration::from_secs(30);

fn expect_panic_with<R>(what: &str, expected: &str, f: impl FnOnce() -> R) {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("{what}: no panic propagated"),
        Err(payload) => assert_eq!(
            payload_str(&*payload),
            Some(expected),
            "{what}: wrong panic payload"
        ),
    }
}

/// A pool whose panic handler counts calls, to check that panics which have
/// a caller to go to do not reach the handler.
#[test]
fn join_propagates_panics_and_runs_both_closures() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (pool, handled) = pool_with_counting_handler(2);
        let msg_a = format!("{EXPECTED} join A");
        let msg_b = format!("{EXPECTED} join B");

        // Run each case both via ThreadPool::join from outside and via the
        // free join on a worker.
        for inside in [false, true] {
            let join = |a: &(dyn Fn() + Sync), b: &(dyn Fn() + Sync)| {
                if inside {
                    pool.install(|| stealpool::join(a, b));
                } else {
                    pool.join(a, b);
                }
            };

            // A panics: its payload propagates, and B still ran.
            let b_ran = AtomicBool::new(false);
            expect_panic_with("A panics", &msg_a, || {
                join(&|| panic!("{msg_a}"), &|| {
                    b_ran.store(true, Ordering::SeqCst)
                })
            });
            assert!(
                b_ran.load(Ordering::SeqCst),
                "B skipped after A panicked (inside={inside})"
            );

            // B panics: its payload propagates, and A ran.
            let a_ran = AtomicBool::new(false);
            expect_panic_with("B panics", &msg_b, || {
                join(&|| a_ran.store(true, Ordering::SeqCst), &|| {
                    panic!("{msg_b}")
                })
            });
            assert!(
                a_ran.load(Ordering::SeqCst),
                "A skipped when B panicked (inside={inside})"
            );

            // Both panic: A's payload wins.
            expect_panic_with("both panic", &msg_a, || {
                join(&|| panic!("{msg_a}"), &|| panic!("{msg_b}"))
            });
        }
        // Free join from outside any pool (global pool).
        expect_panic_with("global join", &msg_a, || {
            stealpool::join(|| panic!("{msg_a}"), || ())
        });

        assert_eq!(
            handled.load(Ordering::SeqCst),
            0,
            "join panics reached the panic_handler"
        );
        assert_eq!(
            pool.join(|| 1, || 2),
            (1, 2),
            "pool unusable after join panics"
        );
    });
}

#[test]
fn scope_propagates_a_body_panic_after_running_spawned_tasks() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (pool, handled) = pool_with_counting_handler(3);
        let msg = format!("{EXPECTED} scope body");
        let ran = AtomicUsize::new(0);
        expect_panic_with("scope body", &msg, || {
            pool.scope(|s| {
                for _ in 0..10 {
                    s.spawn(|_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                    });
                }
                panic!("{msg}");
            })
        });
        // The scope waited for its tasks before propagating the panic.
        assert_eq!(ran.load(Ordering::SeqCst), 10);
        assert_eq!(handled.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn scope_propagates_a_task_panic_and_runs_the_other_tasks() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (pool, handled) = pool_with_counting_handler(3);
        let msg = format!("{EXPECTED} scope task");
        let ran = AtomicUsize::new(0);
        expect_panic_with("scope task", &msg, || {
            pool.scope(|s| {
                for i in 0..20 {
                    let (ran, msg) = (&ran, &msg);
                    s.spawn(move |s| {
                        if i == 7 {
                            panic!("{msg}");
                        }
                        // Nested tasks of the same scope still run too.
                        s.spawn(move |_| {
                            ran.fetch_add(1, Ordering::SeqCst);
                        });
                    });
                }
            })
        });
        assert_eq!(
            ran.load(Ordering::SeqCst),
            19,
            "tasks lost after a sibling panicked"
        );

        // A panic in a nested task, free scope inside a worker.
        let ran = AtomicUsize::new(0);
        expect_panic_with("nested scope task", &msg, || {
            pool.install(|| {
                stealpool::scope(|s| {
                    s.spawn(|s| {
                        s.spawn(|_| panic!("{msg}"));
                        s.spawn(|_| {
                            ran.fetch_add(1, Ordering::SeqCst);
                        });
                    });
                    s.spawn(|_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                    });
                })
            })
        });
        assert_eq!(ran.load(Ordering::SeqCst), 2);
        assert_eq!(
            handled.load(Ordering::SeqCst),
            0,
            "scope panics reached the panic_handler"
        );
    });
}

#[test]
fn install_propagates_the_payload_to_the_caller() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (pool, handled) = pool_with_counting_handler(2);
        match panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| -> u32 { panic!("EXPECTED-PANIC install literal") })
        })) {
            Ok(_) => panic!("install swallowed the panic"),
            Err(payload) => assert_eq!(
                payload.downcast_ref::<&'static str>(),
                Some(&"EXPECTED-PANIC install literal")
            ),
        }
        // A non-string payload keeps its type.
        match panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| panic::panic_any(ExpectedPayload(7)))
        })) {
            Ok(()) => panic!("install swallowed the panic"),
            Err(payload) => {
                assert_eq!(
                    payload.downcast_ref::<ExpectedPayload>(),
                    Some(&ExpectedPayload(7))
                )
            }
        }
        // A panic in a nested install on a worker, too.
        let msg = format!("{EXPECTED} nested install");
        expect_panic_with("nested install", &msg, || {
            pool.install(|| pool.install(|| panic!("{msg}")))
        });
        assert_eq!(
            handled.load(Ordering::SeqCst),
            0,
            "install panics reached the panic_handler"
        );
        assert_eq!(pool.install(|| 5), 5, "pool unusable after install panics");
    });
}

#[test]
fn spawn_panics_go_to_the_panic_handler() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let (tx, rx) = mpsc::channel::<Box<dyn Any + Send>>();
        let tx = Mutex::new(tx);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |payload| tx.lock().unwrap().send(payload).unwrap())
            .build()
            .unwrap();
        let msg = format!("{EXPECTED} spawn to handler");
        {
            let msg = msg.clone();
            pool.spawn(move || panic!("{msg}"));
        }
        let payload = rx.recv_timeout(WAIT).expect("panic_handler not called");
        assert_eq!(payload_str(&*payload), Some(msg.as_str()));

        pool.spawn(|| panic::panic_any(ExpectedPayload(11)));
        let payload = rx.recv_timeout(WAIT).expect("panic_handler not called");
        assert_eq!(
            payload.downcast_ref::<ExpectedPayload>(),
            Some(&ExpectedPayload(11))
        );

        // Free spawn inside a worker: the same pool's handler.
        pool.install(|| stealpool::spawn(|| panic::panic_any(ExpectedPayload(12))));
        let payload = rx.recv_timeout(WAIT).expect("panic_handler not called");
        assert_eq!(
            payload.downcast_ref::<ExpectedPayload>(),
            Some(&ExpectedPayload(12))
        );

        // Exactly one call per panic: each call ran inside its job, which `wait_idle` awaits.
        pool.wait_idle().unwrap();
        assert!(rx.try_recv().is_err(), "a panic reached the handler twice");
    });
}

#[test]
fn spawn_panic_without_handler_is_reported_once_and_pool_keeps_running() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        // One worker, so the job spawned after the panicking one runs after it
        // has completely finished.
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let msg = format!("{EXPECTED} spawn without handler (reported once)");
        {
            let msg = msg.clone();
            pool.spawn(move || panic!("{msg}"));
        }
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(stealpool::current_thread_index()).unwrap());
        assert_eq!(
            rx.recv_timeout(WAIT).expect("pool stopped after a panic"),
            Some(0)
        );
        assert_eq!(
            expected_panic_count(&msg),
            1,
            "the panic was not reported exactly once through the panic hook"
        );
        assert_eq!(pool.install(|| 3), 3);
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
    });
}

const MANY: usize = 10_000;

#[test]
fn pool_survives_many_panicking_spawns_with_handler() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let n = 3;
        let handled = Recorded::new();
        let exited = Recorded::new();
        let pool = {
            let handled = Arc::clone(&handled);
            let exited = Arc::clone(&exited);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .panic_handler(move |payload| {
                    let ok = payload_str(&*payload) == Some("EXPECTED-PANIC mass with handler");
                    handled.record(usize::from(ok));
                })
                .exit_handler(move |i| exited.record(i))
                .build()
                .unwrap()
        };
        for _ in 0..MANY {
            pool.spawn(|| panic!("EXPECTED-PANIC mass with handler"));
        }
        assert_eq!(handled.wait_for(MANY, WAIT), MANY, "panic_handler calls");
        assert!(
            handled.sorted().iter().all(|&ok| ok == 1),
            "handler got a wrong payload"
        );
        // Every worker is alive and responsive.
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        assert_eq!(exited.count(), 0, "a worker exited");
        assert_eq!(handled.count(), MANY, "panic_handler called too often");
    });
}

#[test]
fn pool_survives_many_panicking_spawns_without_handler() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let n = 3;
        let msg = "EXPECTED-PANIC mass without handler";
        let reached = Recorded::new();
        let exited = Recorded::new();
        let pool = {
            let exited = Arc::clone(&exited);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .exit_handler(move |i| exited.record(i))
                .build()
                .unwrap()
        };
        for i in 0..MANY {
            let reached = Arc::clone(&reached);
            pool.spawn(move || {
                reached.record(i);
                panic!("{msg}");
            });
        }
        assert_eq!(
            reached.wait_for(MANY, WAIT),
            MANY,
            "panicking jobs that ran"
        );
        // All n workers are alive; once they all run the barrier tasks, every
        // earlier job has completely finished.
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        assert_eq!(
            reached.sorted(),
            (0..MANY).collect::<Vec<_>>(),
            "a job ran twice"
        );
        assert_eq!(
            expected_panic_count(msg),
            MANY,
            "panics seen by the panic hook"
        );
        assert_eq!(exited.count(), 0, "a worker exited");
        // Later work still completes.
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(42).unwrap());
        assert_eq!(rx.recv_timeout(WAIT), Ok(42));
    });
}

/// stealpool documents that panics in a panic handler, a start handler or an
/// exit handler do not abort (rayon-core aborts) and the pool keeps running.
/// As in rayon-core, a start or exit handler's panic goes to the pool's
/// panic handler; here that handler panics too.
#[test]
fn panicking_handlers_do_not_stop_the_pool() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let n = 2;
        let start_msg = format!("{EXPECTED} start_handler");
        let handler_msg = format!("{EXPECTED} panic_handler");
        let exit_msg = format!("{EXPECTED} exit_handler");
        // What the panic handler received, in order.
        let handled = Arc::new(Mutex::new(Vec::<String>::new()));
        let exited = Recorded::new();
        let pool = {
            let (start_msg, handler_msg, exit_msg) =
                (start_msg.clone(), handler_msg.clone(), exit_msg.clone());
            let handled = Arc::clone(&handled);
            let exited = Arc::clone(&exited);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .start_handler(move |_| panic!("{start_msg}"))
                .panic_handler(move |payload| {
                    let what = match payload.downcast_ref::<ExpectedPayload>() {
                        Some(p) => format!("{p:?}"),
                        None => payload_str(&*payload).unwrap_or("?").to_owned(),
                    };
                    handled.lock().unwrap().push(what);
                    panic!("{handler_msg}");
                })
                .exit_handler(move |i| {
                    exited.record(i);
                    panic!("{exit_msg}");
                })
                .build()
                .unwrap()
        };
        let handled_now = || handled.lock().unwrap().clone();
        // Every worker survived its start handler's panic, which went to
        // the panic handler.
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        assert_eq!(expected_panic_count(&start_msg), n);
        assert_eq!(handled_now(), vec![start_msg.clone(); n]);

        // A spawn panic whose handler panics too; later work still runs.
        pool.spawn(|| panic::panic_any(ExpectedPayload(21)));
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv_timeout(WAIT)
            .expect("pool stopped after its panic_handler panicked");
        assert_eq!(run_on_all_workers(&pool, n), (0..n).collect::<Vec<_>>());
        assert_eq!(handled_now().len(), n + 1);
        assert_eq!(handled_now()[n], format!("{:?}", ExpectedPayload(21)));
        assert_eq!(expected_panic_count(&handler_msg), n + 1);

        // Panicking exit handlers: every worker still exits, and their
        // panics reach the panic handler.
        drop(pool);
        assert_eq!(exited.wait_for(n, WAIT), n, "exit_handler calls after drop");
        assert!(
            common::wait_until(WAIT, || handled_now().len() == 2 * n + 1),
            "exit handler panics did not reach the panic handler: {:?}",
            handled_now()
        );
        assert_eq!(handled_now()[n + 1..], vec![exit_msg.clone(); n][..]);
        assert_eq!(expected_panic_count(&exit_msg), n);
        // The process is fine: a new pool works.
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert_eq!(pool.install(|| 9), 9);
    });
}
