//! Adversarial regression tests: attacks on the pool's documented guarantees.
//!
//! Every test body runs under [`watchdog`] (a hang becomes a failure), and scenarios that
//! can abort the process, corrupt memory, wedge the global pool or need an exact thread
//! count run in a child process (this test binary re-executed on one test, see
//! [`child`]), so that a failure there cannot take the other tests down with it.
//!
//! The tests under a "Fixed:" heading reproduce a bug an attack found; each heading says
//! what the bug was and how it was fixed. The others guard behaviour that is easy to
//! break.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use stealpool::{ThreadPool, ThreadPoolBuilder};

mod common;

use common::{payload_str, wait_parked, watchdog};

// ------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------

const CHILD_ENV: &str = "STEALPOOL_ADVERSARIAL_CHILD";

/// Outcome of a scenario run in a child process.
struct ChildRun {
    /// `None` if the child had to be killed after the timeout.
    status: Option<std::process::ExitStatus>,
    output: String,
}

impl ChildRun {
    fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Runs the test named `name` in a child process (this binary, `--exact name`), with
/// [`CHILD_ENV`] set so that the test knows it is the child. Returns `None` in the
/// child (the caller then runs the scenario), `Some(run)` in the parent.
fn child(name: &str, timeout_secs: u64) -> Option<ChildRun> {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let out_path = std::env::temp_dir().join(format!(
        "stealpool-adversarial-{}-{name}.log",
        std::process::id()
    ));
    let out_file = std::fs::File::create(&out_path).expect("child log file");
    let mut proc = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env_remove("STEALPOOL_NUM_THREADS")
        .stdin(Stdio::null())
        .stdout(out_file.try_clone().unwrap())
        .stderr(out_file)
        .spawn()
        .expect("cannot start the child test process");
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    let status = loop {
        if let Some(status) = proc.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = proc.kill(); // our own child, by handle
            let _ = proc.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    Some(ChildRun { status, output })
}

/// Silences the panic hook for the deliberate panics of these tests (their payloads
/// start with "adv:"); everything else is still printed.
fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let expected = payload_str(info.payload()).is_some_and(|s| s.starts_with("adv:"))
                || info.payload().is::<BadDrop>();
            if !expected {
                default(info);
            }
        }));
    });
}

fn expect_panic<R>(f: impl FnOnce() -> R) -> Box<dyn Any + Send> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload,
    }
}

fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

fn spin_for(nanos: u64) {
    let start = Instant::now();
    while (start.elapsed().as_nanos() as u64) < nanos {
        std::hint::spin_loop();
    }
}

fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// A panic payload whose destructor panics.
struct BadDrop(&'static str);

impl Drop for BadDrop {
    fn drop(&mut self) {
        panic!("adv: BadDrop::drop({})", self.0);
    }
}

// ------------------------------------------------------------------------------------
// Fixed: a scope task/body panic whose payload's Drop panics
// ------------------------------------------------------------------------------------
//
// When a scope already held a panic, every later payload was dropped inside
// `ScopeBase::job_panicked`, outside any `catch_unwind`, so a panicking destructor
// unwound out of the job before it counted the scope's latch down: on a worker other than
// the owner the unwind reached the main loop's `AbortIfPanic` (the process aborted); on
// the owner the scope returned while its other tasks still ran and wrote to the dead
// scope. The fix: `job_panicked` drops losing payloads with `unwind::drop_quietly`
// (`halt_unwinding`, and a second panic's payload forgotten), as `Registry::handle_panic`
// already did for `spawn`. rayon-core 1.13 has the bug.

/// Aborted the process before the fix ("a panic escaped into the scheduler itself").
#[test]
fn scope_task_payload_whose_drop_panics_does_not_abort_the_process() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child(
        "scope_task_payload_whose_drop_panics_does_not_abort_the_process",
        30,
    ) {
        assert!(
            run.succeeded(),
            "two panicking scope tasks (the second payload's Drop panics) killed the \
             process: status {:?}\n--- child output ---\n{}",
            run.status,
            run.output
        );
        return;
    }
    // Child: the scenario.
    quiet_expected_panics();
    let p = pool(2);
    let second_started = Arc::new(AtomicBool::new(false));
    let s2 = second_started.clone();
    let result = watchdog(20, move || {
        panic::catch_unwind(AssertUnwindSafe(|| {
            p.install(|| {
                stealpool::scope(|s| {
                    s.spawn(|_| panic!("adv: first"));
                    s.spawn(|_| {
                        s2.store(true, SeqCst);
                        panic::panic_any(BadDrop("second task"))
                    });
                    // Keep the owner busy so that the other worker steals both tasks.
                    let t = Instant::now();
                    while !s2.load(SeqCst) && t.elapsed() < Duration::from_secs(5) {
                        thread::yield_now();
                    }
                })
            })
        }))
        .map_err(|e| payload_str(&*e).map(str::to_owned))
    });
    assert!(second_started.load(SeqCst));
    assert_eq!(result, Err(Some("adv: first".to_owned())));
}

/// Before the fix the scope returned (re-raising) while one of its tasks still ran.
#[test]
fn scope_waits_for_its_tasks_even_if_a_dropped_payload_panics() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child(
        "scope_waits_for_its_tasks_even_if_a_dropped_payload_panics",
        30,
    ) {
        assert!(
            run.succeeded(),
            "status {:?}\n--- child output ---\n{}",
            run.status,
            run.output
        );
        return;
    }
    // Child. The slow task blocks on `release`; the helper below releases it after a
    // second, and only if the scope has not returned by then. If the scope returns early
    // (the bug), `done_at_return` is false and the task is never released, so it never
    // touches the dead scope. The second is a detection timeout, not synchronisation:
    // that a scope did *not* return early can only be observed by waiting (a helper that
    // released the task as soon as the owner worker parked let a buggy early return
    // through: the owner parks after the early return too, before the caller sees it).
    quiet_expected_panics();
    let p = Arc::new(pool(2));
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let scope_returned = Arc::new(AtomicBool::new(false));
    let slow_done = Arc::new(AtomicBool::new(false));
    {
        let scope_returned = scope_returned.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(1000));
            if !scope_returned.load(SeqCst) {
                let _ = release_tx.send(());
            }
            std::mem::forget(release_tx); // never disconnect: a stuck task stays stuck
        });
    }
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
                    panic::panic_any(BadDrop("first task"))
                });
                s.spawn(|_| {
                    slow_started.store(true, SeqCst);
                    let _ = release_rx.lock().unwrap().recv();
                    sd.store(true, SeqCst);
                });
                while !(first_recorded.load(SeqCst) && slow_started.load(SeqCst)) {
                    thread::yield_now();
                }
                panic::panic_any(BadDrop("body"))
            })
        }));
        sr.store(true, SeqCst);
        let done = sd.load(SeqCst);
        if let Err(payload) = r {
            std::mem::forget(payload); // it may be a BadDrop
        }
        done
    });
    std::mem::forget(p);
    assert!(
        done_at_return,
        "the scope re-raised before all its tasks had run (a task is still running and \
         will write to the dead scope)"
    );
}

/// Aborted the process before the fix ("panic in a destructor during cleanup").
///
/// The same class of bug in `join`: when both halves panicked, `a`'s payload was re-raised
/// while `b`'s payload was still inside `job_b` on the `join_context` frame; the unwinding
/// dropped it, so a panicking destructor there was a panic during unwinding and Rust
/// aborted. The fix: `join_context` drops `b`'s result quietly (`unwind::drop_quietly`,
/// `StackJob::discard_result`) before it resumes `a`'s panic. rayon-core 1.13 aborts too.
#[test]
fn join_both_halves_panic_and_bs_payload_drop_panics_does_not_abort() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child(
        "join_both_halves_panic_and_bs_payload_drop_panics_does_not_abort",
        30,
    ) {
        assert!(
            run.succeeded(),
            "join whose halves both panicked (b's payload's Drop panics) killed the \
             process: status {:?}\n--- child output ---\n{}",
            run.status,
            run.output
        );
        return;
    }
    quiet_expected_panics();
    let p = pool(2);
    let e = expect_panic(|| p.join(|| panic!("adv: a"), || panic::panic_any(BadDrop("b"))));
    assert_eq!(payload_str(&*e), Some("adv: a"));
    assert_eq!(p.join(|| 1, || 2), (1, 2));
}

// ------------------------------------------------------------------------------------
// Fixed: build_global deadlocked if thread_name touches the global pool
// ------------------------------------------------------------------------------------
//
// `init_global_registry` held the global pool's non-reentrant init lock while
// `Registry::new` called the user's `thread_name` closure; any free function that reached
// `global_registry()` from there (e.g. `current_num_threads()`) waited for that same lock
// on the same thread for ever. The fix: the registry is built first, with no lock held,
// and then offered to the `OnceLock` (`registry/global.rs`). rayon-core 1.13 deadlocks.

/// Hung before the fix (killed after the timeout).
#[test]
fn build_global_with_thread_name_calling_a_free_function_does_not_hang() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child(
        "build_global_with_thread_name_calling_a_free_function_does_not_hang",
        5,
    ) {
        assert!(
            run.status.is_some(),
            "build_global deadlocked: its thread_name closure called \
             stealpool::current_num_threads()\n--- child output ---\n{}",
            run.output
        );
        return;
    }
    let result = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("g{i}-of-{}", stealpool::current_num_threads()))
        .build_global();
    // Either outcome is acceptable (an error, or a pool); hanging is not.
    let _ = result;
}

// ------------------------------------------------------------------------------------
// Fixed: FnContext::migrated after a panicking first half
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
                    |_| panic!("adv: a"),
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
// Guards (pass today): wake-ups
// ------------------------------------------------------------------------------------

/// `join` where `a` blocks on a barrier until `b` runs on the other worker, started each
/// time right after the whole 2-thread pool went to sleep, then at random moments while
/// the other worker is on its way to sleep.
#[test]
fn join_with_barrier_after_and_while_the_pool_goes_to_sleep() {
    watchdog(30, || {
        let p = pool(2);
        for _ in 0..100 {
            wait_parked(&p, 2);
            let b = Barrier::new(2);
            p.join(|| b.wait(), || b.wait());
        }
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..1000 {
            let delay = rng.u64(0..150_000);
            p.install(|| {
                spin_for(delay);
                let b = Barrier::new(2);
                stealpool::join(|| b.wait(), || b.wait());
            });
        }
    });
}

/// A worker pushes a job on its own deque at a random moment while the other worker is
/// parking, then blocks outside the pool until the job ran elsewhere: the push must wake
/// (or be seen by) the parking worker.
#[test]
fn push_while_the_other_worker_parks_is_never_lost() {
    watchdog(30, || {
        let p = pool(2);
        let mut rng = fastrand::Rng::with_seed(11);
        for i in 0..2000 {
            let delay = rng.u64(0..150_000);
            let ok = p.install(|| {
                spin_for(delay);
                let (tx, rx) = mpsc::channel();
                stealpool::spawn(move || tx.send(()).unwrap());
                rx.recv_timeout(Duration::from_secs(5)).is_ok()
            });
            assert!(ok, "iteration {i}: pushed job never ran (lost wake-up)");
        }
    });
}

/// One-thread pool A waits (and parks) for an install into one-thread pool B whose op
/// finishes after a random delay: the cross-pool latch must wake A's worker.
#[test]
fn cross_pool_latch_wakes_a_parking_worker() {
    watchdog(30, || {
        let a = pool(1);
        let b = Arc::new(pool(1));
        let mut rng = fastrand::Rng::with_seed(3);
        for i in 0..1000 {
            let delay = rng.u64(0..100_000);
            let bb = b.clone();
            let (tx, rx) = mpsc::channel();
            a.spawn(move || {
                bb.install(move || spin_for(delay));
                tx.send(()).unwrap();
            });
            rx.recv_timeout(Duration::from_secs(5))
                .unwrap_or_else(|_| panic!("iteration {i}: cross-pool wake-up lost"));
            if i % 100 == 0 {
                wait_parked(&a, 1);
                wait_parked(&b, 1);
            }
        }
    });
}

/// Mutual install between two sleeping one-thread pools, from two outside threads at
/// once (A -> B -> A -> B and B -> A -> B -> A).
#[test]
fn mutual_install_between_sleeping_one_thread_pools() {
    watchdog(30, || {
        let a = Arc::new(pool(1));
        let b = Arc::new(pool(1));
        for _ in 0..200 {
            wait_parked(&a, 1);
            wait_parked(&b, 1);
            let (a1, b1, a2, b2) = (a.clone(), b.clone(), a.clone(), b.clone());
            let t1 = thread::spawn(move || {
                a1.install(|| b1.install(|| a1.install(|| b1.install(|| 1))))
            });
            let t2 = thread::spawn(move || {
                b2.install(|| a2.install(|| b2.install(|| a2.install(|| 2))))
            });
            assert_eq!(t1.join().unwrap(), 1);
            assert_eq!(t2.join().unwrap(), 2);
        }
    });
}

/// N outside threads install jobs that wait on one barrier of N into an N-thread pool
/// that is asleep: the injector's batch steal may put all of them on one worker's
/// deque, and the others must still be woken to steal them.
#[test]
fn rendezvous_of_injected_jobs_after_sleep() {
    watchdog(30, || {
        const N: usize = 4;
        let p = Arc::new(pool(N));
        for _ in 0..150 {
            wait_parked(&p, N);
            let bar = Arc::new(Barrier::new(N));
            let go = Arc::new(Barrier::new(N));
            let hs: Vec<_> = (0..N)
                .map(|_| {
                    let (p, bar, go) = (p.clone(), bar.clone(), go.clone());
                    thread::spawn(move || {
                        go.wait();
                        p.install(|| {
                            bar.wait();
                        })
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        }
    });
}

/// Bursts of `spawn` from many outside threads while the workers park; every job runs
/// exactly once.
#[test]
fn injection_bursts_from_many_threads_run_exactly_once() {
    watchdog(30, || {
        let p = Arc::new(pool(2));
        for round in 0..30 {
            if round % 3 == 0 {
                wait_parked(&p, 2);
            }
            let hits: Arc<Vec<AtomicUsize>> =
                Arc::new((0..800).map(|_| AtomicUsize::new(0)).collect());
            let (tx, rx) = mpsc::channel();
            let go = Arc::new(Barrier::new(8));
            let hs: Vec<_> = (0..8)
                .map(|t| {
                    let (p, hits, tx, go) = (p.clone(), hits.clone(), tx.clone(), go.clone());
                    thread::spawn(move || {
                        go.wait();
                        for k in 0..100 {
                            let (hits, tx) = (hits.clone(), tx.clone());
                            p.spawn(move || {
                                hits[t * 100 + k].fetch_add(1, SeqCst);
                                tx.send(()).unwrap();
                            });
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            for _ in 0..800 {
                rx.recv_timeout(Duration::from_secs(5))
                    .unwrap_or_else(|_| panic!("round {round}: an injected job never ran"));
            }
            assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "a job ran twice");
        }
    });
}

// ------------------------------------------------------------------------------------
// Guards: scopes
// ------------------------------------------------------------------------------------

/// Scope tasks spawned from outside threads (holding `&Scope`) and from inside tasks.
#[test]
fn scope_spawns_from_outside_threads_and_nested_tasks() {
    watchdog(30, || {
        let p = pool(2);
        for _ in 0..50 {
            let count = AtomicUsize::new(0);
            p.scope(|s| {
                thread::scope(|ts| {
                    for _ in 0..4 {
                        ts.spawn(|| {
                            for _ in 0..50 {
                                s.spawn(|s2| {
                                    count.fetch_add(1, SeqCst);
                                    s2.spawn(|_| {
                                        count.fetch_add(1, SeqCst);
                                    });
                                });
                            }
                        });
                    }
                });
            });
            assert_eq!(count.load(SeqCst), 400);
        }
    });
}

/// Scopes opened inside spawned jobs, thousands of times.
#[test]
fn scopes_inside_spawned_jobs() {
    watchdog(30, || {
        let p = pool(2);
        let total = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        for _ in 0..2000 {
            let (total, tx) = (total.clone(), tx.clone());
            p.spawn(move || {
                let c = AtomicUsize::new(0);
                stealpool::scope(|s| {
                    for _ in 0..5 {
                        s.spawn(|_| {
                            c.fetch_add(1, SeqCst);
                        });
                    }
                });
                total.fetch_add(c.load(SeqCst), SeqCst);
                tx.send(()).unwrap();
            });
        }
        for _ in 0..2000 {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("spawned job lost");
        }
        assert_eq!(total.load(SeqCst), 10_000);
    });
}

/// Scopes nested 1000 deep on a worker (child process: a stack overflow would abort).
#[test]
fn nested_scopes_1000_deep() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child("nested_scopes_1000_deep", 30) {
        assert!(run.succeeded(), "status {:?}\n{}", run.status, run.output);
        return;
    }
    fn rec(depth: usize, c: &AtomicUsize) {
        if depth > 0 {
            stealpool::scope(|s| {
                s.spawn(|_| {
                    c.fetch_add(1, SeqCst);
                });
                rec(depth - 1, c);
            });
        }
    }
    let c = AtomicUsize::new(0);
    pool(2).install(|| rec(1000, &c));
    assert_eq!(c.load(SeqCst), 1000);
}

// ------------------------------------------------------------------------------------
// Guards: panics in every position
// ------------------------------------------------------------------------------------

#[test]
fn panics_in_every_position_are_routed_after_all_work_ran() {
    quiet_expected_panics();
    watchdog(30, || {
        let handled = Arc::new(AtomicUsize::new(0));
        let h = handled.clone();
        let p = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |_| {
                h.fetch_add(1, SeqCst);
            })
            .build()
            .unwrap();
        let plain = pool(2);
        let bad_handler = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(|_| panic!("adv: handler panics"))
            .build()
            .unwrap();
        for i in 0..20 {
            if i % 5 == 0 {
                wait_parked(&p, 2);
            }
            // join: A panics; B still ran
            let b_ran = AtomicBool::new(false);
            let e = expect_panic(|| p.join(|| panic!("adv: A"), || b_ran.store(true, SeqCst)));
            assert_eq!(payload_str(&*e), Some("adv: A"));
            assert!(b_ran.load(SeqCst));
            // join: B panics; A ran
            let a_ran = AtomicBool::new(false);
            let e = expect_panic(|| p.join(|| a_ran.store(true, SeqCst), || panic!("adv: B")));
            assert_eq!(payload_str(&*e), Some("adv: B"));
            assert!(a_ran.load(SeqCst));
            // join: both panic, A's wins (B stolen and slow)
            let b_started = AtomicBool::new(false);
            let e = expect_panic(|| {
                p.join(
                    || {
                        let t = Instant::now();
                        while !b_started.load(SeqCst) && t.elapsed() < Duration::from_millis(200) {
                            thread::yield_now();
                        }
                        panic!("adv: A")
                    },
                    || {
                        b_started.store(true, SeqCst);
                        thread::sleep(Duration::from_millis(1));
                        panic!("adv: B")
                    },
                )
            });
            assert_eq!(payload_str(&*e), Some("adv: A"));
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
                    panic!("adv: body")
                })
            });
            assert_eq!(payload_str(&*e), Some("adv: body"));
            assert_eq!(c.load(SeqCst), 4);
            // scope task panics; nested tasks still all ran
            let c = AtomicUsize::new(0);
            let e = expect_panic(|| {
                p.scope(|s| {
                    s.spawn(|_| panic!("adv: task"));
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
            assert_eq!(payload_str(&*e), Some("adv: task"));
            assert_eq!(c.load(SeqCst), 4);
            // install, and install across pools
            let e = expect_panic(|| p.install(|| panic!("adv: install")));
            assert_eq!(payload_str(&*e), Some("adv: install"));
            let e = expect_panic(|| p.install(|| plain.install(|| panic!("adv: cross"))));
            assert_eq!(payload_str(&*e), Some("adv: cross"));
            // spawn with a handler
            let before = handled.load(SeqCst);
            p.spawn(|| panic!("adv: spawn"));
            let t = Instant::now();
            while handled.load(SeqCst) == before {
                assert!(
                    t.elapsed() < Duration::from_secs(5),
                    "panic_handler never called"
                );
                thread::yield_now();
            }
            // spawn without a handler, also with a payload whose Drop panics
            let (tx, rx) = mpsc::channel::<()>();
            let tx2 = tx.clone();
            plain.spawn(move || {
                let _tx = tx2;
                panic!("adv: spawn without handler")
            });
            let tx2 = tx.clone();
            plain.spawn(move || {
                let _tx = tx2;
                panic::panic_any(BadDrop("spawn payload"))
            });
            // a panicking panic handler
            let tx2 = tx.clone();
            bad_handler.spawn(move || {
                let _tx = tx2;
                panic!("adv: to a panicking handler")
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
            .start_handler(|_| panic!("adv: start"))
            .exit_handler(move |_| {
                e2.fetch_add(1, SeqCst);
                panic!("adv: exit")
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
            .start_handler(|_| panic!("adv: start"))
            .exit_handler(|_| panic!("adv: exit"))
            .build()
            .unwrap();
        assert_eq!(q.join(|| 1, || 2), (1, 2));
    });
}

// ------------------------------------------------------------------------------------
// Guards: lifecycle
// ------------------------------------------------------------------------------------

/// `install` into the same pool from one of its workers runs inline on that worker.
#[test]
fn install_into_own_pool_runs_inline() {
    watchdog(20, || {
        let p = Arc::new(pool(2));
        let p2 = p.clone();
        let (outer, inner) = p.install(move || {
            let outer = (thread::current().id(), p2.current_thread_index());
            let inner = p2.install(|| (thread::current().id(), p2.current_thread_index()));
            (outer, inner)
        });
        assert_eq!(outer, inner);
        assert!(outer.1.is_some());
    });
}

/// The exit handler may use the free functions: join, scope, spawn (runs inline into
/// the terminated pool), install into another pool, current_thread_index.
#[test]
fn exit_handler_can_use_the_free_functions() {
    watchdog(20, || {
        let out = Arc::new(Mutex::new(Vec::new()));
        let o2 = out.clone();
        let other = Arc::new(pool(1));
        let p = ThreadPoolBuilder::new()
            .num_threads(2)
            .exit_handler(move |i| {
                let idx = stealpool::current_thread_index();
                let j = stealpool::join(|| 1, || 2);
                let c = AtomicUsize::new(0);
                stealpool::scope(|s| {
                    for _ in 0..10 {
                        s.spawn(|_| {
                            c.fetch_add(1, SeqCst);
                        });
                    }
                });
                let (tx, rx) = mpsc::channel();
                stealpool::spawn(move || tx.send(7).unwrap());
                let spawned = rx.recv_timeout(Duration::from_secs(5)).ok();
                let x = other.install(|| 42);
                o2.lock()
                    .unwrap()
                    .push((i, idx, j, c.load(SeqCst), spawned, x));
            })
            .build()
            .unwrap();
        p.install(|| ());
        drop(p);
        assert!(
            common::wait_until(Duration::from_secs(10), || out.lock().unwrap().len() >= 2),
            "exit handlers did not finish"
        );
        let mut v = out.lock().unwrap().clone();
        v.sort();
        assert_eq!(
            v,
            [
                (0, Some(0), (1, 2), 10, Some(7), 42),
                (1, Some(1), (1, 2), 10, Some(7), 42)
            ]
        );
    });
}

/// The last handle is dropped inside one of the pool's own jobs, which then keeps
/// spawning: every job runs, then the workers exit.
#[test]
fn pool_dropped_inside_its_own_job_then_spawning_more() {
    watchdog(30, || {
        for _ in 0..200 {
            let exits = Arc::new(AtomicUsize::new(0));
            let e2 = exits.clone();
            let p = ThreadPoolBuilder::new()
                .num_threads(2)
                .exit_handler(move |_| {
                    e2.fetch_add(1, SeqCst);
                })
                .build()
                .unwrap();
            let slot = Arc::new(Mutex::new(Some(p)));
            let s2 = slot.clone();
            let (tx, rx) = mpsc::channel();
            let guard = slot.lock().unwrap();
            guard.as_ref().unwrap().spawn(move || {
                drop(s2.lock().unwrap().take()); // the last handle, on its own worker
                for _ in 0..10 {
                    let tx = tx.clone();
                    stealpool::spawn(move || stealpool::spawn(move || tx.send(()).unwrap()));
                }
            });
            drop(guard);
            for _ in 0..10 {
                rx.recv_timeout(Duration::from_secs(5))
                    .expect("job spawned after drop lost");
            }
            assert!(
                common::wait_until(Duration::from_secs(5), || exits.load(SeqCst) >= 2),
                "workers did not exit"
            );
        }
    });
}

/// Many pools created, used and dropped: every worker thread ends (child process, so
/// that other tests' threads do not disturb the count).
#[test]
fn pool_churn_leaks_no_threads() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child("pool_churn_leaks_no_threads", 60) {
        assert!(run.succeeded(), "status {:?}\n{}", run.status, run.output);
        return;
    }
    let base = task_count();
    for i in 0..300 {
        let p = pool(1 + i % 4);
        assert_eq!(p.install(|| stealpool::join(|| 1, || 2)), (1, 2));
        p.spawn(|| {});
    }
    let t = Instant::now();
    while task_count() > base {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{} threads left, baseline {base}",
            task_count()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// A thread name with a NUL byte: `build` panics (std's `thread::Builder` rejects it;
/// rayon-core behaves the same) rather than returning `ThreadPoolBuildError`, but the
/// workers already started must still exit.
#[test]
fn nul_in_thread_name_leaves_no_threads_behind() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child("nul_in_thread_name_leaves_no_threads_behind", 30) {
        assert!(run.succeeded(), "status {:?}\n{}", run.status, run.output);
        return;
    }
    quiet_expected_panics();
    let base = task_count();
    let exits = Arc::new(AtomicUsize::new(0));
    let e2 = exits.clone();
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| {
                if i == 2 {
                    "bad\0name".into()
                } else {
                    format!("w{i}")
                }
            })
            .exit_handler(move |_| {
                e2.fetch_add(1, SeqCst);
            })
            .build()
    }));
    assert!(
        !matches!(r, Ok(Ok(_))),
        "a NUL thread name cannot give a pool"
    );
    let t = Instant::now();
    while task_count() > base || exits.load(SeqCst) < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "started workers did not exit"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// build_global raced against lazy initialisation from many threads: at most one
/// build_global succeeds, nobody hangs, and later build_global calls fail.
#[test]
fn build_global_racing_lazy_init() {
    if common::skip_without_child_processes() {
        return;
    }
    if let Some(run) = child("build_global_racing_lazy_init", 30) {
        assert!(run.succeeded(), "status {:?}\n{}", run.status, run.output);
        return;
    }
    let go = Arc::new(Barrier::new(8));
    let hs: Vec<_> = (0..8)
        .map(|i| {
            let go = go.clone();
            thread::spawn(move || {
                go.wait();
                if i % 2 == 0 {
                    ThreadPoolBuilder::new()
                        .num_threads(3)
                        .build_global()
                        .is_ok()
                } else {
                    let (n, ()) = stealpool::join(stealpool::current_num_threads, || ());
                    assert!(n > 0);
                    false
                }
            })
        })
        .collect();
    let oks: usize = hs.into_iter().map(|h| h.join().unwrap() as usize).sum();
    assert!(oks <= 1);
    assert!(ThreadPoolBuilder::new().build_global().is_err());
}
