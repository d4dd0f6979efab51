//! Pools used from thread-local destructors, including after the pool's own per-thread
//! state (the latch an outside thread waits on) was destroyed: destructors of thread
//! locals run in an unspecified order, and one that was registered *before* stealpool's
//! runs after it. Each must work, not panic with a TLS access error.
//!
//! On Windows a thread runs its thread-local destructors holding the loader lock, under
//! which no new thread can start: building a pool there fails with a clear error instead
//! of handing out a pool whose workers never start (the first wait on it would hang). A
//! pool built before, whose workers run already, works there as everywhere (and waiting
//! on one whose workers have not all started panics with the reason: not tested, since
//! a panic in a thread-local destructor aborts the process).

mod common;

use std::sync::mpsc;
use std::thread;

use common::watchdog;
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// What a destructor saw: `install`'s result, the jobs a scope spawned, and `broadcast`'s
/// indices; or the build error.
type Outcome = Result<(i32, usize, Vec<usize>), String>;

/// Uses a pool when dropped (the one it holds, else one it builds there) and reports the
/// outcome on the channel.
struct UsesPoolOnDrop(Option<(mpsc::Sender<Outcome>, Option<ThreadPool>)>);

impl Drop for UsesPoolOnDrop {
    fn drop(&mut self) {
        let Some((tx, pool)) = self.0.take() else {
            return;
        };
        let pool = match pool.map_or_else(|| ThreadPoolBuilder::new().num_threads(1).build(), Ok) {
            Ok(pool) => pool,
            Err(err) => {
                tx.send(Err(err.to_string())).unwrap();
                return;
            }
        };
        let installed = pool.install(|| 5);
        let mut spawned = 0;
        pool.in_place_scope(|s| {
            s.spawn(|_| spawned = 1);
        });
        let broadcast = pool.broadcast(|ctx| ctx.index());
        tx.send(Ok((installed, spawned, broadcast))).unwrap();
    }
}

thread_local!(static ON_EXIT: std::cell::RefCell<UsesPoolOnDrop> =
    const { std::cell::RefCell::new(UsesPoolOnDrop(None)) });

/// `pool_first`: whether the thread uses a pool from outside (creating stealpool's
/// thread-local latch) before registering `ON_EXIT`. `prebuilt`: whether the destructor
/// gets a pool built before the thread exits, instead of building one itself.
fn run(pool_first: bool, prebuilt: bool) -> Outcome {
    let (tx, rx) = mpsc::channel();
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
        ON_EXIT.with(|slot| slot.borrow_mut().0 = Some((tx, for_drop)));
        if !pool_first {
            pool.install(|| ());
        }
    })
    .join()
    .expect("the thread (or a thread-local destructor) panicked");
    rx.recv().expect("the destructor sent nothing")
}

/// A pool built inside the destructor: works, except on Windows, where the build fails
/// and says why.
fn assert_built_in_destructor(outcome: Outcome) {
    if cfg!(windows) {
        let err = outcome.expect_err("a pool built under the loader lock");
        assert!(err.contains("loader lock"), "{err}");
    } else {
        assert_eq!(outcome, Ok((5, 1, vec![0])));
    }
}

#[test]
fn a_destructor_registered_before_the_pools_latch_can_use_a_pool() {
    assert_built_in_destructor(watchdog(60, || run(false, false)));
}

#[test]
fn a_destructor_registered_after_the_pools_latch_can_use_a_pool() {
    assert_built_in_destructor(watchdog(60, || run(true, false)));
}

#[test]
fn a_destructor_can_use_a_pool_built_before_the_thread_exits() {
    assert_eq!(watchdog(60, || run(false, true)), Ok((5, 1, vec![0])));
    assert_eq!(watchdog(60, || run(true, true)), Ok((5, 1, vec![0])));
}
