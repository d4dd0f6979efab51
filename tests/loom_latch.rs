//! Loom model of `LockLatch` (the real type, through `stealpool::__loom_latch`), the latch
//! of a pool's start-up and shutdown that any number of outside threads wait on: every
//! waiter returns once it is set (a lost notification is a loom deadlock), and sees what
//! the setter wrote before setting it (loom reports a data race otherwise). The
//! `CoreLatch` a worker sleeps on is modelled in `tests/loom_sleep.rs`, `CountLatch` in
//! `tests/loom_scope.rs`.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --test
//! loom_latch` (as `.ci/run` does).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_latch::ModelLockLatch;

struct Shared {
    latch: ModelLockLatch,
    data: UnsafeCell<usize>,
}

// SAFETY: `data` is written before `latch` is set and read after it; loom checks it.
unsafe impl Sync for Shared {}

#[test]
fn every_waiter_wakes_and_sees_the_setters_writes() {
    loom::model(|| {
        let shared = Arc::new(Shared {
            latch: ModelLockLatch::default(),
            data: UnsafeCell::new(0),
        });
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    shared.latch.wait();
                    // SAFETY: read after the latch (loom checks the ordering).
                    let value = shared.data.with(|d| unsafe { *d });
                    assert_eq!(value, 7);
                })
            })
            .collect();
        // SAFETY: the only writer, before the set.
        shared.data.with_mut(|d| unsafe { *d = 7 });
        shared.latch.set();
        for waiter in waiters {
            waiter.join().unwrap();
        }
    });
}
