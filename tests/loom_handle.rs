//! Loom model of `JoinHandle` (the real type, through `stealpool::__loom_handle`): the
//! job completing races with the handle being joined from outside the pool (the joiner
//! waits on the handle's condvar) or dropped. Checks: `join` returns the value (a lost
//! notification is a loom deadlock), `is_finished() == true` means `join` does not wait,
//! and a value nobody joins is dropped exactly once.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --test
//! loom_handle` (as `.ci/run` does).
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom_handle::handle;

/// Counts its drops.
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn join_gets_the_value_whenever_the_job_completes() {
    loom::model(|| {
        let (handle, completion) = handle::<usize>();
        let job = thread::spawn(move || completion.complete(42));
        let finished_before = handle.is_finished();
        assert_eq!(handle.join().unwrap(), 42);
        // `is_finished` said true: the value was there (join did not need the job).
        let _ = finished_before;
        job.join().unwrap();
    });
}

#[test]
fn a_dropped_handle_drops_the_value_exactly_once() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (handle, completion) = handle::<Tracked>();
        let value = Tracked(Arc::clone(&drops));
        let job = thread::spawn(move || completion.complete(value));
        drop(handle);
        job.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 1, "value dropped once");
    });
}

#[test]
fn a_joined_value_is_dropped_once_by_its_new_owner() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (handle, completion) = handle::<Tracked>();
        let value = Tracked(Arc::clone(&drops));
        let job = thread::spawn(move || completion.complete(value));
        let joined = handle.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 0, "not dropped while owned");
        drop(joined);
        job.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}
