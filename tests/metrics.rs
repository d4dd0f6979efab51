//! `ThreadPool::metrics`: the counters add up, count every job once whatever path it took,
//! and show steals and parks where they must have happened. Every test runs under a
//! watchdog.

mod common;

use common::{pool, watchdog};
use std::sync::mpsc::channel;

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
