//! rayon-core 1.13's API: ThreadPool::install and cross-pool installs.

use super::*;

#[test]
fn install_runs_on_a_worker_and_returns_the_value() {
    watchdog(TIMEOUT, || {
        let pool = pool(3);
        let caller = thread::current().id();
        let (index, thread_id, text) = pool.install(|| {
            (
                pool.current_thread_index(),
                thread::current().id(),
                "value".to_owned(),
            )
        });
        assert!(matches!(index, Some(i) if i < 3), "{index:?}");
        assert_ne!(thread_id, caller);
        assert_eq!(text, "value");
        // On a worker of the same pool, install runs inline.
        let (outer, inner) = pool.install(|| {
            let outer = thread::current().id();
            (outer, pool.install(|| thread::current().id()))
        });
        assert_eq!(outer, inner);
    });
}

#[test]
fn install_panic_propagates() {
    quiet_expected_panics();
    watchdog(TIMEOUT, || {
        let pool = pool(2);
        let err = catch(|| pool.install(|| -> i32 { panic!("{}", expected("install")) }));
        assert_eq!(err, Err(expected("install")));
        assert_eq!(pool.install(|| 1), 1);
    });
}

#[test]
fn self_install_on_a_single_thread_pool() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        assert!(pool.install(|| pool.install(|| true)));
    });
}

#[test]
fn mutual_install() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        // pool1 -> pool2 -> pool1: the waiting pool1 worker must run the
        // inner job itself.
        let ok = pool1.install(|| pool2.install(|| pool1.install(|| true)));
        assert!(ok);
    });
}

/// Each mutual install starts with both pools asleep: the main thread waits until the
/// only worker of each pool is parked (`common::wait_parked`) before it installs.
#[test]
fn mutual_install_after_both_pools_went_idle() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        assert_eq!(pool1.install(|| 1), 1);
        assert_eq!(pool2.install(|| 2), 2);
        common::wait_parked(&pool1, 1);
        common::wait_parked(&pool2, 1);
        let ok = pool1.install(|| pool2.install(|| pool1.install(|| true)));
        assert!(ok);
        // And the other way round, again from two parked pools.
        common::wait_parked(&pool1, 1);
        common::wait_parked(&pool2, 1);
        let ok = pool2.install(|| pool1.install(|| pool2.install(|| true)));
        assert!(ok);
    });
}

/// rayon-core's `mutual_install_sleepy` without its sleeps: a cross-pool install is made
/// while the target pool's only worker is parked. The job that makes it first stops at a
/// barrier with the main thread, which reaches the barrier only once that worker is parked
/// (`common::wait_parked`): pool2's idle worker before pool1 -> pool2; in the second part
/// also pool1's worker, parked in its wait for that install, before pool2 -> pool1.
#[test]
fn mutual_install_after_a_barrier_with_the_main_thread() {
    watchdog(TIMEOUT, || {
        let pool1 = pool(1);
        let pool2 = pool(1);
        assert_eq!(pool1.install(|| 1), 1);
        assert_eq!(pool2.install(|| 2), 2);
        let barrier = Barrier::new(2);
        let ok = thread::scope(|s| {
            let helper = s.spawn(|| {
                pool1.install(|| {
                    // pool1's only worker blocks here with the main thread
                    // before it installs into pool2.
                    barrier.wait();
                    pool2.install(|| pool1.install(|| true))
                })
            });
            common::wait_parked(&pool2, 1);
            barrier.wait();
            helper.join().unwrap()
        });
        assert!(ok);

        // Both levels stop at a barrier with the main thread first, and the innermost
        // job at a third one, which the main thread reaches once pool2's worker, waiting
        // for that job, is parked again (rayon's second sleep).
        let first = Barrier::new(2);
        let second = Barrier::new(2);
        let third = Barrier::new(2);
        let ok = thread::scope(|s| {
            let helper = s.spawn(|| {
                pool1.install(|| {
                    first.wait();
                    pool2.install(|| {
                        second.wait();
                        pool1.install(|| {
                            third.wait();
                            true
                        })
                    })
                })
            });
            common::wait_parked(&pool2, 1);
            first.wait();
            // pool1's worker now waits for its install into pool2, which waits here.
            common::wait_parked(&pool1, 1);
            second.wait();
            // pool2's worker now waits for its install into pool1, which waits here.
            common::wait_parked(&pool2, 1);
            third.wait();
            helper.join().unwrap()
        });
        assert!(ok);
    });
}

#[test]
fn install_from_another_pool_keeps_running_that_pools_jobs() {
    watchdog(TIMEOUT, || {
        // rayon-core thread_pool/mod.rs 78ff: a worker of pool1 waiting in
        // pool2.install keeps executing pool1's jobs. pool1 has one worker,
        // so the job spawned below can only run inside that wait.
        let pool1 = pool(1);
        let pool2 = pool(1);
        let got = pool1.install(|| {
            let (tx, rx) = mpsc::channel();
            rayon_core::spawn(move || tx.send(rayon_core::current_thread_index()).unwrap());
            pool2.install(move || rx.recv_timeout(WAIT))
        });
        assert_eq!(got, Ok(Some(0)));
    });
}

#[test]
fn thread_pool_debug() {
    let pool = pool(3);
    let text = format!("{pool:?}");
    assert!(text.starts_with("ThreadPool"), "{text}");
    assert!(text.contains("num_threads: 3"), "{text}");
}
