//! Unit tests of `join` that need crate internals.

use crate::ThreadPoolBuilder;
use std::sync::Barrier;

#[test]
fn second_half_runs_inline_on_one_thread() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (a, b) = pool.install(|| {
        crate::join_context(
            |ctx| (ctx.migrated(), crate::current_thread_index()),
            |ctx| (ctx.migrated(), crate::current_thread_index()),
        )
    });
    assert_eq!(a, (false, Some(0)));
    assert_eq!(b, (false, Some(0)));
}

#[test]
fn second_half_is_stolen_when_first_half_blocks() {
    // `a` waits at a barrier that only `b` can release, so `b` must be stolen.
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let barrier = Barrier::new(2);
    let (a, b) = pool.install(|| {
        crate::join_context(
            |ctx| {
                barrier.wait();
                ctx.migrated()
            },
            |ctx| {
                barrier.wait();
                ctx.migrated()
            },
        )
    });
    assert!(!a);
    assert!(b);
}

#[test]
fn join_from_outside_reports_migrated() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    // Inside `install` the `join` runs on the worker that called it: `a` is not migrated.
    // From outside any pool the whole `join` is injected into the global pool, and both
    // halves count as migrated.
    let (a, _) = pool.install(|| crate::join_context(|ctx| ctx.migrated(), |_| ()));
    assert!(!a, "inside install the join itself is not injected");
    let (a, b) = crate::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
    assert!(
        a && b,
        "a join from outside any pool runs both halves elsewhere"
    );
}
