//! What stealpool adds to rayon-core's API, part one: join handles and `wait_idle`
//! (`shutdown.rs` and `metrics.rs` hold the others). Every test runs under a watchdog.

mod common;

use common::{pool, quiet_expected_panics, watchdog, EXPECTED};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, channel, Receiver};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

// ---------------------------------------------------------------- join handles

#[test]
fn handle_returns_the_value() {
    watchdog(30, || {
        let pool = pool(2);
        let handles: Vec<_> = (0..100u64)
            .map(|i| pool.spawn_with_handle(move || i * i))
            .collect();
        let values: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(values, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
    });
}

#[test]
fn handle_returns_the_panic_and_the_panic_handler_does_not_see_it() {
    quiet_expected_panics();
    watchdog(30, || {
        let handled = Arc::new(AtomicUsize::new(0));
        let h = Arc::clone(&handled);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |_| {
                h.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        let handle = pool.spawn_with_handle(|| -> u32 { panic!("{EXPECTED} handle") });
        let payload = handle.join().unwrap_err();
        assert_eq!(
            common::payload_str(&*payload),
            Some(&*format!("{EXPECTED} handle"))
        );
        // The pool is still fine, and the handler never saw the panic.
        assert_eq!(pool.spawn_with_handle(|| 5).join().unwrap(), 5);
        pool.wait_idle().unwrap();
        assert_eq!(handled.load(Ordering::SeqCst), 0);
    });
}

/// A two-worker pool whose panic handler sends each payload's message down the channel.
fn pool_reporting_panics() -> (ThreadPool, Receiver<Option<String>>) {
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .panic_handler(move |p| {
            let msg = common::payload_str(&*p).map(str::to_owned);
            tx.lock().unwrap().send(msg).unwrap();
        })
        .build()
        .unwrap();
    (pool, rx)
}

#[test]
fn dropped_handle_sends_the_panic_to_the_panic_handler() {
    quiet_expected_panics();
    watchdog(30, || {
        let (pool, rx) = pool_reporting_panics();
        let gate = Arc::new(Barrier::new(2));
        let g = Arc::clone(&gate);
        let handle = pool.spawn_with_handle(move || -> u32 {
            g.wait();
            panic!("{EXPECTED} detached")
        });
        drop(handle); // detached before the job can finish
        gate.wait();
        assert_eq!(
            rx.recv().unwrap().as_deref(),
            Some(&*format!("{EXPECTED} detached"))
        );
    });
}

/// A value nobody joins whose destructor panics, and a panic nobody joins after the job
/// finished: both reach the panic handler, whether the handle was dropped before the job
/// finished (the job drops the value) or after (the handle drops it).
#[test]
fn unjoined_panics_reach_the_panic_handler_whenever_the_handle_is_dropped() {
    struct Boom;
    impl Drop for Boom {
        fn drop(&mut self) {
            panic!("{EXPECTED} value dropped");
        }
    }
    quiet_expected_panics();
    watchdog(30, || {
        let (pool, rx) = pool_reporting_panics();
        let value_dropped = Some(format!("{EXPECTED} value dropped"));
        // Dropped before the job finished: the job drops the value.
        let gate = Arc::new(Barrier::new(2));
        let g = Arc::clone(&gate);
        let handle = pool.spawn_with_handle(move || {
            g.wait();
            Boom
        });
        drop(handle);
        gate.wait();
        assert_eq!(rx.recv().unwrap(), value_dropped);
        // Dropped after: the handle drops the value, on this thread.
        let handle = pool.spawn_with_handle(|| Boom);
        assert!(common::wait_until(Duration::from_secs(20), || handle.is_finished()));
        drop(handle);
        assert_eq!(rx.recv().unwrap(), value_dropped);
        // A panic of the job itself, dropped unjoined after it finished.
        let handle = pool.spawn_with_handle(|| -> u32 { panic!("{EXPECTED} unjoined") });
        assert!(common::wait_until(Duration::from_secs(20), || handle.is_finished()));
        drop(handle);
        assert_eq!(
            rx.recv().unwrap().as_deref(),
            Some(&*format!("{EXPECTED} unjoined"))
        );
        // Joined, the panic is the joiner's and the value's destructor runs there.
        let joined = pool.spawn_with_handle(|| -> u32 { panic!("{EXPECTED} joined") });
        assert!(joined.join().is_err());
        pool.wait_idle().unwrap();
        assert!(rx.try_recv().is_err(), "a joined panic reached the handler");
    });
}

#[test]
fn join_on_a_worker_keeps_running_jobs() {
    // A 1-thread pool: the only worker joins a handle whose job sits in its own deque
    // behind nothing else. Blocking the thread would deadlock; running jobs does not.
    watchdog(30, || {
        let pool = pool(1);
        let total = pool.install(|| {
            let handles: Vec<_> = (0..50u64)
                .map(|i| stealpool::spawn_with_handle(move || i))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
        });
        assert_eq!(total, (0..50u64).sum::<u64>());
        // And from another pool's worker: it waits by running its own pool's jobs.
        let other = pool_with_name(1);
        let v = other.install(|| pool.spawn_with_handle(|| 11).join().unwrap());
        assert_eq!(v, 11);
    });
}

fn pool_with_name(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("other-{i}"))
        .build()
        .unwrap()
}

#[test]
fn is_finished_turns_true_only_after_the_job_ran() {
    watchdog(30, || {
        let pool = pool(2);
        let gate = Arc::new(Barrier::new(2));
        let g = Arc::clone(&gate);
        let handle = pool.spawn_with_handle(move || {
            g.wait();
            7
        });
        assert!(!handle.is_finished());
        gate.wait();
        while !handle.is_finished() {
            thread::yield_now();
        }
        assert_eq!(handle.join().unwrap(), 7);
    });
}

#[test]
fn free_spawn_with_handle_uses_the_current_pool() {
    watchdog(30, || {
        let pool = pool(2);
        let index = pool.install(|| {
            stealpool::spawn_with_handle(stealpool::current_thread_index)
                .join()
                .unwrap()
        });
        assert!(matches!(index, Some(0 | 1)));
        // Outside any pool it goes to the global pool.
        assert!(
            stealpool::spawn_with_handle(stealpool::current_thread_index)
                .join()
                .unwrap()
                .is_some()
        );
    });
}

// ---------------------------------------------------------------- wait_idle

#[test]
fn wait_idle_waits_for_nested_spawns() {
    watchdog(60, || {
        let pool = pool(2);
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let done = Arc::clone(&done);
            pool.spawn(move || {
                // Three levels of nested spawns, mixing the flavours.
                for _ in 0..5 {
                    let done = Arc::clone(&done);
                    stealpool::spawn_fifo(move || {
                        let d = Arc::clone(&done);
                        stealpool::spawn(move || {
                            d.fetch_add(1, Ordering::SeqCst);
                        });
                        done.fetch_add(1, Ordering::SeqCst);
                    });
                }
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        pool.wait_idle().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 20 + 20 * 5 * 2);
        // Idle again right away, and reusable.
        pool.wait_idle().unwrap();
        let d = Arc::clone(&done);
        pool.spawn_broadcast(move |_| {
            d.fetch_add(1, Ordering::SeqCst);
        });
        pool.wait_idle().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 220 + 2);
    });
}

/// Four threads spawn and then wait at once: a gate job keeps the pool busy until every
/// waiter is blocked inside `wait_idle` (Linux, `/proc`; elsewhere the test skips), so the
/// four waits overlap, and each returns only after everything spawned ran.
#[test]
fn wait_idle_from_many_threads_at_once() {
    if common::blocked::my_tid().is_none() {
        common::skip("no /proc: the waiters cannot be seen blocked");
        return;
    }
    watchdog(60, || {
        let pool = Arc::new(pool(2));
        let counter = Arc::new(AtomicUsize::new(0));
        let (tids, waiting) = mpsc::channel::<String>();
        let gate_opened = Arc::new(AtomicBool::new(false));
        let opened = Arc::clone(&gate_opened);
        pool.spawn(move || {
            let waiters: Vec<String> = waiting.iter().take(4).collect();
            for tid in &waiters {
                common::blocked::wait_blocked(tid);
            }
            opened.store(true, Ordering::SeqCst);
        });
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let (pool, counter, tids) = (Arc::clone(&pool), Arc::clone(&counter), tids.clone());
                let gate_opened = Arc::clone(&gate_opened);
                thread::spawn(move || {
                    for _ in 0..200 {
                        let c = Arc::clone(&counter);
                        pool.spawn(move || {
                            c.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                    tids.send(common::blocked::my_tid().unwrap()).unwrap();
                    pool.wait_idle().unwrap();
                    // The gate ran (so every waiter blocked before any returned), and
                    // everything this thread spawned has run.
                    gate_opened.load(Ordering::SeqCst) && counter.load(Ordering::SeqCst) >= 200
                })
            })
            .collect();
        for w in waiters {
            assert!(w.join().unwrap());
        }
        pool.wait_idle().unwrap();
        assert_eq!(counter.load(Ordering::SeqCst), 800);
    });
}

#[test]
fn wait_idle_on_its_own_worker_is_an_error_not_a_deadlock() {
    watchdog(30, || {
        let pool = Arc::new(pool(2));
        let p = Arc::clone(&pool);
        let err = pool.install(move || p.wait_idle().unwrap_err());
        assert!(err.to_string().contains("own workers"), "{err}");
        let p = Arc::clone(&pool);
        let from_spawn = pool.spawn_with_handle(move || p.wait_idle().is_err());
        assert!(from_spawn.join().unwrap());
    });
}
