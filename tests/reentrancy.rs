//! rayon-core's re-entrancy rule (`docs/guarantees.md`, "Where a worker runs other
//! jobs"): a worker runs another job inside a user's frame only while that frame waits
//! (for a `join` half another worker took, a scope, a cross-pool `install`, a handle) or
//! yields. A `join` whose second half nobody took runs `a`, then `b`, and nothing else.
//!
//! Each test is one pattern from a public rayon report that is safe on rayon-core: a
//! one-thread pool (where nothing is ever stolen) runs a section of `join`s while outside
//! threads inject jobs that would misbehave inside that section. The section goes on
//! until every injected job is in the injector (counted after `spawn` returned), then
//! makes more `join`s than a periodic look at the injector (one per 61) could skip, so a
//! scheduler that takes injected work inside a `join` is caught in every run. Every body
//! runs under a watchdog: the real-code failure mode of each pattern is a hang.

mod common;

use common::{watchdog, Countdown};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock, TryLockError};
use std::thread;
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// Injected jobs per test.
const INJECTED: usize = 100;
/// `join`s made after the last injected job is queued: 100 periods of 61.
const JOINS_AFTER: usize = 100 * 61;

fn one_thread_pool() -> Arc<ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap())
}

/// A `join` tree of `2^depth` leaves (`2^depth - 1` `join`s), the section's own work.
fn joins(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = stealpool::join(|| joins(depth - 1), || joins(depth - 1));
    a + b
}

/// The section's work between injections: `unit` (which makes `joins` `join`s) in a loop,
/// until every injected job is queued and then for `JOINS_AFTER` more `join`s.
type Repeat<'a> = &'a (dyn Fn(u32, &dyn Fn()) + Sync);

/// Runs `section` on the only worker of `pool` while another thread spawns `INJECTED`
/// jobs made by `job` onto the same pool. `section` receives a [`Repeat`] to make its
/// `join`s with: it starts the injections and returns after they are all queued and
/// `JOINS_AFTER` more `join`s ran. Returns once every injected job has run.
fn with_injections<J>(
    pool: &Arc<ThreadPool>,
    job: impl Fn() -> J + Send + 'static,
    section: impl FnOnce(Repeat<'_>) + Send,
) where
    J: FnOnce() + Send + 'static,
{
    let queued = Arc::new(AtomicUsize::new(0));
    let ran = Countdown::new(INJECTED);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let spawner = {
        let (pool, queued, ran) = (pool.clone(), queued.clone(), ran.clone());
        thread::spawn(move || {
            go_rx.recv().unwrap();
            for _ in 0..INJECTED {
                let (job, ran) = (job(), ran.clone());
                pool.spawn(move || {
                    job();
                    ran.count_down();
                });
                queued.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    pool.install(|| {
        section(&|joins, unit| {
            go_tx.send(()).unwrap();
            while queued.load(Ordering::SeqCst) < INJECTED {
                unit();
            }
            for _ in 0..JOINS_AFTER.div_ceil(joins as usize) {
                unit();
            }
        })
    });
    spawner.join().unwrap();
    assert_eq!(
        ran.wait(Duration::from_secs(30)),
        0,
        "an injected job never ran"
    );
}

/// Makes injected jobs that take `lock` with `try_lock`: each counts a taken lock in the
/// mutex's value, and a lock it found held (it would have deadlocked on `lock()`) in
/// `inside`.
fn try_lock_jobs(
    lock: &Arc<Mutex<usize>>,
    inside: &Arc<AtomicUsize>,
) -> impl Fn() -> Box<dyn FnOnce() + Send> + Send + 'static {
    let (lock, inside) = (lock.clone(), inside.clone());
    move || {
        let (lock, inside) = (lock.clone(), inside.clone());
        Box::new(move || match lock.try_lock() {
            Ok(mut taken) => *taken += 1,
            Err(TryLockError::WouldBlock) => {
                inside.fetch_add(1, Ordering::SeqCst);
            }
            Err(TryLockError::Poisoned(e)) => panic!("{e}"),
        })
    }
}

/// rayon#1174 (and #592): a job holds a `Mutex` across `join`s while outside threads
/// spawn jobs that take the same mutex. On rayon-core those jobs wait their turn; run
/// inside the locked section, on the thread holding the lock, each would deadlock (here
/// `try_lock` counts them instead).
#[test]
fn a_mutex_held_across_joins_is_not_taken_by_an_injected_job_on_its_thread() {
    watchdog(120, || {
        let pool = one_thread_pool();
        let lock = Arc::new(Mutex::new(0usize));
        let inside = Arc::new(AtomicUsize::new(0));
        let job = try_lock_jobs(&lock, &inside);
        with_injections(&pool, job, |repeat| {
            let guard = lock.lock().unwrap();
            repeat(31, &|| assert_eq!(joins(5), 32));
            drop(guard);
        });
        assert_eq!(
            inside.load(Ordering::SeqCst),
            0,
            "injected jobs ran inside the locked section"
        );
        assert_eq!(*lock.lock().unwrap(), INJECTED);
    });
}

thread_local! {
    static TABLE: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// rayon#1253: a thread-local `RefCell` stays borrowed across `join`s while outside
/// threads send jobs that borrow it. Run inside the borrow, each would find it borrowed
/// (`BorrowMutError`, a panic with `borrow_mut`).
#[test]
fn a_thread_local_borrowed_across_joins_is_not_borrowed_by_an_injected_job() {
    watchdog(120, || {
        let pool = one_thread_pool();
        let borrowed = Arc::new(AtomicUsize::new(0));
        let job = {
            let borrowed = borrowed.clone();
            move || {
                let borrowed = borrowed.clone();
                move || {
                    TABLE.with(|table| match table.try_borrow_mut() {
                        Ok(mut table) => table.push(1),
                        Err(_) => {
                            borrowed.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                }
            }
        };
        with_injections(&pool, job, |repeat| {
            TABLE.with(|table| {
                let mut table = table.borrow_mut();
                table.clear();
                repeat(31, &|| assert_eq!(joins(5), 32));
                table.push(0);
            })
        });
        assert_eq!(
            borrowed.load(Ordering::SeqCst),
            0,
            "injected jobs found the section's borrow"
        );
        let len = pool.install(|| TABLE.with(|table| table.borrow().len()));
        assert_eq!(len, INJECTED + 1);
    });
}

/// rayon#1251: a `OnceLock` whose initialiser is built from `join`s, while outside
/// threads spawn jobs that call `get_or_init` on the same cell. Started inside the
/// initialiser, each would re-enter it (a deadlock or a panic in std); here the job
/// counts itself instead of calling `get_or_init` while the initialiser runs.
#[test]
fn a_once_lock_initialised_with_joins_is_not_reentered_by_an_injected_job() {
    watchdog(120, || {
        let pool = one_thread_pool();
        let cell = Arc::new(OnceLock::new());
        let initialising = Arc::new(AtomicBool::new(false));
        let reentered = Arc::new(AtomicUsize::new(0));
        let job = {
            let (cell, initialising, reentered) =
                (cell.clone(), initialising.clone(), reentered.clone());
            move || {
                let (cell, initialising, reentered) =
                    (cell.clone(), initialising.clone(), reentered.clone());
                move || {
                    if initialising.load(Ordering::SeqCst) {
                        reentered.fetch_add(1, Ordering::SeqCst);
                    } else {
                        assert_eq!(*cell.get_or_init(|| 0u64), 42);
                    }
                }
            }
        };
        with_injections(&pool, job, |repeat| {
            let value = cell.get_or_init(|| {
                initialising.store(true, Ordering::SeqCst);
                repeat(31, &|| assert_eq!(joins(5), 32));
                initialising.store(false, Ordering::SeqCst);
                42
            });
            assert_eq!(*value, 42);
        });
        assert_eq!(
            reentered.load(Ordering::SeqCst),
            0,
            "injected jobs started inside the initialiser"
        );
    });
}

/// rayon#765: `join(producer, consumer)` pairs, where the consumer needs what the
/// producer made, while injected jobs wait on another pool (a cross-pool `install`
/// waits by running this pool's jobs). A `join`'s second half must never start on its
/// own thread before the first half returned: here the consumer would wait for ever.
#[test]
fn a_second_half_never_starts_before_its_first_half_on_the_owner() {
    watchdog(120, || {
        let pool = one_thread_pool();
        let other = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let early = Arc::new(AtomicUsize::new(0));
        let job = {
            let other = other.clone();
            move || {
                let other = other.clone();
                move || {
                    // Long enough that the waiting worker looks for local work.
                    other.install(|| thread::sleep(Duration::from_micros(200)))
                }
            }
        };
        let pairs = AtomicUsize::new(0);
        with_injections(&pool, job, |repeat| {
            // A pair is 8 `join`s: itself and the producer's tree.
            repeat(8, &|| {
                let produced = AtomicBool::new(false);
                stealpool::join(
                    || {
                        assert_eq!(joins(3), 8);
                        produced.store(true, Ordering::SeqCst);
                    },
                    || {
                        if !produced.load(Ordering::SeqCst) {
                            early.fetch_add(1, Ordering::SeqCst);
                        }
                    },
                );
                pairs.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert!(pairs.load(Ordering::Relaxed) >= JOINS_AFTER / 8);
        assert_eq!(
            early.load(Ordering::SeqCst),
            0,
            "a consumer half started before its producer returned"
        );
    });
}

/// rayon#1174 with a scope instead of `join`s: a job holds a `Mutex` across a scope whose
/// jobs stay on this worker's deque (its one worker is busy). rayon-core's scope waits by
/// popping its own deque first, so injected jobs start only after the scope; a worker
/// that let injected work overtake local work in a wait would run them under the lock.
#[test]
fn a_mutex_held_across_a_scope_is_not_taken_by_an_injected_job_while_the_scope_has_local_jobs() {
    watchdog(120, || {
        let pool = one_thread_pool();
        let lock = Arc::new(Mutex::new(0usize));
        let inside = Arc::new(AtomicUsize::new(0));
        let job = try_lock_jobs(&lock, &inside);
        with_injections(&pool, job, |repeat| {
            let guard = lock.lock().unwrap();
            // The injections start inside the scope, whose first job queues a scope job
            // per turn: every one the scope's wait pops was queued after them.
            stealpool::scope(|s| {
                s.spawn(|s| repeat(1, &|| s.spawn(|_| ())));
            });
            drop(guard);
        });
        assert_eq!(
            inside.load(Ordering::SeqCst),
            0,
            "injected jobs ran inside the locked scope"
        );
        assert_eq!(*lock.lock().unwrap(), INJECTED);
    });
}
