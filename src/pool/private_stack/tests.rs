//! The private stack on one thread: promotion, rescue, slot reuse, the push limit and
//! the poll (the races are `tests/loom_join.rs`'s).

use super::*;
use crate::job::StackJob;
use crate::latch::JoinLatch;
use crate::sleep::Sleep;
use crate::sync::barrier::CheckedLight;
use crate::sync::unchecked::Arc;

/// A half that is never run: the tests only move it between stacks.
type Nothing = StackJob<JoinLatch, fn(bool), ()>;

fn nothing() -> Nothing {
    fn never_run(_: bool) {
        unreachable!("the tests never run a half")
    }
    StackJob::new(never_run as fn(bool), JoinLatch::new_unwritten())
}

fn job(n: &Nothing) -> JoinHalf {
    // SAFETY: `n` outlives the stack it is pushed on in each test, and is never run.
    unsafe { n.as_join_half() }
}

fn stack() -> PrivateStack {
    PrivateStack::new(
        LatchOwner {
            sleep: Arc::new(Sleep::new(1)),
            index: 0,
        },
        true,
    )
}

#[test]
fn pops_see_promotion_and_rescue_of_older_halves() {
    let (x, y, z) = (nothing(), nothing(), nothing());
    let s = stack();
    let p0 = s.push(job(&x), no_room);
    let p1 = s.push(job(&y), no_room);
    let mut promoted = None;
    assert!(s.promote_oldest(|j| promoted = Some(j.id())));
    assert_eq!(promoted, Some(x.id()), "the oldest goes first");
    // SAFETY: `x` was handed out, which wrote its latch, on this thread.
    let latch = unsafe { x.latch.core_latch() };
    assert!(
        !latch.probe(),
        "a half handed out has its latch written, unset"
    );
    assert_eq!(
        s.rescue(|| false).map(|j| j.id()),
        None,
        "the deque is not empty"
    );
    assert_eq!(s.rescue(|| true).map(|j| j.id()), Some(y.id()));
    let p2 = s.push(job(&z), no_room);
    assert_eq!(s.pop(p2, CheckedLight), Popped::Private);
    assert_eq!(s.pop(p1, CheckedLight), Popped::Taken);
    assert_eq!(s.pop(p0, CheckedLight), Popped::Taken);
    assert!(!s.has_private_halves());
    assert!(s.rescue(|| true).is_none());
    assert!(!s.promote_oldest(|_| unreachable!()));
}

/// The skipped polls must not hide a parked worker when no awake one is left to wake it:
/// it would never hear of the half (docs/join.md, "Skipped polls"). Either rule.
#[test]
fn a_poll_never_skips_while_every_idle_worker_is_parked() {
    for exact_for_poll in [false, true] {
        let s = stack();
        s.skip_polls();
        s.owner().sleep.count_a_sleeper();
        assert!(
            s.poll(exact_for_poll),
            "every idle worker parked, and the poll skipped (exact pair: {exact_for_poll})"
        );
    }
}

/// With the exact pair a searcher beside a parked worker is enough (it wakes the parked
/// one if it leaves the half behind); with the fence pair it is not.
#[test]
fn a_poll_beside_a_parked_worker_skips_only_with_the_exact_pair() {
    let s = stack();
    s.owner().sleep.count_a_sleeper();
    let _searching = s.owner().sleep.start_looking(0);
    s.skip_polls();
    assert!(s.poll(false), "the fence pair skipped a parked worker");
    assert!(
        !s.poll(true),
        "the exact pair did not skip with a searcher awake"
    );
}

#[test]
fn a_poll_that_skips_answers_no_for_the_skipped_polls_only() {
    let s = stack();
    assert!(!s.poll(true), "no worker is idle");
    // A worker starts searching: it counts as idle until it finds work.
    let _searching = s.owner().sleep.start_looking(0);
    assert!(s.poll(true), "an idle worker and nothing skipped");
    s.skip_polls();
    let answers: Vec<bool> = (0..=POLLS_SKIPPED).map(|_| s.poll(true)).collect();
    assert!(answers[..POLLS_SKIPPED as usize].iter().all(|&due| !due));
    assert!(
        answers[POLLS_SKIPPED as usize],
        "due again after the skipped ones"
    );
}

fn no_room() -> bool {
    unreachable!("the stack is not full")
}

#[test]
fn slots_wrap_and_one_stays_free() {
    let n = nothing();
    let s = stack();
    let mut positions: Vec<usize> = (0..CAPACITY - 1)
        .map(|_| s.push(job(&n), no_room))
        .collect();
    // The next push makes room: it promotes exactly the oldest half.
    let mut promotions = 0;
    positions.push(s.push(job(&n), || {
        promotions += 1;
        s.promote_oldest(|_| {})
    }));
    assert_eq!(promotions, 1, "one promotion makes room for one push");
    assert_eq!(positions, (0..CAPACITY).collect::<Vec<_>>());
    while let Some(pos) = positions.pop() {
        let expected = if pos == 0 {
            Popped::Taken
        } else {
            Popped::Private
        };
        assert_eq!(s.pop(pos, CheckedLight), expected);
    }
    assert!(!s.has_private_halves());
}

/// The owner finds its stack full, then, before it takes the lock to promote,
/// rescuers take every half (the owner was preempted in between): `make_room` must
/// read `bottom` again and find room, not fail for want of a half to promote.
#[test]
fn make_room_survives_rescuers_emptying_the_stack_first() {
    let n = nothing();
    let s = stack();
    for _ in 0..CAPACITY - 1 {
        s.push(job(&n), no_room);
    }
    assert_eq!(s.reserve(), None, "the stack is full");
    let mut rescued = 0;
    let mut attempts = Vec::new();
    let pos = s.make_room(|| {
        if rescued == 0 {
            // The interleaving: every half rescued before this promotion.
            while s.rescue(|| true).is_some() {
                rescued += 1;
            }
        }
        let promoted = s.promote_oldest(|_| {});
        attempts.push(promoted);
        promoted
    });
    assert_eq!(rescued, CAPACITY - 1, "the rescuers emptied the stack");
    assert_eq!(attempts, [false], "one promotion tried, with nothing left");
    assert_eq!(pos, CAPACITY - 1, "the position made room for");
    assert_eq!(s.reserve(), Some(pos), "room after all");
}
