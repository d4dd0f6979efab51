//! What a worker runs inside a wait, against rayon-core 1.13 (`docs/guarantees.md`, "Where
//! a worker runs other jobs"): `broadcast`, a scope, `yield_local` and `yield_now`, `join`
//! and `install`, with a `Mutex`, a thread-local `RefCell` or a `LazyLock` initialisation
//! held across them (the order of the jobs they run: `tests/rayon_parity_order.rs`).
//!
//! rayon-core's wait (`WorkerThread::wait_until_cold`) takes the worker's own deque, then
//! its own broadcast queue, and steals from other workers or takes an injected job only
//! when both are empty; a `join` whose `b` nobody took pops `b` and runs it, without
//! waiting. So a job of a one-thread pool that holds a lock across `broadcast`, a scope of
//! broadcasts or `yield_local` never meets the injected jobs queued behind it inside that
//! section, and a `join` nobody steals from runs nothing else. What rayon-core does run
//! inside a section is checked too: a `join` whose `b` was stolen runs the jobs queued
//! above `b` on its deque while it waits (the deadlock of rayon-rs/rayon#592, #1205 and
//! #1253, counted instead of hung). Every scenario is written once and runs on both
//! crates (`common::parity`): `sp::*` on stealpool, `rc::*` on rayon-core.
//!
//! One difference is deliberate and not checked here: after `a` panicked, a `b` that nobody
//! took reports `FnContext::migrated() == false` on stealpool (it runs directly) and
//! `true` on rayon-core (it runs through the wait), as documented on `FnContext::migrated`;
//! `tests/panic_payloads.rs` checks stealpool's
//! (`join_context_b_after_a_panicked_is_not_reported_migrated_on_the_same_thread`).

mod common;

use common::held::{Held, Locks};
use common::parity::{expect, on_both_crates, recv, repeat, Log};
use common::{quiet_expected_panics, EXPECTED};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, LazyLock, Mutex, TryLockError};

/// Runs per scenario. Every job a scenario checks is queued while the worker that could
/// take it is held (in `occupy` or on a channel), or by the job whose wait or yield then
/// takes it, so the outcome does not depend on timing and a regression fails the first
/// run. The repetitions cover what does vary, the state a fresh pool's workers are in
/// (starting, spinning, parked) when the first job arrives. A run takes about a
/// millisecond: both files together take about 1.5 s in a debug build on two cores.
const RUNS: usize = 100;
/// Watchdog per run, in seconds; a healthy run takes milliseconds.
const SECS: u64 = 10;
/// Injected jobs queued behind a section.
const QUEUED: usize = 10;

thread_local!(static CELL: RefCell<u32> = const { RefCell::new(0) });

/// Counts the runs of a job that finds `lock` held (`try_lock` instead of blocking, so
/// that a job run inside the section is counted rather than deadlocked).
fn try_lock_counting(lock: &Mutex<()>, held: &AtomicUsize) {
    if let Err(TryLockError::WouldBlock) = lock.try_lock() {
        held.fetch_add(1, Ordering::SeqCst);
    }
}

macro_rules! scenarios {
    () => {
        /// A `join` tree of `2^depth` leaves; returns the leaf count.
        fn tree(depth: u32) -> u32 {
            if depth == 0 {
                return 1;
            }
            let (a, b) = rp::join(|| tree(depth - 1), || tree(depth - 1));
            a + b
        }

        /// Runs `section` in a job injected into a one-thread pool, with `QUEUED` more
        /// injected jobs queued behind it that count how often they find `lock` held.
        fn injected_section(section: fn(&Mutex<()>)) -> Result<(), String> {
            let pool = pool(1);
            let gate = occupy(&pool);
            let lock = Arc::new(Mutex::new(()));
            let held = Arc::new(AtomicUsize::new(0));
            let (done_tx, done_rx) = mpsc::channel::<()>();
            {
                let (lock, done) = (lock.clone(), done_tx.clone());
                pool.spawn(move || {
                    section(&lock);
                    done.send(()).unwrap();
                });
            }
            for _ in 0..QUEUED {
                let (lock, held, done) = (lock.clone(), held.clone(), done_tx.clone());
                pool.spawn(move || {
                    try_lock_counting(&lock, &held);
                    done.send(()).unwrap();
                });
            }
            gate.send(()).unwrap();
            for _ in 0..=QUEUED {
                recv(&done_rx);
            }
            let held = held.load(Ordering::SeqCst);
            expect("injected jobs that ran inside the section", held, 0)
        }

        /// `broadcast`'s wait finds the own deque empty and runs the worker's own copy,
        /// which completes the broadcast: the injector is never reached.
        #[test]
        fn a_mutex_held_across_broadcast_is_not_met_by_queued_injected_jobs() {
            repeat(RUNS, SECS, || {
                injected_section(|lock| {
                    let _guard = lock.lock().unwrap();
                    assert_eq!(rp::broadcast(|ctx| ctx.index()), [0]);
                })
            });
        }

        /// `yield_local` looks only at the own deque and broadcast queue: `Idle` here.
        #[test]
        fn a_mutex_held_across_yield_local_is_not_met_by_queued_injected_jobs() {
            repeat(RUNS, SECS, || {
                injected_section(|lock| {
                    let _guard = lock.lock().unwrap();
                    assert_eq!(rp::yield_local(), Some(rp::Yield::Idle));
                })
            });
        }

        /// A scope's wait for its `spawn_broadcast` runs the copy from the worker's own
        /// broadcast queue, which ends the scope.
        #[test]
        fn a_mutex_held_across_a_scope_of_broadcasts_is_not_met_by_queued_injected_jobs() {
            repeat(RUNS, SECS, || {
                injected_section(|lock| {
                    let _guard = lock.lock().unwrap();
                    rp::scope(|s| s.spawn_broadcast(|_, _| ()));
                })
            });
        }

        /// The same with a thread-local `RefCell` borrowed across `broadcast`: a queued
        /// job run inside would find it borrowed (a panic with `borrow_mut`).
        #[test]
        fn a_thread_local_borrowed_across_broadcast_is_not_met_by_queued_injected_jobs() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let gate = occupy(&pool);
                let borrowed = Arc::new(AtomicUsize::new(0));
                let (done_tx, done_rx) = mpsc::channel::<()>();
                let done = done_tx.clone();
                pool.spawn(move || {
                    CELL.with(|cell| {
                        let mut value = cell.borrow_mut();
                        *value += 1;
                        rp::broadcast(|_| ());
                        *value += 1;
                    });
                    done.send(()).unwrap();
                });
                for _ in 0..QUEUED {
                    let (borrowed, done) = (borrowed.clone(), done_tx.clone());
                    pool.spawn(move || {
                        if CELL.with(|cell| cell.try_borrow_mut().is_err()) {
                            borrowed.fetch_add(1, Ordering::SeqCst);
                        }
                        done.send(()).unwrap();
                    });
                }
                gate.send(()).unwrap();
                for _ in 0..=QUEUED {
                    recv(&done_rx);
                }
                let borrowed = borrowed.load(Ordering::SeqCst);
                expect("injected jobs that found the RefCell borrowed", borrowed, 0)
            });
        }

        /// With blocking locks: the first of five injected jobs locks a `Mutex` across
        /// `broadcast`, the four queued behind it lock it too. On rayon-core they run
        /// after it; one run inside the section would lock the `Mutex` again on the
        /// thread that holds it, a deadlock (caught by `recv` or the watchdog).
        #[test]
        fn a_mutex_locked_across_broadcast_and_by_the_queued_jobs_does_not_deadlock() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let gate = occupy(&pool);
                let lock = Arc::new(Mutex::new(0));
                let (done_tx, done_rx) = mpsc::channel::<()>();
                for i in 0..5 {
                    let (lock, done) = (lock.clone(), done_tx.clone());
                    pool.spawn(move || {
                        if i == 0 {
                            let mut guard = lock.lock().unwrap();
                            *guard += rp::broadcast(|_| 1).len();
                        } else {
                            *lock.lock().unwrap() += 1;
                        }
                        done.send(()).unwrap();
                    });
                }
                gate.send(()).unwrap();
                for _ in 0..5 {
                    recv(&done_rx);
                }
                let count = *lock.lock().unwrap();
                expect("the count", count, 5)
            });
        }

        /// A `LazyLock` whose initialiser broadcasts (a per-worker table), forced by five
        /// injected jobs: the first initialises it and the others find it ready. One of
        /// them run inside the initialiser would force it again on the initialising
        /// thread (a panic or a deadlock).
        #[test]
        fn a_lazy_lock_initialised_with_broadcast_is_not_forced_again_inside() {
            repeat(RUNS, SECS, || {
                type Init = Box<dyn FnOnce() -> Vec<usize> + Send>;
                let table: Arc<LazyLock<Vec<usize>, Init>> =
                    Arc::new(LazyLock::new(Box::new(|| rp::broadcast(|ctx| ctx.index()))));
                let pool = pool(1);
                let gate = occupy(&pool);
                let (done_tx, done_rx) = mpsc::channel::<usize>();
                for _ in 0..5 {
                    let (table, done) = (table.clone(), done_tx.clone());
                    pool.spawn(move || done.send(table.len()).unwrap());
                }
                gate.send(()).unwrap();
                let lens: Vec<usize> = (0..5).map(|_| recv(&done_rx)).collect();
                expect("the table's length in each job", lens, [1; 5])
            });
        }

        /// The building thread of a one-thread `use_current_thread` pool is its worker. It
        /// holds a lock across a `join` while ten jobs wait in its deque (its own
        /// `spawn`s) and ten in the injector (from another thread), all trying the lock:
        /// the `join` runs none of them. Then twenty `yield_now`s run them all, one each.
        #[test]
        fn a_use_current_thread_pools_building_thread_runs_no_job_inside_a_join() {
            repeat(RUNS, SECS, || {
                let pool = rp::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .use_current_thread()
                    .build()
                    .unwrap();
                let lock = Arc::new(Mutex::new(()));
                let held = Arc::new(AtomicUsize::new(0));
                let job = || {
                    let (lock, held) = (lock.clone(), held.clone());
                    move || try_lock_counting(&lock, &held)
                };
                let guard = lock.lock().unwrap();
                for _ in 0..QUEUED {
                    pool.spawn(job());
                }
                std::thread::scope(|s| {
                    s.spawn(|| (0..QUEUED).for_each(|_| pool.spawn(job())));
                });
                assert_eq!(pool.install(|| rp::join(|| 1, || 2)), (1, 2));
                let in_join = held.load(Ordering::SeqCst);
                drop(guard);
                let yields: Vec<_> = (0..=2 * QUEUED).map(|_| pool.yield_now()).collect();
                let mut want = vec![Some(rp::Yield::Executed); 2 * QUEUED];
                want.push(Some(rp::Yield::Idle));
                expect("jobs that ran inside the join", in_join, 0)?;
                expect("yields after the join", yields, want)
            });
        }

        /// Inside `a` on a one-thread pool, `b` is the worker's pending task: `yield_local`
        /// runs it as a job from the deque (so `b` reports `migrated()` and no pending
        /// task), and `yield_now` then finds nothing.
        #[test]
        fn yields_inside_a_run_b_from_the_deque() {
            repeat(RUNS, SECS, || {
                let log = Log::default();
                pool(1).install(|| {
                    rp::join_context(
                        |ctx| {
                            let pending = rp::current_thread_has_pending_tasks();
                            let local = rp::yield_local();
                            let now = rp::yield_now();
                            let migrated = ctx.migrated();
                            log.push(format!("a {migrated} {pending:?} {local:?} {now:?}"));
                        },
                        |ctx| {
                            let pending = rp::current_thread_has_pending_tasks();
                            log.push(format!("b {} {pending:?}", ctx.migrated()));
                        },
                    )
                });
                let want = [
                    "b true Some(false)",
                    "a false Some(true) Some(Executed) Some(Idle)",
                ];
                expect("the order", log.events(), want)
            });
        }

        /// A `Mutex` guard taken in a panicking `a` is dropped by the unwinding before
        /// `join` runs `b`, so `b` finds the lock free (and poisoned).
        #[test]
        fn a_lock_taken_in_a_panicking_a_is_free_when_b_runs() {
            quiet_expected_panics();
            repeat(RUNS, SECS, || {
                let lock = Mutex::new(());
                let free_in_b = Mutex::new(None);
                let joined = pool(1).install(|| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        rp::join(
                            || {
                                let _guard = lock.lock().unwrap();
                                panic!("{EXPECTED}: a panics holding the lock")
                            },
                            || {
                                // Free, and poisoned by the panic: not `WouldBlock`.
                                let free =
                                    !matches!(lock.try_lock(), Err(TryLockError::WouldBlock));
                                *free_in_b.lock().unwrap() = Some(free);
                            },
                        )
                    }))
                });
                expect("join's result is a panic", joined.is_err(), true)?;
                let free_in_b = free_in_b.into_inner().unwrap();
                expect("the lock was free in b", free_in_b, Some(true))
            });
        }

        /// A two-thread pool whose worker 1 is blocked (on a channel, not in a wait, so it
        /// steals nothing): a job holding a lock makes 200 `join` trees on worker 0 while
        /// ten injected jobs trying the lock are queued. Nobody takes a half, so no `join`
        /// waits and none of them runs inside the locked section.
        #[test]
        fn joins_nobody_steals_from_on_a_two_thread_pool_run_no_injected_job() {
            repeat(RUNS, SECS, || {
                let pool = pool(2);
                let (blocked_tx, blocked_rx) = mpsc::channel::<()>();
                let (release_tx, release_rx) = mpsc::channel::<()>();
                let release_rx = Mutex::new(release_rx);
                pool.spawn_broadcast(move |ctx| {
                    if ctx.index() == 1 {
                        blocked_tx.send(()).unwrap();
                        let _ = release_rx.lock().unwrap().recv();
                    }
                });
                recv(&blocked_rx);
                let lock = Arc::new(Mutex::new(()));
                let held = Arc::new(AtomicUsize::new(0));
                let (started_tx, started_rx) = mpsc::channel::<()>();
                let (go_tx, go_rx) = mpsc::channel::<()>();
                let (done_tx, done_rx) = mpsc::channel();
                let section_lock = lock.clone();
                pool.spawn(move || {
                    let guard = section_lock.lock().unwrap();
                    started_tx.send(()).unwrap();
                    recv(&go_rx);
                    let leaves: u32 = (0..200).map(|_| tree(6)).sum();
                    drop(guard);
                    done_tx.send(leaves).unwrap();
                });
                recv(&started_rx);
                for _ in 0..QUEUED {
                    let (lock, held) = (lock.clone(), held.clone());
                    pool.spawn(move || try_lock_counting(&lock, &held));
                }
                go_tx.send(()).unwrap();
                let leaves = recv(&done_rx);
                // Read before worker 1 is released: from then on two queued jobs may run
                // at once, and one would find the lock held by the other's `try_lock`
                // (seen under qemu-user, where this thread is slow to get here).
                let held = held.load(Ordering::SeqCst);
                drop(release_tx);
                expect("leaves", leaves, 200 * 64)?;
                expect("injected jobs that ran inside the section", held, 0)
            });
        }

        /// The deadlock of rayon-rs/rayon#592, forced and counted instead of hung: a job
        /// holds a section (`held`) across a `join` whose `b` the other worker took, and
        /// spawns `u` inside `a`, so that `u` lies above `b` on its worker's deque. When `a`
        /// is done, the `join` waits for `b` and pops `u` first: `u` runs on the section
        /// holder's thread, inside the section (where blocking on the section, as the
        /// reports' programs do, is the deadlock; `u` only looks). `b` finishes only after
        /// `u` ran, and `a` only after `b` started, so the outcome does not depend on
        /// timing. The opt-in that is to make the count 0 is issue 30's isolation
        /// (`docs/isolation.md`).
        fn stolen_half_wait(held: Held) -> Result<(), String> {
            let pool = pool(2);
            let locks = Arc::new(Locks::default());
            let reentries = Arc::new(AtomicUsize::new(0));
            let (b_started_tx, b_started_rx) = mpsc::channel::<()>();
            let (u_ran_tx, u_ran_rx) = mpsc::channel::<()>();
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let (u_locks, u_reentries) = (locks.clone(), reentries.clone());
            pool.spawn(move || {
                let section = move || {
                    let ((), ()) = rp::join(
                        move || {
                            rp::spawn(move || {
                                if held.is_held_here(&u_locks) {
                                    u_reentries.fetch_add(1, Ordering::SeqCst);
                                }
                                u_ran_tx.send(()).unwrap();
                            });
                            recv(&b_started_rx);
                        },
                        move || {
                            b_started_tx.send(()).unwrap();
                            recv(&u_ran_rx);
                        },
                    );
                };
                held.hold(&locks, section);
                done_tx.send(()).unwrap();
            });
            recv(&done_rx);
            expect(
                "jobs that ran inside the section",
                reentries.load(Ordering::SeqCst),
                1,
            )
        }

        /// rayon-rs/rayon#592: a `Mutex` held across the `join`.
        #[test]
        fn a_mutex_held_across_a_join_whose_b_was_stolen_meets_a_job_spawned_in_a() {
            repeat(RUNS, SECS, || stolen_half_wait(Held::Mutex));
        }

        /// rayon-rs/rayon#1205: an `RwLock` written across the `join`.
        #[test]
        fn an_rwlock_written_across_a_join_whose_b_was_stolen_meets_a_job_spawned_in_a() {
            repeat(RUNS, SECS, || stolen_half_wait(Held::RwLock));
        }

        /// rayon-rs/rayon#1253: a thread-local `RefCell` borrowed across the `join`.
        #[test]
        fn a_thread_local_borrowed_across_a_join_whose_b_was_stolen_meets_a_job_spawned_in_a() {
            repeat(RUNS, SECS, || stolen_half_wait(Held::ThreadLocal));
        }

        /// Installs nested across two one-thread pools, both ways: pool `a`'s worker,
        /// waiting inside its `install` on `b`, runs the job that `b`'s `join` sends back
        /// to `a` (a cross-pool `install` waits, and its wait takes injected jobs).
        #[test]
        fn installs_nested_across_two_one_thread_pools_complete() {
            repeat(RUNS, SECS, || {
                let (a, b) = (pool(1), pool(1));
                let got = a.install(|| {
                    let index = rp::current_thread_index();
                    b.install(|| {
                        let ((x, y), z) = rp::join(|| a.install(|| rp::join(|| 1, || 2)), || 3);
                        (index, x + y + z)
                    })
                });
                expect("a's index and the sum", got, (Some(0), 6))
            });
        }

        /// An `install` on the worker's own pool runs its closure right there: the job
        /// spawned just before it is still queued and runs only after the outer job.
        #[test]
        fn an_install_on_the_own_pool_runs_inline() {
            repeat(RUNS, SECS, || {
                let pool = pool(1);
                let log = Log::default();
                pool.install(|| {
                    let spawned = log.clone();
                    rp::spawn(move || spawned.push("spawned"));
                    pool.install(|| log.push("inner"));
                    log.push("outer");
                });
                // Runs the spawned job if the worker has not yet.
                pool.install(|| while rp::yield_local() == Some(rp::Yield::Executed) {});
                expect("the order", log.events(), ["inner", "outer", "spawned"])
            });
        }
    };
}

on_both_crates!(scenarios);
