//! Loom model of a pool's life (the real terminate count, through
//! `stealpool::__loom_lifecycle`): `wait_idle` racing with jobs that finish and spawn,
//! and termination (the handle dropped) racing with a last `spawn` from a running job.
//! Checks: `wait_idle` returns (a lost notification is a loom deadlock) and only after
//! every job, with their writes visible (loom reports a data race otherwise); a running
//! job's `spawn` always succeeds; the pool terminates exactly once, after every job.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --features loom --test
//! loom_lifecycle` (as `.ci/run` does).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_lifecycle::ModelTerminateCount;

struct Cell(UnsafeCell<usize>);
// SAFETY: written by one job, read by the waiter after `wait_idle`; loom checks it.
unsafe impl Sync for Cell {}

impl Cell {
    fn new() -> Arc<Self> {
        Arc::new(Cell(UnsafeCell::new(0)))
    }
    fn write(&self) {
        // SAFETY: one writer (loom checks it).
        self.0.with_mut(|c| unsafe { *c = 1 });
    }
    fn read(&self) -> usize {
        // SAFETY: read after `wait_idle` (loom reports a race if that is not ordered).
        self.0.with(|c| unsafe { *c })
    }
}

#[test]
fn wait_idle_returns_after_every_job() {
    loom::model(|| {
        let count = Arc::new(ModelTerminateCount::new(1)); // the handle
        let cells = [Cell::new(), Cell::new()];
        let jobs: Vec<_> = cells
            .iter()
            .map(|cell| {
                assert!(count.acquire(1), "a spawn while the handle is held");
                let (count, cell) = (Arc::clone(&count), Arc::clone(cell));
                thread::spawn(move || {
                    cell.write();
                    assert!(!count.release(), "the handle still holds the pool");
                })
            })
            .collect();
        count.wait_idle();
        for cell in &cells {
            assert_eq!(cell.read(), 1, "wait_idle returned before a job finished");
        }
        for job in jobs {
            job.join().unwrap();
        }
    });
}

#[test]
fn wait_idle_waits_for_what_jobs_spawn() {
    loom::model(|| {
        let count = Arc::new(ModelTerminateCount::new(1));
        let nested_cell = Cell::new();
        assert!(count.acquire(1));
        let job = {
            let (count, nested_cell) = (Arc::clone(&count), Arc::clone(&nested_cell));
            thread::spawn(move || {
                // The job spawns a job before it finishes.
                assert!(count.acquire(1));
                let nested = {
                    let count = Arc::clone(&count);
                    thread::spawn(move || {
                        nested_cell.write();
                        count.release();
                    })
                };
                count.release();
                nested.join().unwrap();
            })
        };
        count.wait_idle();
        assert_eq!(
            nested_cell.read(),
            1,
            "wait_idle returned before the nested job"
        );
        job.join().unwrap();
    });
}

#[test]
fn termination_races_with_a_last_spawn_from_a_running_job() {
    loom::model(|| {
        let count = Arc::new(ModelTerminateCount::new(2)); // the handle and job J
        let terminated = Arc::new(AtomicUsize::new(0));
        let release = |count: &ModelTerminateCount, terminated: &AtomicUsize| {
            if count.release() {
                terminated.fetch_add(1, Ordering::SeqCst);
            }
        };
        // The handle is dropped while J runs.
        let handle = {
            let (count, terminated) = (Arc::clone(&count), Arc::clone(&terminated));
            thread::spawn(move || release(&count, &terminated))
        };
        // J spawns one last job, then finishes.
        let job = {
            let (count, terminated) = (Arc::clone(&count), Arc::clone(&terminated));
            thread::spawn(move || {
                assert!(count.acquire(1), "a running job's spawn must succeed");
                let last = {
                    let (count, terminated) = (Arc::clone(&count), Arc::clone(&terminated));
                    thread::spawn(move || release(&count, &terminated))
                };
                release(&count, &terminated);
                last.join().unwrap();
            })
        };
        handle.join().unwrap();
        job.join().unwrap();
        assert_eq!(
            terminated.load(Ordering::SeqCst),
            1,
            "terminated exactly once"
        );
        assert!(!count.acquire(1), "no spawn after termination");
    });
}
