//! Loom model of `JoinHandle` (the real type, through `stealpool::__loom_handle`): the
//! job completing races with the handle being joined from outside the pool (the joiner
//! waits on the handle's condvar), dropped, or polled as a future. Checks: `join` returns
//! the value (a lost notification is a loom deadlock), `is_finished() == true` means
//! `join` does not wait, a value nobody joins is dropped exactly once, and a poll either
//! returns the value or leaves a waker that the completion wakes.
//!
//! Run with `RUSTFLAGS="--cfg loom --cfg stealpool_fences" cargo test --release --features loom --test
//! loom_handle` (as `.ci/run` does).
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use std::future::Future;
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

/// A waker that notes it was woken.
struct Flag(AtomicUsize);

impl std::task::Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The handle polled as a future, twice with two wakers (the second replaces the first,
/// the waker cloned and the old one dropped outside the handle's lock), racing the job's
/// completion: each poll returns the value, or the waker it left is woken once the job
/// completes. A poll that registered its waker after the completion had looked for one,
/// without looking for the result again, is a lost wake-up.
#[test]
fn a_polled_handle_is_ready_or_its_last_waker_is_woken() {
    loom::model(|| {
        let (mut handle, completion) = handle::<usize>();
        let job = thread::spawn(move || completion.complete(7));
        let mut last_woken = None;
        let mut value = None;
        for _ in 0..2 {
            let flag = std::sync::Arc::new(Flag(AtomicUsize::new(0)));
            let waker = std::task::Waker::from(std::sync::Arc::clone(&flag));
            let mut cx = std::task::Context::from_waker(&waker);
            match std::pin::Pin::new(&mut handle).poll(&mut cx) {
                std::task::Poll::Ready(result) => {
                    value = Some(result.unwrap());
                    break;
                }
                std::task::Poll::Pending => last_woken = Some(flag),
            }
        }
        job.join().unwrap();
        match value {
            Some(value) => assert_eq!(value, 7),
            None => {
                let flag = last_woken.expect("a pending poll left its waker");
                assert_eq!(flag.0.load(Ordering::SeqCst), 1, "the last waker was woken");
            }
        }
    });
}
