//! Loom models of the latches outside threads wait on (the real types, through
//! `stealpool::__loom_latch`): `LockLatch`, the latch of a pool's start-up and shutdown
//! that any number of outside threads wait on, and `ParkLatch`, the one an outside thread
//! parks on while its `install` runs on a worker. Every waiter returns once the latch is
//! set (a lost notification or unpark is a loom deadlock), and sees what the setter wrote
//! before setting it (loom reports a data race otherwise). The
//! `CoreLatch` a worker sleeps on is modelled in `tests/loom_sleep.rs`, `CountLatch` in
//! `tests/loom_scope.rs`.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --features loom --test
//! loom_latch` (as `.ci/run` does).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_latch::{ModelLockLatch, ModelParkLatch};

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

/// The owner of a `ParkLatch` parks until a worker sets it, and then sees the job's
/// result. A third thread unparks the owner too (tokens from other code, e.g. a
/// `Thread::unpark` by the user, are legal): the owner must not take that for the set.
#[test]
fn a_parked_owner_wakes_on_set_and_sees_the_setters_writes() {
    struct Parked {
        latch: ModelParkLatch,
        data: UnsafeCell<usize>,
    }
    // SAFETY: `data` is written before `latch` is set and read after it; loom checks it.
    unsafe impl Sync for Parked {}
    // SAFETY: as `Sync`: one writer, ordered before the reader by the latch.
    unsafe impl Send for Parked {}

    loom::model(|| {
        let shared = Arc::new(Parked {
            latch: ModelParkLatch::new(),
            data: UnsafeCell::new(0),
        });
        let owner = thread::current();
        // Not joined: the owner may hand a stray token back to itself (`ParkLatch::wait`),
        // which loom's `join` (built on the same park token) does not expect. A model
        // ends when all its threads have.
        thread::spawn(move || owner.unpark());
        {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                // SAFETY: the only writer, before the set.
                shared.data.with_mut(|d| unsafe { *d = 7 });
                shared.latch.set();
            });
        }
        shared.latch.wait();
        // SAFETY: read after the latch (loom checks the ordering).
        let value = shared.data.with(|d| unsafe { *d });
        assert_eq!(value, 7);
    });
}
