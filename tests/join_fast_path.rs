//! The `join` fast path around its private stack's capacity (63 private halves per
//! worker, `docs/join.md`, "The private stack"): every second half runs once and every
//! value is dropped once whether the half stayed private, was promoted to make room, was
//! stolen or rescued (with more than one worker, each run has a half another worker took,
//! forced and counted); a first half that waits for its own second half completes at every
//! depth; a panic at any depth reaches the caller after both halves; and a `join` past
//! the capacity needs no more stack than one below it (a version that built a second
//! frame there overflowed deep recursions that fit on rayon-core). Kept from a breaker's
//! run against the rewritten fast path.

mod common;

use common::panics::ExpectedPayload;
use common::{quiet_expected_panics, watchdog};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use stealpool::{ThreadPool, ThreadPoolBuilder};

const WATCHDOG: u64 = 60;
/// Depths on both sides of the capacity, of twice it, and far past it.
const DEPTHS: [usize; 12] = [0, 1, 62, 63, 64, 65, 66, 126, 127, 128, 129, 1000];

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(64 << 20)
        .build()
        .unwrap()
}

/// A value whose drops are counted: each one made must be dropped exactly once.
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `depth` nested `join`s whose second halves capture and return a `Tracked` value and
/// count their runs; returns the number of second halves that ran. With `steal_at_bottom`
/// the innermost first half waits until its own second half ran, which only another
/// worker can do: every install then has a half taken from the private stack.
fn nest(
    depth: usize,
    runs: &AtomicUsize,
    drops: &Arc<AtomicUsize>,
    steal_at_bottom: bool,
) -> usize {
    if depth == 0 {
        if steal_at_bottom {
            wait_for_own_second_half();
        }
        return 0;
    }
    let captured = Tracked(Arc::clone(drops));
    let (inner, tracked) = stealpool::join(
        || nest(depth - 1, runs, drops, steal_at_bottom),
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
            captured
        },
    );
    drop(tracked);
    inner + 1
}

/// A `join` whose first half waits until its own second half ran.
fn wait_for_own_second_half() {
    let (tx, rx) = mpsc::channel();
    let (got, ()) = stealpool::join(
        move || rx.recv_timeout(Duration::from_secs(20)),
        move || tx.send(()).unwrap(),
    );
    got.expect("the second half never ran while its first half waited");
}

/// Halves taken from a worker's private stack by another worker so far: stolen after a
/// promotion, or rescued.
fn taken(pool: &ThreadPool) -> u64 {
    let total = pool.metrics().total();
    total.steals + total.rescues
}

#[test]
fn every_half_runs_once_and_every_value_drops_once_around_the_capacity() {
    watchdog(WATCHDOG, || {
        for threads in [1, 2, 8] {
            let pool = pool(threads);
            for depth in DEPTHS {
                let runs = AtomicUsize::new(0);
                let drops = Arc::new(AtomicUsize::new(0));
                let before = taken(&pool);
                let steal = threads > 1;
                assert_eq!(pool.install(|| nest(depth, &runs, &drops, steal)), depth);
                assert_eq!(runs.load(Ordering::SeqCst), depth, "{threads} workers");
                assert_eq!(drops.load(Ordering::SeqCst), depth, "{threads} workers");
                if steal {
                    assert!(taken(&pool) > before, "{threads} workers, depth {depth}");
                }
            }
            // Past the capacity each push promoted the oldest half to make room.
            if threads == 1 {
                assert!(pool.metrics().total().promotions >= 1000 - 63);
            }
        }
    });
}

/// `depth` nested `join`s, then a `join` whose first half waits until its own second half
/// ran: another worker must take the second half (a promotion and a steal, or a rescue),
/// whatever the depth.
fn nest_then_wait(depth: usize) {
    if depth == 0 {
        return wait_for_own_second_half();
    }
    stealpool::join(|| nest_then_wait(depth - 1), || ());
}

#[test]
fn a_first_half_waiting_for_its_second_half_completes_at_every_depth() {
    watchdog(WATCHDOG, || {
        // Two workers: the other one is either searching or parked. More: some search
        // while others are parked, the case where a poll may leave the half to a searcher
        // (docs/join.md, "Skipped polls").
        for threads in [2, 3, 8] {
            let pool = pool(threads);
            for depth in DEPTHS.into_iter().chain(2..62) {
                let before = taken(&pool);
                pool.install(|| nest_then_wait(depth));
                assert!(taken(&pool) > before, "{threads} workers, depth {depth}");
            }
        }
    });
}

/// `depth` nested `join`s around one whose first half panics; every second half's result
/// is a `Tracked` value.
fn nest_then_panic(depth: usize, runs: &AtomicUsize, drops: &Arc<AtomicUsize>) {
    let captured = Tracked(Arc::clone(drops));
    let second = move || {
        runs.fetch_add(1, Ordering::SeqCst);
        captured
    };
    if depth == 0 {
        stealpool::join(|| panic::panic_any(ExpectedPayload(19)), second);
        unreachable!("the first half panicked");
    }
    stealpool::join(|| nest_then_panic(depth - 1, runs, drops), second);
}

#[test]
fn a_panic_at_any_depth_reaches_the_caller_after_both_halves() {
    quiet_expected_panics();
    watchdog(WATCHDOG, || {
        for threads in [1, 2] {
            let pool = pool(threads);
            for depth in DEPTHS {
                let runs = AtomicUsize::new(0);
                let drops = Arc::new(AtomicUsize::new(0));
                let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                    pool.install(|| nest_then_panic(depth, &runs, &drops))
                }));
                let payload = caught.expect_err("the panic reaches install's caller");
                assert!(payload.downcast_ref::<ExpectedPayload>().is_some());
                // Every second half ran once (they do not panic) and each value, the
                // results thrown away on the way up, was dropped once.
                assert_eq!(runs.load(Ordering::SeqCst), depth + 1, "depth {depth}");
                assert_eq!(drops.load(Ordering::SeqCst), depth + 1, "depth {depth}");
            }
        }
    });
}

/// The stack address of a local at the bottom of `depth` nested `join`s whose halves
/// capture `BIG` bytes each.
fn bottom_address<const BIG: usize>(depth: usize, buf: [u8; BIG]) -> usize {
    if depth == 0 {
        let here = 0u8;
        return std::hint::black_box(&here) as *const u8 as usize + buf[0] as usize;
    }
    let other = std::hint::black_box([1u8; BIG]);
    let (address, _) = stealpool::join(
        move || bottom_address::<BIG>(depth - 1, std::hint::black_box(buf)),
        move || other[depth % BIG],
    );
    address
}

/// A `join` past the capacity (every push then makes room first) must use no more stack
/// than one below it: recursion that fits rayon-core's stack must fit ours.
#[test]
fn a_join_past_the_capacity_needs_no_more_stack_than_one_below_it() {
    watchdog(WATCHDOG, || {
        let pool = pool(1);
        let per_level = |from: usize, to: usize| {
            let [a, b] = [from, to].map(|d| pool.install(|| bottom_address::<4096>(d, [0; 4096])));
            // The stack grows down: deeper means a lower address.
            (a as isize - b as isize) / (to - from) as isize
        };
        // A worker's first `join`s may take the checked path (its barrier mode not
        // settled yet, docs/join.md, "The fast path"), whose frames differ from the fast
        // path's: measure until two rounds agree, so that both depths ran the same path.
        let measure = || (per_level(10, 60), per_level(100, 150));
        let mut last = measure();
        for _ in 0..100 {
            let now = measure();
            if now == last {
                break;
            }
            last = now;
        }
        let (below, past) = last;
        assert!(below > 0, "{below} bytes per level below the capacity");
        assert!(
            past <= below + below / 20,
            "{past} bytes per level past the capacity, {below} below it"
        );
    });
}
