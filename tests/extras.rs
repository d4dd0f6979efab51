//! What stealpool adds to rayon-core's API: join handles, `wait_idle`, `shutdown`, and
//! metrics. Every test runs under a watchdog.

mod common;

use common::{quiet_expected_panics, watchdog, EXPECTED};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

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

#[test]
fn wait_idle_from_many_threads_at_once() {
    watchdog(60, || {
        let pool = Arc::new(pool(2));
        let counter = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let pool = Arc::clone(&pool);
                let counter = Arc::clone(&counter);
                thread::spawn(move || {
                    for _ in 0..200 {
                        let c = Arc::clone(&counter);
                        pool.spawn(move || {
                            c.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                    pool.wait_idle().unwrap();
                    // Everything this thread spawned has run.
                    counter.load(Ordering::SeqCst) >= 200
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

// ---------------------------------------------------------------- shutdown

#[test]
fn shutdown_returns_after_every_exit_handler_ran_and_queued_work_finished() {
    watchdog(60, || {
        for n in [1, 2, 5] {
            let exited = Arc::new(AtomicUsize::new(0));
            let ran = Arc::new(AtomicUsize::new(0));
            let e = Arc::clone(&exited);
            let pool = ThreadPoolBuilder::new()
                .num_threads(n)
                .exit_handler(move |_| {
                    e.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap();
            for _ in 0..100 {
                let ran = Arc::clone(&ran);
                pool.spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            }
            pool.shutdown().unwrap();
            assert_eq!(exited.load(Ordering::SeqCst), n, "{n} threads");
            assert_eq!(ran.load(Ordering::SeqCst), 100);
        }
    });
}

#[test]
fn shutdown_runs_thread_local_destructors() {
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    thread_local!(static FLAG: std::cell::RefCell<Option<Flag>> = const { std::cell::RefCell::new(None) });
    watchdog(30, || {
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&dropped);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .start_handler(move |_| FLAG.with(|f| *f.borrow_mut() = Some(Flag(Arc::clone(&d)))))
            .build()
            .unwrap();
        pool.broadcast(|_| ());
        pool.shutdown().unwrap();
        assert_eq!(dropped.load(Ordering::SeqCst), 3);
    });
}

#[test]
fn shutdown_with_a_spawn_handler_waits_for_exit_handlers() {
    watchdog(30, || {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_handler(|t| {
                thread::spawn(move || t.run());
                Ok(())
            })
            .build()
            .unwrap();
        pool.shutdown().unwrap();
        assert_eq!(exited.load(Ordering::SeqCst), 3);
    });
}

#[test]
fn shutdown_from_its_own_worker_is_an_error_and_the_pool_still_winds_down() {
    watchdog(30, || {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        let (tx, rx) = channel();
        let slot = Arc::new(Mutex::new(Some(pool)));
        let s = Arc::clone(&slot);
        // Hand the pool to one of its own jobs, which calls shutdown there.
        let pool_ref = slot.lock().unwrap();
        pool_ref.as_ref().unwrap().spawn(move || {
            let pool = s.lock().unwrap().take().unwrap();
            tx.send(pool.shutdown().is_err()).unwrap();
        });
        drop(pool_ref);
        assert!(rx.recv().unwrap());
        assert!(common::wait_until(
            std::time::Duration::from_secs(10),
            || { exited.load(Ordering::SeqCst) == 2 }
        ));
    });
}

// ---------------------------------------------------------------- metrics

#[test]
fn metrics_totals_add_up() {
    watchdog(60, || {
        for n in [1, 2, 4] {
            let pool = pool(n);
            for _ in 0..1000 {
                pool.spawn(|| {});
            }
            pool.wait_idle().unwrap();
            let m = pool.metrics();
            assert_eq!(m.workers.len(), n);
            assert_eq!(m.injected_jobs, 1000);
            let t = m.total();
            assert_eq!(t.jobs_executed, 1000, "{n} threads:\n{m}");
            // Every job came out of a queue: the injector (one per batch call, the rest
            // through the own deque), the own deque or a victim's.
            assert!(t.injector_batches >= 1);
            assert!(t.injector_jobs <= 1000);
            assert_eq!(
                t.injector_batches + t.local_pops + t.steals,
                1000,
                "{n} threads:\n{m}"
            );
        }
    });
}

#[test]
fn metrics_count_fifo_and_broadcast_jobs_once() {
    watchdog(60, || {
        let pool = pool(2);
        pool.spawn(|| {
            for _ in 0..10 {
                stealpool::spawn_fifo(|| {});
            }
        });
        pool.spawn_broadcast(|_| {});
        pool.wait_idle().unwrap();
        let t = pool.metrics().total();
        // 1 spawn + 10 spawn_fifo (each through one stub) + 2 broadcast runs.
        assert_eq!(t.jobs_executed, 1 + 10 + 2, "{}", pool.metrics());
        assert_eq!(t.broadcast_jobs, 2);
    });
}

#[test]
fn metrics_count_every_job_once_under_joins_scopes_and_handles() {
    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    watchdog(60, || {
        for n in [1, 2, 3] {
            let pool = pool(n);
            assert_eq!(pool.install(|| fib(22)), 17711);
            pool.scope(|s| {
                for i in 0..100 {
                    s.spawn(move |_| {
                        std::hint::black_box(fib(i % 10));
                    });
                }
            });
            let h = pool.spawn_with_handle(|| fib(15));
            assert_eq!(h.join().unwrap(), 610);
            pool.broadcast(|_| ());
            pool.wait_idle().unwrap();
            let m = pool.metrics();
            let t = m.total();
            assert_eq!(t.broadcast_jobs, n as u64);
            // Jobs known to run: the fib install and the scope's install (injected), the
            // 100 scope jobs, the handle's job, one broadcast copy per worker. Join halves
            // popped back are not jobs; stolen ones are, so only a 1-thread pool (where
            // nothing is stolen) has an exact count.
            let known = 1 + 1 + 100 + 1 + n as u64;
            if n == 1 {
                assert_eq!(t.jobs_executed, known, "{m}");
                assert_eq!(t.steals, 0, "{m}");
            } else {
                assert!(t.jobs_executed >= known, "{m}");
            }
        }
    });
}

#[test]
fn metrics_show_steals_when_a_worker_blocks_on_its_own_spawn() {
    // Worker A spawns a job onto its own deque and then blocks (outside the pool's
    // knowledge) until that job ran: only a steal by worker B can run it.
    watchdog(60, || {
        let pool = pool(2);
        for _ in 0..20 {
            pool.install(|| {
                let (tx, rx) = channel();
                stealpool::spawn(move || tx.send(()).unwrap());
                rx.recv().unwrap();
            });
        }
        let m = pool.metrics();
        assert!(m.total().steals >= 20, "{m}");
        // Both workers took part.
        assert!(m.workers.iter().all(|w| w.jobs_executed > 0), "{m}");
    });
}

#[test]
fn metrics_count_parks_of_an_idle_pool() {
    watchdog(60, || {
        let pool = pool(2);
        pool.broadcast(|_| ());
        // An idle pool parks its workers: wait until both have counted a park (the
        // counter is written just before the condvar wait, under the worker's mutex).
        // The hidden `sleeping_threads` hook would not do: it counts a worker at
        // registration, a step before the park is recorded.
        assert!(
            common::wait_until(std::time::Duration::from_secs(20), || {
                pool.metrics().workers.iter().all(|w| w.parks >= 1)
            }),
            "{}",
            pool.metrics()
        );
        // Wake them with a broadcast: each unparks once more at least.
        pool.broadcast(|_| ());
        let m2 = pool.metrics();
        assert!(m2.workers.iter().all(|w| w.unparks >= 1), "{m2}");
        let text = m2.to_string();
        assert!(
            text.contains("total") && text.contains("injected jobs"),
            "{text}"
        );
    });
}

#[test]
fn shutdown_on_the_building_thread_of_a_use_current_thread_pool() {
    watchdog(60, || {
        // On a fresh thread: it becomes worker 0 for life.
        thread::spawn(|| {
            let exited = Arc::new(AtomicUsize::new(0));
            let ran = Arc::new(AtomicUsize::new(0));
            let e = Arc::clone(&exited);
            let pool = ThreadPoolBuilder::new()
                .num_threads(3)
                .use_current_thread()
                .exit_handler(move |_| {
                    e.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap();
            assert_eq!(pool.current_thread_index(), Some(0));
            // One copy is queued for this very thread, which is not in the pool's loop:
            // shutdown must run it rather than wait for it forever.
            let r = Arc::clone(&ran);
            pool.spawn_broadcast(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
            });
            pool.shutdown().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 3);
            // Workers 1 and 2 ran their exit handler; worker 0 (this thread) never does.
            assert_eq!(exited.load(Ordering::SeqCst), 2);
            // The thread is still worker 0 of the terminated pool: work still runs here,
            // and a broadcast fails loudly instead of hanging.
            assert_eq!(stealpool::join(|| 1, || 2), (1, 2));
            let (tx, rx) = channel();
            stealpool::spawn(move || tx.send(3).unwrap());
            assert_eq!(rx.recv().unwrap(), 3);
            let hung = std::panic::catch_unwind(|| stealpool::broadcast(|_| ()));
            assert!(hung.is_err());
        })
        .join()
        .unwrap();
    });
}
