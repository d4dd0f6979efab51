//! Pools used from thread-local destructors, including after the pool's own per-thread
//! state (the latch an outside thread waits on) was destroyed: destructors of thread
//! locals run in an unspecified order, and one that was registered *before* stealpool's
//! runs after it. Each must work, not panic with a TLS access error.
//!
//! On Windows a thread runs its thread-local destructors holding the loader lock, under
//! which no new thread can start and none can finish exiting. A pool built there is still
//! built, and a job `spawn`ed into it runs once the lock is released (as on rayon-core);
//! but a wait for its workers panics with the reason instead of hanging, and `shutdown`
//! returns an error. A pool built before, whose workers run, works there as everywhere.
//!
//! And the other way round: a worker's own thread-local destructors may wait for anything
//! (a lock, another pool), also for the thread that lets the pool go. Nobody but
//! `shutdown` waits for a worker thread to end, as on rayon-core, so dropping the last
//! handle never waits for those destructors.

mod common;

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::watchdog;
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// What a destructor saw: `install`'s result, the jobs a scope spawned, and `broadcast`'s
/// indices; or, where waiting is refused (Windows), the panic of `install` and the error
/// of `shutdown`.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ran(i32, usize, Vec<usize>),
    Refused { install: String, shutdown: String },
}

/// Uses a pool when dropped (the one it holds, else one it builds there): first a
/// `spawn` that reports on `spawned` whenever it runs, then the waits. Reports the
/// outcome on the channel.
struct UsesPoolOnDrop(Option<(mpsc::Sender<Outcome>, mpsc::Sender<()>, Option<ThreadPool>)>);

impl Drop for UsesPoolOnDrop {
    fn drop(&mut self) {
        let Some((tx, spawned, pool)) = self.0.take() else {
            return;
        };
        let pool = pool.unwrap_or_else(|| ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        pool.spawn(move || spawned.send(()).unwrap());
        let installed = match std::panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| 5))) {
            Ok(installed) => installed,
            Err(payload) => {
                let install = common::payload_str(&*payload).unwrap_or("?").to_owned();
                let shutdown = pool.shutdown().unwrap_err().to_string();
                tx.send(Outcome::Refused { install, shutdown }).unwrap();
                return;
            }
        };
        let mut spawned = 0;
        pool.in_place_scope(|s| {
            s.spawn(|_| spawned = 1);
        });
        let broadcast = pool.broadcast(|ctx| ctx.index());
        tx.send(Outcome::Ran(installed, spawned, broadcast))
            .unwrap();
    }
}

thread_local!(static ON_EXIT: std::cell::RefCell<UsesPoolOnDrop> =
    const { std::cell::RefCell::new(UsesPoolOnDrop(None)) });

/// `pool_first`: whether the thread uses a pool from outside (creating stealpool's
/// thread-local latch) before registering `ON_EXIT`. `prebuilt`: whether the destructor
/// gets a pool built, and started, before the thread exits, instead of building one
/// itself. Returns the outcome, and whether the spawned job ran (within 60 s).
fn run(pool_first: bool, prebuilt: bool) -> (Outcome, bool) {
    let (tx, rx) = mpsc::channel();
    let (spawned_tx, spawned_rx) = mpsc::channel();
    thread::spawn(move || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        if pool_first {
            pool.install(|| ());
        }
        // Its one worker has started once it ran a job.
        let for_drop = prebuilt.then(|| {
            let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            pool.install(|| ());
            pool
        });
        ON_EXIT.with(|slot| slot.borrow_mut().0 = Some((tx, spawned_tx, for_drop)));
        if !pool_first {
            pool.install(|| ());
        }
    })
    .join()
    .expect("the thread (or a thread-local destructor) panicked");
    let outcome = rx.recv().expect("the destructor sent nothing");
    let spawned = spawned_rx.recv_timeout(Duration::from_secs(60)).is_ok();
    (outcome, spawned)
}

/// A pool built inside the destructor: works, except that on Windows the waits are
/// refused, saying why; the spawned job runs everywhere.
fn assert_built_in_destructor((outcome, spawned): (Outcome, bool)) {
    assert!(spawned, "the job spawned in the destructor never ran");
    match outcome {
        Outcome::Refused { install, shutdown } if cfg!(windows) => {
            assert!(install.contains("loader lock"), "{install}");
            assert!(shutdown.contains("loader lock"), "{shutdown}");
        }
        outcome => assert_eq!(outcome, Outcome::Ran(5, 1, vec![0])),
    }
}

#[test]
fn a_destructor_registered_before_the_pools_latch_can_use_a_pool() {
    assert_built_in_destructor(watchdog(120, || run(false, false)));
}

#[test]
fn a_destructor_registered_after_the_pools_latch_can_use_a_pool() {
    assert_built_in_destructor(watchdog(120, || run(true, false)));
}

#[test]
fn a_destructor_can_use_a_pool_built_before_the_thread_exits() {
    for pool_first in [false, true] {
        let (outcome, spawned) = watchdog(120, move || run(pool_first, true));
        assert_eq!(outcome, Outcome::Ran(5, 1, vec![0]));
        assert!(spawned);
    }
}

/// Worker thread-locals whose destructors take `LOCKED`, registered on every worker by
/// the start handler.
mod locked_on_exit {
    use std::sync::Mutex;

    pub static LOCKED: Mutex<u64> = Mutex::new(0);

    pub struct TakesTheLock;

    impl Drop for TakesTheLock {
        fn drop(&mut self) {
            *LOCKED.lock().unwrap() += 1;
        }
    }

    thread_local! {
        pub static ON_EXIT: TakesTheLock = const { TakesTheLock };
    }

    /// A pool of `n` workers whose thread-local destructors take `LOCKED`.
    pub fn builder(n: usize) -> stealpool::ThreadPoolBuilder {
        stealpool::ThreadPoolBuilder::new()
            .num_threads(n)
            .start_handler(|_| ON_EXIT.with(|_| ()))
    }
}

/// The handle dropped while its dropper holds the lock the workers' thread-local
/// destructors take: the drop returns (it never waits for the workers' exit), then the
/// destructors run. Whether the dropper or the last worker is the last to let go of the
/// pool is a race; each iteration gives it a chance either way.
#[test]
fn dropping_a_pool_never_waits_for_its_workers_thread_local_destructors() {
    watchdog(60, || {
        for _ in 0..1000 {
            let pool = locked_on_exit::builder(2).build().unwrap();
            pool.install(|| ());
            let held = locked_on_exit::LOCKED.lock().unwrap();
            drop(pool);
            drop(held);
        }
    });
}

/// The building thread of a `use_current_thread` pool is always the last to let go of
/// its pool (its worker state lives until the thread exits). It exits while another
/// thread holds the lock that the other workers' thread-local destructors take, and that
/// thread joins it: the exit must not wait for those destructors.
#[test]
fn the_building_thread_of_a_use_current_thread_pool_exits_without_waiting_for_the_workers() {
    if cfg!(windows) {
        // Every thread runs its thread-local destructors holding the loader lock, which
        // every thread's exit needs: worker 1, waiting for the lock in its destructor,
        // keeps the building thread from exiting, on any pool (rayon-core too), and the
        // whole process's thread starts and exits with it.
        common::skip("a worker's thread-local destructor that waits holds Windows' loader lock");
        return;
    }
    watchdog(60, || {
        for _ in 0..20 {
            let held = locked_on_exit::LOCKED.lock().unwrap();
            thread::spawn(|| {
                let pool = locked_on_exit::builder(2)
                    .use_current_thread()
                    .build()
                    .unwrap();
                assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
            })
            .join()
            .unwrap();
            drop(held);
        }
    });
}
