//! Model checking of the isolated park (`docs/isolation.md`, "Waking a region's
//! waiters") with [loom](https://docs.rs/loom): a worker waiting inside an isolation
//! region parks outside the sleep counters, and is woken by a push to its region or by
//! its latch, while a searcher's wake-up passes it by. A lost wake-up shows up as a
//! deadlock, which loom reports as a failure.
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg stealpool_fences" \
//!     cargo test --release --features loom --target-dir target/loom --test loom_isolate
//! ```
#![cfg(loom)]

use loom::sync::atomic::{fence, AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom::{ModelLatch, ModelSleep};
use stealpool::__loom_isolate::{ModelRegion, RESCUED};

/// Worker `index` waits inside `region` on a thread of its own until `latch` is set or it
/// took a job of the region; the handle returns the job it took.
fn spawn_waiter(
    sleep: &Arc<ModelSleep>,
    region: &Arc<ModelRegion>,
    index: usize,
    latch: &Arc<ModelLatch>,
) -> thread::JoinHandle<Option<usize>> {
    let (sleep, region, latch) = (sleep.clone(), region.clone(), latch.clone());
    thread::spawn(move || region.wait(&sleep, index, &latch))
}

/// A worker waits inside a region while another worker of the region hands out a job:
/// the waiter takes it.
#[test]
fn a_push_to_its_region_is_never_missed_by_an_isolated_waiter() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let region = Arc::new(ModelRegion::new(&sleep));
        let latch = Arc::new(ModelLatch::new());
        let waiter = spawn_waiter(&sleep, &region, 0, &latch);
        region.push(7);
        assert_eq!(waiter.join().unwrap(), Some(7));
    });
}

/// A worker waits inside a region while another worker makes a region nested in it and
/// hands out a job there: the waiter takes it. The push wakes the waiters of the enclosing
/// regions only when a waiter of the pool is registered as parked
/// (`Sleep::has_isolated_parked`); the region's mutex orders that count against the
/// waiter's look, also when the nested region is made after the look.
#[test]
fn a_push_to_a_region_nested_after_the_look_wakes_the_outer_waiter() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let outer = Arc::new(ModelRegion::new(&sleep));
        let latch = Arc::new(ModelLatch::new());
        let waiter = spawn_waiter(&sleep, &outer, 0, &latch);
        // Kept alive until the job was taken, as the stub the hand-out pushes keeps it.
        let inner = outer.nested(&sleep);
        inner.push(7);
        assert_eq!(waiter.join().unwrap(), Some(7));
        drop(inner);
    });
}

/// The latch an isolated waiter waits on is set (its stolen half finished): the setter
/// wakes it, as it wakes a parked searcher.
#[test]
fn its_latch_wakes_an_isolated_waiter() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(1));
        let region = Arc::new(ModelRegion::new(&sleep));
        let latch = Arc::new(ModelLatch::new());
        let waiter = spawn_waiter(&sleep, &region, 0, &latch);
        sleep.set_latch(&latch, 0);
        assert_eq!(waiter.join().unwrap(), None);
    });
}

/// Worker 0 waits inside a region, worker 1 searches; a job is pushed to the pool, and
/// then worker 0's latch is set. The searcher takes the job and the waiter is released.
/// (A waker that spent the searcher's wake-up on the isolated waiter is not caught here:
/// in the fence build this model checks, a searcher that parks while a worker counts as
/// running rechecks after a timed park, `Park::FenceOnly`. `tests/isolate.rs` catches it
/// in the membarrier build, `an_isolated_waiter_does_not_take_a_searchers_wake_up`.)
#[test]
fn a_searchers_wake_up_passes_an_isolated_waiter_by() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let region = Arc::new(ModelRegion::new(&sleep));
        let job = Arc::new(AtomicBool::new(false));
        let waiter_latch = Arc::new(ModelLatch::new());
        let waiter = spawn_waiter(&sleep, &region, 0, &waiter_latch);
        let searcher = {
            let (sleep, job) = (sleep.clone(), job.clone());
            thread::spawn(move || sleep.search_until(1, &job, &ModelLatch::new()))
        };
        job.store(true, Ordering::Release);
        sleep.new_jobs(1, true);
        assert!(
            searcher.join().unwrap(),
            "the searcher returned without the job"
        );
        sleep.set_latch(&waiter_latch, 0);
        assert_eq!(waiter.join().unwrap(), None);
    });
}

/// The lazy `join` in a region (`docs/isolation.md`, "Why the poll must see R's
/// waiters"): the owner, a worker of the region, keeps a half private and promotes it to
/// the region's queue only if its poll sees an idle worker; it then never comes back (its
/// first half blocks on the second). The region's waiter must still get the half: its
/// isolated park counts it in the sleep counters, so the poll promotes the half (and the
/// push wakes it), or its last look, after the heavy barrier, sees the half and it rescues
/// it. Mutant I9 (the isolated park not counted) deadlocks here.
#[test]
fn a_private_half_of_its_region_is_never_hidden_from_an_isolated_waiter() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let region = Arc::new(ModelRegion::new(&sleep));
        let latch = Arc::new(ModelLatch::new());
        let private = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (sleep, region, latch, private) = (
                sleep.clone(),
                region.clone(),
                latch.clone(),
                private.clone(),
            );
            thread::spawn(move || region.wait_or_rescue(&sleep, 0, &latch, &private))
        };
        // The owner (worker 1, in the region): private push, poll, maybe promote. The
        // fence stands for the waiter's process-wide heavy barrier (membarrier), which
        // runs a full barrier on the owner's CPU (`docs/join.md`, "The poll without a
        // fence", case 1). The fence-only case rests on the waiter's recheck a
        // millisecond later, which loom cannot time out (its `wait_timeout` waits).
        private.store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        if sleep.idle_workers_after_private_push()
            && private
                .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            region.push(7);
        }
        let took = waiter.join().unwrap();
        assert!(took == Some(7) || took == Some(RESCUED), "{took:?}");
    });
}
