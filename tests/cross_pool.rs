//! Two pools calling into each other: `install` from a worker of pool A into pool B, which
//! installs back into A, must not deadlock, also when both pools are fully parked first
//! (the wake-ups then have to cross pools). Also `broadcast` and `JoinHandle::join` across
//! pools. Every test runs under a watchdog.

mod common;

use common::watchdog;
use stealpool::{ThreadPool, ThreadPoolBuilder};

fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

/// Waits until every worker of `pool` is parked.
fn wait_asleep(pool: &ThreadPool) {
    common::wait_parked(pool, pool.current_num_threads());
}

#[test]
fn mutual_install_with_both_pools_asleep() {
    watchdog(120, || {
        for (na, nb) in [(1, 1), (1, 2), (2, 3)] {
            let a = pool(na);
            let b = pool(nb);
            for round in 0..10 {
                wait_asleep(&a);
                wait_asleep(&b);
                let (ia, ib) = a.install(|| {
                    b.install(|| {
                        let ib = b.current_thread_index().unwrap();
                        let ia = a.install(|| a.current_thread_index().unwrap());
                        (ia, ib)
                    })
                });
                assert!(ia < na && ib < nb, "round {round}");
            }
        }
    });
}

#[test]
fn mutual_broadcast_with_both_pools_asleep() {
    watchdog(120, || {
        let a = pool(2);
        let b = pool(3);
        for _ in 0..10 {
            wait_asleep(&a);
            wait_asleep(&b);
            let runs: Vec<Vec<usize>> =
                a.broadcast(|_| b.broadcast(|ctx| ctx.index()).into_iter().collect());
            assert_eq!(runs, vec![vec![0, 1, 2]; 2]);
        }
    });
}

#[test]
fn join_handle_across_sleeping_pools() {
    watchdog(120, || {
        let a = pool(1);
        let b = pool(1);
        for i in 0..20u64 {
            wait_asleep(&a);
            wait_asleep(&b);
            // A's only worker waits for a job on B, which itself waits for one on A: the
            // worker must keep running A's jobs while it waits.
            let v = a.install(|| {
                b.spawn_with_handle({
                    let a_job = a.spawn_with_handle(move || i * 2);
                    move || a_job.join().unwrap() + 1
                })
                .join()
                .unwrap()
            });
            assert_eq!(v, i * 2 + 1);
        }
    });
}
