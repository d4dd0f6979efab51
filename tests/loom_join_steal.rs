//! Model checking of a whole `join` frame (`join::join_on`, the code `join_context` runs)
//! whose second half may be promoted to the deque, stolen from it, rescued from the
//! private stack, or taken back by its owner, with [loom](https://docs.rs/loom). The
//! pool (`stealpool::__loom_join_steal::ModelPool`) has two workers on loom threads: the
//! owner calls `join`, the thief runs the scheduling loop until the owner stops it. The
//! deques are `sync/deque/model.rs` (crossbeam-deque's API over a loom mutex).
//!
//! Each model checks, in every interleaving loom explores: the second half runs exactly
//! once; `join` returns both results, and the second half's writes are visible to the
//! caller when `join` returns (the latch's Acquire/Release); nobody waits forever (loom
//! fails a model whose threads all block). Across all interleavings, each model also
//! checks that the paths it is about were taken at least once (not a vacuous model).
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg stealpool_fences" \
//!     cargo test --release --features loom --target-dir target/loom --test loom_join_steal
//! ```
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use stealpool::__loom_join_steal::ModelPool;

/// Counts, across the interleavings of one model, how often a path was seen.
#[derive(Default)]
struct Seen {
    migrated: StdAtomicUsize,
    inline: StdAtomicUsize,
    promoted: StdAtomicUsize,
    rescued: StdAtomicUsize,
}

impl Seen {
    fn record(&self, pool: &ModelPool, migrated: bool) {
        let bump = |c: &StdAtomicUsize| c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bump(if migrated {
            &self.migrated
        } else {
            &self.inline
        });
        let (promotions, rescues) = pool.promotions_and_rescues();
        if promotions > 0 {
            bump(&self.promoted);
        }
        if rescues > 0 {
            bump(&self.rescued);
        }
    }

    fn get(c: &StdAtomicUsize) -> usize {
        c.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A second half and what it leaves behind: how often it ran, and its Relaxed write
/// (only the latch can make that visible to the owner): 1 if run inline, 2 if migrated.
struct Half {
    runs: Arc<AtomicUsize>,
    witness: Arc<AtomicUsize>,
}

impl Half {
    fn new() -> Half {
        Half {
            runs: Arc::new(AtomicUsize::new(0)),
            witness: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The closure to pass to `join`: returns 2 and whether it was migrated.
    fn closure(&self) -> impl FnOnce(stealpool::FnContext) -> (u32, bool) + Send {
        let (runs, witness) = (self.runs.clone(), self.witness.clone());
        move |ctx| {
            runs.fetch_add(1, Ordering::Relaxed);
            witness.store(1 + usize::from(ctx.migrated()), Ordering::Relaxed);
            (2, ctx.migrated())
        }
    }

    /// What the owner sees of the half's write (0: nothing).
    fn written(&self) -> usize {
        self.witness.load(Ordering::Relaxed)
    }

    fn assert_ran_once(&self, which: &str) {
        assert_eq!(
            self.runs.load(Ordering::Relaxed),
            1,
            "{which} ran exactly once"
        );
    }
}

/// Runs `owner` on the owner's thread while the thief runs its loop; stops the thief and
/// joins it after `owner` returned.
fn with_thief<R>(pool: &Arc<ModelPool>, owner: impl FnOnce() -> R) -> R {
    let thief = {
        let pool = pool.clone();
        thread::spawn(move || pool.run_thief())
    };
    let result = owner();
    pool.stop_thief();
    thief.join().unwrap();
    result
}

/// Runs `case` in every interleaving loom explores, each on a fresh pool that promotes on
/// every `join` (`always_promote`) or by the real rule; `case` returns whether the half
/// it watches was migrated. Returns what was seen across the interleavings.
fn explore(
    always_promote: bool,
    case: impl Fn(&Arc<ModelPool>) -> bool + Send + Sync + 'static,
) -> std::sync::Arc<Seen> {
    let seen = std::sync::Arc::new(Seen::default());
    let seen_in_model = seen.clone();
    loom::model(move || {
        let pool = Arc::new(ModelPool::new(always_promote));
        let migrated = case(&pool);
        seen_in_model.record(&pool, migrated);
    });
    seen
}

/// One `join` on the owner while the thief runs: `b` runs once, `join` returns both
/// results and sees `b`'s write.
fn one_join_with_a_thief(always_promote: bool) -> std::sync::Arc<Seen> {
    explore(always_promote, |pool| {
        let b = Half::new();
        let (a, (b_value, migrated)) = with_thief(pool, || {
            let result = pool.join(|_| 1, b.closure());
            assert_ne!(b.written(), 0, "b's write seen by join");
            result
        });
        assert_eq!((a, b_value), (1, 2));
        b.assert_ran_once("b");
        migrated
    })
}

/// The owner promotes `b` at its `join`; the thief steals it before or after the owner
/// looks for it, or never. Exactly one of them runs it, and `join` returns only once it
/// ran.
#[test]
fn a_promoted_half_is_run_once_by_its_owner_or_the_thief() {
    let seen = one_join_with_a_thief(true);
    assert!(
        Seen::get(&seen.migrated) > 0,
        "some interleaving has b stolen"
    );
    assert!(
        Seen::get(&seen.inline) > 0,
        "some interleaving takes b back"
    );
}

/// The real promotion rule: the owner promotes only if its poll sees the thief idle;
/// otherwise the thief, finding nothing, may rescue `b` from the private stack while the
/// owner pops it. Promotion, rescue, steal and the owner's pop race in every order.
#[test]
fn promotion_rescue_and_the_owners_pop_run_a_half_once() {
    let seen = one_join_with_a_thief(false);
    assert!(
        Seen::get(&seen.promoted) > 0,
        "some interleaving promotes b"
    );
    assert!(Seen::get(&seen.rescued) > 0, "some interleaving rescues b");
    assert!(
        Seen::get(&seen.inline) > 0,
        "some interleaving takes b back"
    );
}

/// `a` panics while `b` may be on the thief: `join` re-raises `a`'s panic only after `b`
/// finished (its frame holds `b`), and `b` runs exactly once.
#[test]
fn a_panicking_first_half_waits_for_a_stolen_second_half() {
    let seen = explore(true, |pool| {
        let b = Half::new();
        let caught = with_thief(pool, || {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.join(
                    |_| std::panic::resume_unwind(Box::new("a panics")),
                    b.closure(),
                )
            }));
            assert_ne!(b.written(), 0, "b finished before unwinding");
            caught
        });
        let payload = caught.expect_err("a's panic is re-raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a panics"));
        b.assert_ran_once("b");
        b.written() == 2
    });
    assert!(
        Seen::get(&seen.migrated) > 0,
        "some interleaving has b stolen"
    );
    assert!(
        Seen::get(&seen.inline) > 0,
        "some interleaving takes b back"
    );
}

/// Two nested `join`s: the outer `b` is promoted (oldest first) and may be stolen while
/// the owner runs the inner `join`, whose `b` the owner keeps or also promotes. Each half
/// runs once, and the outer `join` returns every result.
#[test]
fn nested_halves_are_each_run_once() {
    let seen = explore(true, |pool| {
        let (outer, inner) = (Half::new(), Half::new());
        let ((a, (inner_b, _)), (b, migrated)) = with_thief(pool, || {
            pool.join(|_| pool.join(|_| 1, inner.closure()), outer.closure())
        });
        assert_eq!((a, inner_b, b), (1, 2, 2));
        outer.assert_ran_once("outer b");
        inner.assert_ran_once("inner b");
        assert_ne!(outer.written(), 0);
        assert_ne!(inner.written(), 0);
        migrated
    });
    assert!(
        Seen::get(&seen.migrated) > 0,
        "some interleaving steals the outer b"
    );
}
