//! Pools used from thread-local destructors, including after the pool's own per-thread
//! state (the latch an outside thread waits on) was destroyed: destructors of thread
//! locals run in an unspecified order, and one that was registered *before* stealpool's
//! runs after it. Each must work, not panic with a TLS access error.

mod common;

use std::sync::mpsc;
use std::thread;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

/// Runs `install`, `in_place_scope` and `broadcast` when dropped, and reports the
/// results on the channel.
struct UsesPoolOnDrop(Option<mpsc::Sender<(i32, usize, Vec<usize>)>>);

impl Drop for UsesPoolOnDrop {
    fn drop(&mut self) {
        let Some(tx) = self.0.take() else { return };
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let installed = pool.install(|| 5);
        let mut spawned = 0;
        stealpool::in_place_scope(|s| {
            s.spawn(|_| spawned = 1);
        });
        let broadcast = pool.broadcast(|ctx| ctx.index());
        tx.send((installed, spawned, broadcast)).unwrap();
    }
}

thread_local!(static ON_EXIT: std::cell::RefCell<UsesPoolOnDrop> =
    const { std::cell::RefCell::new(UsesPoolOnDrop(None)) });

/// `pool_first`: whether the thread uses a pool from outside (creating stealpool's
/// thread-local latch) before registering `ON_EXIT`.
fn run(pool_first: bool) -> (i32, usize, Vec<usize>) {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        if pool_first {
            pool.install(|| ());
        }
        ON_EXIT.with(|slot| slot.borrow_mut().0 = Some(tx));
        if !pool_first {
            pool.install(|| ());
        }
    })
    .join()
    .expect("the thread (or a thread-local destructor) panicked");
    rx.recv().expect("the destructor sent nothing")
}

#[test]
fn a_destructor_registered_before_the_pools_latch_can_use_a_pool() {
    assert_eq!(watchdog(60, || run(false)), (5, 1, vec![0]));
}

#[test]
fn a_destructor_registered_after_the_pools_latch_can_use_a_pool() {
    assert_eq!(watchdog(60, || run(true)), (5, 1, vec![0]));
}
