//! Loom model of scope completion: the scope's `CountLatch` (the real type, through
//! `stealpool::__loom_scope`) counted down by jobs on other threads, singly or in a
//! worker's deferred batch (`src/pool/worker/deferred.rs`), while the owner waits on its
//! `ParkLatch` (an outside thread's `in_place_scope`). Each model checks that the owner
//! returns (a lost unpark is a loom deadlock) and only after every job: every job writes a
//! loom `UnsafeCell` before it counts down, and the owner reads them all after the wait,
//! so a missing happens-before edge is reported as a data race.
//!
//! The owner does not join the jobs' threads (a model ends when all its threads have):
//! a setter may unpark the owner after the owner already saw the latch set, and loom's
//! `join` is built on the same park token, which it does not expect to find taken.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --features loom --test
//! loom_scope` (as `.ci/run` does).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_scope::ModelCountLatch;

/// Job results: one cell per job, written by the job, read by the owner after the wait.
struct Results(Vec<UnsafeCell<usize>>);

// SAFETY: each cell is written by one job, then read by the owner after the latch says
// every job finished; loom checks exactly that ordering.
unsafe impl Sync for Results {}

impl Results {
    fn new(n: usize) -> Arc<Self> {
        Arc::new(Results((0..n).map(|_| UnsafeCell::new(0)).collect()))
    }
    fn write(&self, i: usize) {
        // SAFETY: job `i` is the only writer of cell `i` (loom checks it).
        self.0[i].with_mut(|cell| unsafe { *cell = i + 1 });
    }
    fn check_all(&self) {
        for (i, cell) in self.0.iter().enumerate() {
            // SAFETY: read after the wait (loom reports a race if that is not ordered).
            let value = cell.with(|cell| unsafe { *cell });
            assert_eq!(value, i + 1, "the scope returned before job {i} finished");
        }
    }
}

#[test]
fn a_scope_returns_only_after_every_job() {
    loom::model(|| {
        let results = Results::new(2);
        let latch = Arc::new(ModelCountLatch::new(3)); // the body and two jobs
        for i in 0..2 {
            {
                let (results, latch) = (Arc::clone(&results), Arc::clone(&latch));
                thread::spawn(move || {
                    results.write(i);
                    // SAFETY: this job's own count.
                    unsafe { latch.count_down(1) };
                });
            }
        }
        // SAFETY: the body's count.
        unsafe { latch.count_down(1) };
        latch.wait();
        results.check_all();
    });
}

#[test]
fn a_worker_s_deferred_batch_counts_like_single_count_downs() {
    loom::model(|| {
        let results = Results::new(3);
        let latch = Arc::new(ModelCountLatch::new(4)); // the body and three jobs
                                                       // A worker that ran jobs 0 and 1 in a row and delivers both counts at once.
        {
            let (results, latch) = (Arc::clone(&results), Arc::clone(&latch));
            thread::spawn(move || {
                results.write(0);
                results.write(1);
                // SAFETY: the two jobs' counts, deferred.
                unsafe { latch.count_down(2) };
            });
        }
        // Another worker runs job 2 alone.
        {
            let (results, latch) = (Arc::clone(&results), Arc::clone(&latch));
            thread::spawn(move || {
                results.write(2);
                // SAFETY: job 2's count.
                unsafe { latch.count_down(1) };
            });
        }
        // SAFETY: the body's count.
        unsafe { latch.count_down(1) };
        latch.wait();
        results.check_all();
    });
}

#[test]
fn a_job_that_spawns_a_job_is_waited_for() {
    loom::model(|| {
        let results = Results::new(2);
        let latch = Arc::new(ModelCountLatch::new(2)); // the body and job 0
        {
            let (results, latch) = (Arc::clone(&results), Arc::clone(&latch));
            thread::spawn(move || {
                // Job 0 spawns job 1 (counted before job 0 counts itself down).
                latch.increment();
                let nested = {
                    let (results, latch) = (Arc::clone(&results), Arc::clone(&latch));
                    thread::spawn(move || {
                        results.write(1);
                        // SAFETY: job 1's count.
                        unsafe { latch.count_down(1) };
                    })
                };
                results.write(0);
                // SAFETY: job 0's count.
                unsafe { latch.count_down(1) };
                nested.join().unwrap();
            });
        }
        // SAFETY: the body's count.
        unsafe { latch.count_down(1) };
        latch.wait();
        results.check_all();
    });
}
