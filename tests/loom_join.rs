//! Model checking of the lazy `join`'s private stack (`src/pool/private_stack/mod.rs`) with
//! [loom](https://docs.rs/loom): the owner pushes and pops second halves with plain stores
//! and a light barrier while another worker *rescues* the oldest half (THE protocol,
//! `docs/join.md`, "Rescue"). Every half must end up with exactly one runner: the owner
//! (its pop says `"private"`), the rescuer, or the deque (promoted).
//!
//! As for `loom_sleep`, loom cannot see `membarrier(2)`: the model checks the fence
//! variant of the barrier pair (`--cfg stealpool_fences`).
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg stealpool_fences" \
//!     cargo test --release --features loom --target-dir target/loom --test loom_join
//! ```
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_join::ModelPending;

/// Who ran each of `n` halves (tokens `1..=n`), from the owner's pops, the owner's
/// promotions and the rescuer's takes. Panics if a half has no runner or two.
fn check_each_half_once(n: usize, owner: &[(usize, &str)], promoted: &[usize], rescued: &[usize]) {
    for token in 1..=n {
        let popped = owner
            .iter()
            .find(|(t, _)| *t == token)
            .map(|(_, how)| *how)
            .expect("every half is popped by its join");
        let by_owner = usize::from(popped == "private");
        let by_deque = promoted.iter().filter(|&&t| t == token).count();
        let by_rescuer = rescued.iter().filter(|&&t| t == token).count();
        assert_eq!(
            by_owner + by_deque + by_rescuer,
            1,
            "half {token}: popped {popped:?}, promoted {by_deque}, rescued {by_rescuer}"
        );
        // The owner's pop must say whether someone else took it.
        assert_eq!(
            popped == "taken",
            by_deque + by_rescuer == 1,
            "half {token}"
        );
    }
}

/// Another worker trying one rescue on `stack`; the returned closure joins it and gives
/// the tokens it took (none or one).
fn spawn_rescuer(stack: &Arc<ModelPending>) -> impl FnOnce() -> Vec<usize> {
    let stack = stack.clone();
    let handle = thread::spawn(move || stack.rescue());
    move || handle.join().unwrap().into_iter().collect()
}

/// One half, popped by its owner while a rescuer tries to take it: exactly one of them
/// runs it. (Without the barrier pair both could: the owner's load of `bottom` passing
/// its store of `top`.)
#[test]
fn a_half_is_run_once_when_owner_and_rescuer_race() {
    loom::model(|| {
        let stack = Arc::new(ModelPending::default());
        let pos = stack.push(1);
        let rescuer = spawn_rescuer(&stack);
        let popped = stack.pop(pos);
        let rescued = rescuer();
        check_each_half_once(1, &[(1, popped)], &[], &rescued);
    });
}

/// Two nested halves: the rescuer may take the outer one while the owner pops the inner
/// one, then the outer one; or lose both races.
#[test]
fn nested_halves_are_each_run_once() {
    loom::model(|| {
        let stack = Arc::new(ModelPending::default());
        let outer = stack.push(1);
        let inner = stack.push(2);
        let rescuer = spawn_rescuer(&stack);
        let popped_inner = stack.pop(inner);
        let popped_outer = stack.pop(outer);
        let rescued = rescuer();
        check_each_half_once(2, &[(2, popped_inner), (1, popped_outer)], &[], &rescued);
    });
}

/// The owner promotes its oldest half while a rescuer works: a promoted half is never
/// rescued too, and the owner's pops tell taken from private.
#[test]
fn promotion_and_rescue_never_take_the_same_half() {
    loom::model(|| {
        let stack = Arc::new(ModelPending::default());
        let outer = stack.push(1);
        let inner = stack.push(2);
        let rescuer = spawn_rescuer(&stack);
        let promoted: Vec<usize> = stack.promote_oldest().into_iter().collect();
        let popped_inner = stack.pop(inner);
        let popped_outer = stack.pop(outer);
        let rescued = rescuer();
        check_each_half_once(
            2,
            &[(2, popped_inner), (1, popped_outer)],
            &promoted,
            &rescued,
        );
    });
}

/// A half pushed after a rescue attempt began, and a slot reused after a pop: the
/// rescuer never takes a half that was already popped, and never a stale slot.
#[test]
fn a_reused_position_is_never_taken_stale() {
    loom::model(|| {
        let stack = Arc::new(ModelPending::default());
        let rescuer = spawn_rescuer(&stack);
        let first = stack.push(1);
        let popped_first = stack.pop(first);
        let second = stack.push(2);
        let popped_second = stack.pop(second);
        let rescued = rescuer();
        check_each_half_once(2, &[(1, popped_first), (2, popped_second)], &[], &rescued);
    });
}

/// `loom::model` for a model that fills the whole stack: a few hundred atomic
/// operations in one execution, more than loom's default bound of branches allows.
fn deep_model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    builder.check(f);
}

/// The slot a rescuer reads is never reused under it: with the stack one short of full, a
/// rescuer claims the oldest half while the owner pushes once more. The owner must make
/// room (promote) rather than write the position that shares the rescuer's slot, so the
/// rescuer gets the oldest private half and nothing is taken twice. (Without the free
/// slot the push overwrites the slot between the claim and the read.)
#[test]
fn a_push_on_a_full_stack_never_reuses_the_slot_a_rescuer_reads() {
    deep_model(|| {
        let stack = Arc::new(ModelPending::default());
        let capacity = stack.capacity();
        // Positions 0..capacity-1: the last push makes room by promoting token 1.
        for token in 1..=capacity {
            stack.push(token);
        }
        let rescuer = spawn_rescuer(&stack);
        stack.push(capacity + 1);
        let rescued = rescuer();
        let promoted = stack.promoted_to_make_room();
        // Each promotion and the rescue took the oldest half left, in order, once.
        let mut taken = promoted.clone();
        taken.extend(&rescued);
        taken.sort_unstable();
        let expected: Vec<usize> = (1..=taken.len()).collect();
        assert_eq!(
            taken, expected,
            "promoted {promoted:?}, rescued {rescued:?}"
        );
    });
}

/// A slow pop that finds its half taken lowers `bottom` (the stack is empty again); the
/// push limit must come down with it, or the next run of pushes fills more positions
/// than there are slots and a promotion reads a half that overwrote the oldest one.
#[test]
fn the_push_limit_follows_bottom_down_after_a_slow_pop() {
    deep_model(|| {
        let stack = ModelPending::default();
        let capacity = stack.capacity();
        // Ten halves promoted early raise `bottom` to 10 before the stack fills, so the
        // limit is read as 10 + capacity - 1, and positions up to 10 + capacity - 2 fit.
        let mut positions: Vec<usize> = (1..=10).map(|token| stack.push(token)).collect();
        for _ in 0..10 {
            stack.promote_oldest();
        }
        positions.extend((11..=capacity + 8).map(|token| stack.push(token)));
        assert!(stack.promoted_to_make_room().is_empty());
        // Pop everything: the newest ones are private, the ten promoted ones taken.
        while let Some(pos) = positions.pop() {
            let expected = if pos < 10 { "taken" } else { "private" };
            assert_eq!(stack.pop(pos), expected, "position {pos}");
        }
        // A fresh run of pushes, as deep as the limit allows, then the oldest promoted.
        let base = 1000;
        for token in base..base + capacity + 8 {
            stack.push(token);
        }
        let mut oldest = stack.promoted_to_make_room();
        oldest.extend(stack.promote_oldest());
        assert_eq!(oldest[0], base, "the oldest half of the new run goes first");
    });
}
