//! What a panic leaves behind: a payload whose destructor panics (in a scope, in both
//! halves of a `join`), `migrated()` of a second half after its first half panicked, and
//! a panic in every position a user's code can be in (halves, scope bodies and tasks,
//! `install`, `spawn`, handlers), each routed where `docs/guarantees.md` ("Panics") says,
//! after all other work ran. Scenarios that could abort the process run in a child
//! process (`common::child`).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use stealpool::ThreadPoolBuilder;

mod common;

use common::child::ran_in_child;
use common::panics::{expect_panic, PanickyDrop};
use common::pools::pool_with_counting_handler;
use common::{payload_str, pool, quiet_expected_panics, wait_parked, watchdog};

// ------------------------------------------------------------------------------------
// A scope task or body panic whose payload's Drop panics
// ------------------------------------------------------------------------------------
//
// When a scope already holds a panic, every later payload is dropped in
// `ScopeBase::job_panicked`. Dropped plainly, a panicking destructor would unwind out of
// the job before it counted the scope's latch down: on a worker other than the owner the
// unwind would reach the main loop's `AbortIfPanic` (the process aborts); on the owner the
// scope would return while its other tasks still ran and wrote to the dead scope. So
// `job_panicked` drops losing payloads with `unwind::drop_quietly` (`halt_unwinding`, and
// a second panic's payload forgotten), as `Registry::handle_panic` does for `spawn`.
// rayon-core 1.13 aborts here.

/// A plain drop would abort the process ("a panic escaped into the scheduler itself").
/// The owner spins in the scope's body until the second task has started, so the other
/// worker steals and runs both tasks; asserted from their worker indices.
#[test]
fn scope_task_payload_whose_drop_panics_does_not_abort_the_process() {
    if ran_in_child(
        "scope_task_payload_whose_drop_panics_does_not_abort_the_process",
        30,
        "two panicking scope tasks (the second payload's Drop panics) killed the process",
    ) {
        return;
    }
    // Child: the scenario.
    quiet_expected_panics();
    let p = pool(2);
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let r = ran_on.clone();
    let (result, owner) = watchdog(20, move || {
        let owner = AtomicUsize::new(usize::MAX);
        let second_started = AtomicBool::new(false);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            p.install(|| {
                owner.store(stealpool::current_thread_index().unwrap(), SeqCst);
                stealpool::scope(|s| {
                    s.spawn(|_| {
                        r.lock()
                            .unwrap()
                            .push(stealpool::current_thread_index().unwrap());
                        panic!("EXPECTED-PANIC adv: first")
                    });
                    s.spawn(|_| {
                        r.lock()
                            .unwrap()
                            .push(stealpool::current_thread_index().unwrap());
                        second_started.store(true, SeqCst);
                        panic::panic_any(PanickyDrop("second task"))
                    });
                    // The owner stays busy here until the other worker took the second
                    // task (the first is older: stolen before it). No time cap: the
                    // watchdog stands for a hang.
                    while !second_started.load(SeqCst) {
                        thread::yield_now();
                    }
                })
            })
        }))
        .map_err(|e| payload_str(&*e).map(str::to_owned));
        (result, owner.load(SeqCst))
    });
    let ran_on = ran_on.lock().unwrap().clone();
    assert_eq!(ran_on.len(), 2, "both tasks ran");
    assert!(
        ran_on.iter().all(|&w| w != owner),
        "a task ran on the owner (worker {owner}), not on the other worker: {ran_on:?}"
    );
    assert_eq!(result, Err(Some("EXPECTED-PANIC adv: first".to_owned())));
}

/// The scope returns (re-raising) only after all its tasks ran, also when a dropped
/// payload panics. The slow task blocks until a helper releases it; the body tells the
/// helper just before it panics, and the helper releases the task only if the scope has
/// not returned within a detection window after that. Asserts that the release came while
/// the scope was still waiting, and that the task had finished when the scope returned.
#[test]
fn scope_waits_for_its_tasks_even_if_a_dropped_payload_panics() {
    if ran_in_child(
        "scope_waits_for_its_tasks_even_if_a_dropped_payload_panics",
        30,
        "the scope did not wait for its tasks, or the process died",
    ) {
        return;
    }
    // Child. If the scope returns early (the bug), the helper sees it within the window
    // and never releases the task, so the task never touches the dead scope. The window
    // is a detection timeout, not synchronisation: that a scope did *not* return can only
    // be observed by waiting (the owner worker parks after an early return too, before
    // the caller sees it, so its parking says nothing).
    quiet_expected_panics();
    let p = Arc::new(pool(2));
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let (panicking_tx, panicking_rx) = mpsc::channel::<()>();
    let scope_returned = Arc::new(AtomicBool::new(false));
    let slow_done = Arc::new(AtomicBool::new(false));
    let helper = {
        let scope_returned = scope_returned.clone();
        thread::spawn(move || {
            panicking_rx.recv().unwrap();
            // Detection window: a scope that returns early does so within it.
            let returned =
                common::wait_until(Duration::from_secs(1), || scope_returned.load(SeqCst));
            if !returned {
                let _ = release_tx.send(());
            }
            std::mem::forget(release_tx); // never disconnect: a stuck task stays stuck
            !returned
        })
    };
    let (sr, sd) = (scope_returned.clone(), slow_done.clone());
    let pool2 = p.clone();
    let done_at_return = watchdog(20, move || {
        let first_recorded = AtomicBool::new(false);
        let slow_started = AtomicBool::new(false);
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool2.scope(|s| {
                s.spawn(|_| {
                    first_recorded.store(true, SeqCst);
                    // A payload whose Drop panics too: whichever of the two panics the
                    // scope keeps, the other one's drop panics (no ordering needed).
                    panic::panic_any(PanickyDrop("first task"))
                });
                s.spawn(|_| {
                    slow_started.store(true, SeqCst);
                    let _ = release_rx.lock().unwrap().recv();
                    sd.store(true, SeqCst);
                });
                while !(first_recorded.load(SeqCst) && slow_started.load(SeqCst)) {
                    thread::yield_now();
                }
                panicking_tx.send(()).unwrap();
                panic::panic_any(PanickyDrop("body"))
            })
        }));
        sr.store(true, SeqCst);
        let done = sd.load(SeqCst);
        if let Err(payload) = r {
            std::mem::forget(payload); // it may be a PanickyDrop
        }
        done
    });
    std::mem::forget(p);
    assert!(
        helper.join().unwrap(),
        "the scope returned within the window, before its slow task was released"
    );
    assert!(
        done_at_return,
        "the scope re-raised before all its tasks had run (a task is still running and \
         will write to the dead scope)"
    );
}

/// The same hazard in `join`: when both halves panic, `a`'s payload is re-raised while
/// `b`'s is still inside `job_b` on the `join_context` frame; if the unwinding dropped it,
/// a panicking destructor there would be a panic during unwinding, and Rust aborts ("panic
/// in a destructor during cleanup"). So `join_context` drops `b`'s result quietly
/// (`unwind::drop_quietly`, `StackJob::discard_result`) before it resumes `a`'s panic.
/// rayon-core 1.13 aborts here.
#[test]
fn join_both_halves_panic_and_bs_payload_drop_panics_does_not_abort() {
    if ran_in_child(
        "join_both_halves_panic_and_bs_payload_drop_panics_does_not_abort",
        30,
        "a join whose halves both panicked (b's payload's Drop panics) killed the process",
    ) {
        return;
    }
    quiet_expected_panics();
    let p = pool(2);
    let e = expect_panic(|| {
        p.join(
            || panic!("EXPECTED-PANIC adv: a"),
            || panic::panic_any(PanickyDrop("b")),
        )
    });
    assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: a"));
    assert_eq!(p.join(|| 1, || 2), (1, 2));
}

// ------------------------------------------------------------------------------------
// FnContext::migrated after a panicking first half
// ------------------------------------------------------------------------------------
//
// `FnContext::migrated` is documented as "true if the closure was not run directly by the
// join_context call on the calling worker". When `oper_a` panicked and `oper_b` was not
// stolen, the panic path runs `b` with `StackJob::run_inline(injected)`, as the normal path
// does, so `b` is not migrated. (rayon-core 1.13 runs `b` through its wait there and
// reports `true`: the one documented difference of `migrated()`.)

#[test]
fn join_context_b_after_a_panicked_is_not_reported_migrated_on_the_same_thread() {
    quiet_expected_panics();
    let seen = watchdog(20, || {
        let p = pool(1); // one worker: b cannot be stolen
        let seen = Mutex::new(None);
        let _ = panic::catch_unwind(AssertUnwindSafe(|| {
            p.install(|| {
                let caller = thread::current().id();
                stealpool::join_context(
                    |_| panic!("EXPECTED-PANIC adv: a"),
                    |ctx| {
                        *seen.lock().unwrap() =
                            Some((ctx.migrated(), thread::current().id() == caller))
                    },
                )
            })
        }));
        seen.into_inner().unwrap()
    });
    let (migrated, same_thread) = seen.expect("b must have run");
    assert!(same_thread);
    assert!(
        !migrated,
        "b ran on the thread that called join_context, yet migrated() == true"
    );
}

// ------------------------------------------------------------------------------------
// Panics in every position
// ------------------------------------------------------------------------------------

#[test]
fn panics_in_every_position_are_routed_after_all_work_ran() {
    quiet_expected_panics();
    watchdog(30, || {
        let (p, handled) = pool_with_counting_handler(2);
        let plain = pool(2);
        let bad_handler = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(|_| panic!("EXPECTED-PANIC adv: handler panics"))
            .build()
            .unwrap();
        for i in 0..20 {
            if i % 5 == 0 {
                wait_parked(&p, 2);
            }
            // join: A panics; B still ran
            let b_ran = AtomicBool::new(false);
            let e = expect_panic(|| {
                p.join(
                    || panic!("EXPECTED-PANIC adv: A"),
                    || b_ran.store(true, SeqCst),
                )
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: A"));
            assert!(b_ran.load(SeqCst));
            // join: B panics; A ran
            let a_ran = AtomicBool::new(false);
            let e = expect_panic(|| {
                p.join(
                    || a_ran.store(true, SeqCst),
                    || panic!("EXPECTED-PANIC adv: B"),
                )
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: B"));
            assert!(a_ran.load(SeqCst));
            // join: both panic, A's wins. B is stolen (A waits until B started, so the
            // other worker took it; asserted from the worker indices) and still running
            // when A panics (B waits until A's unwinding dropped `_unwound`).
            let (b_started, a_unwound) = (AtomicBool::new(false), AtomicBool::new(false));
            let (a_on, b_on) = (AtomicUsize::new(usize::MAX), AtomicUsize::new(usize::MAX));
            let e = expect_panic(|| {
                p.join(
                    || {
                        a_on.store(stealpool::current_thread_index().unwrap(), SeqCst);
                        let _unwound = SetOnDrop(&a_unwound);
                        while !b_started.load(SeqCst) {
                            thread::yield_now();
                        }
                        panic!("EXPECTED-PANIC adv: A")
                    },
                    || {
                        b_on.store(stealpool::current_thread_index().unwrap(), SeqCst);
                        b_started.store(true, SeqCst);
                        while !a_unwound.load(SeqCst) {
                            thread::yield_now();
                        }
                        panic!("EXPECTED-PANIC adv: B")
                    },
                )
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: A"));
            assert_ne!(a_on.load(SeqCst), b_on.load(SeqCst), "B was not stolen");
            // scope body panics; slow tasks still all ran
            let c = AtomicUsize::new(0);
            let e = expect_panic(|| {
                p.scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|_| {
                            thread::sleep(Duration::from_micros(200));
                            c.fetch_add(1, SeqCst);
                        });
                    }
                    panic!("EXPECTED-PANIC adv: body")
                })
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: body"));
            assert_eq!(c.load(SeqCst), 4);
            // scope task panics; nested tasks still all ran
            let c = AtomicUsize::new(0);
            let e = expect_panic(|| {
                p.scope(|s| {
                    s.spawn(|_| panic!("EXPECTED-PANIC adv: task"));
                    for _ in 0..4 {
                        s.spawn(|s| {
                            s.spawn(|_| {
                                thread::sleep(Duration::from_micros(200));
                                c.fetch_add(1, SeqCst);
                            })
                        });
                    }
                })
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: task"));
            assert_eq!(c.load(SeqCst), 4);
            // install, and install across pools
            let e = expect_panic(|| p.install(|| panic!("EXPECTED-PANIC adv: install")));
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: install"));
            let e = expect_panic(|| {
                p.install(|| plain.install(|| panic!("EXPECTED-PANIC adv: cross")))
            });
            assert_eq!(payload_str(&*e), Some("EXPECTED-PANIC adv: cross"));
            // spawn with a handler
            let before = handled.load(SeqCst);
            p.spawn(|| panic!("EXPECTED-PANIC adv: spawn"));
            assert!(
                common::wait_until(Duration::from_secs(5), || handled.load(SeqCst) != before),
                "panic_handler never called"
            );
            // spawn without a handler, also with a payload whose Drop panics
            let (tx, rx) = mpsc::channel::<()>();
            let tx2 = tx.clone();
            plain.spawn(move || {
                let _tx = tx2;
                panic!("EXPECTED-PANIC adv: spawn without handler")
            });
            let tx2 = tx.clone();
            plain.spawn(move || {
                let _tx = tx2;
                panic::panic_any(PanickyDrop("spawn payload"))
            });
            // a panicking panic handler
            let tx2 = tx.clone();
            bad_handler.spawn(move || {
                let _tx = tx2;
                panic!("EXPECTED-PANIC adv: to a panicking handler")
            });
            drop(tx);
            assert_eq!(
                rx.recv_timeout(Duration::from_secs(5)),
                Err(RecvTimeoutError::Disconnected)
            );
            // every pool keeps working
            assert_eq!(p.join(|| 1, || 2), (1, 2));
            assert_eq!(plain.join(|| 3, || 4), (3, 4));
            assert_eq!(bad_handler.join(|| 5, || 6), (5, 6));
        }
        // start / exit handlers that panic, with and without a panic handler
        let exits = Arc::new(AtomicUsize::new(0));
        let handled2 = Arc::new(AtomicUsize::new(0));
        let (e2, h2) = (exits.clone(), handled2.clone());
        let q = ThreadPoolBuilder::new()
            .num_threads(2)
            .start_handler(|_| panic!("EXPECTED-PANIC adv: start"))
            .exit_handler(move |_| {
                e2.fetch_add(1, SeqCst);
                panic!("EXPECTED-PANIC adv: exit")
            })
            .panic_handler(move |_| {
                h2.fetch_add(1, SeqCst);
            })
            .build()
            .unwrap();
        assert_eq!(q.join(|| 1, || 2), (1, 2));
        drop(q);
        assert!(
            common::wait_until(Duration::from_secs(5), || exits.load(SeqCst) >= 2
                && handled2.load(SeqCst) >= 4),
            "exit handlers / panic handler"
        );
        let q = ThreadPoolBuilder::new()
            .num_threads(2)
            .start_handler(|_| panic!("EXPECTED-PANIC adv: start"))
            .exit_handler(|_| panic!("EXPECTED-PANIC adv: exit"))
            .build()
            .unwrap();
        assert_eq!(q.join(|| 1, || 2), (1, 2));
    });
}

/// Sets its flag when dropped (by an unwinding panic, too).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}
