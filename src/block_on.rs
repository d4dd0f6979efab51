//! `block_on`: run a future to completion from synchronous code, without taking a worker
//! out of circulation.
//!
//! On a worker, the future's waker sets a latch of the worker's, and between polls the
//! worker waits on that latch with `wait_until`: it keeps executing the pool's jobs (the
//! very jobs the future may be waiting for) and parks through the sleep module only when
//! there are none, exactly as a `join` whose second half was stolen. The latch is reset
//! before each poll, so a wake-up that comes during a poll is not lost; the reset is a
//! swap, which synchronises with a wake-up that came just before it
//! (`CoreLatch::reset`; loom model `tests/loom_sleep.rs:
//! a_reset_latch_never_loses_a_wake_up_between_polls`). Elsewhere the
//! calling thread parks between polls, as `futures::executor::block_on` does.
//!
//! forte has the same function; rayon's (PR 679, `spawn_future`) never landed, and a
//! rayon job that blocks on a future blocks its worker.

use crate::latch::CoreLatch;
use crate::pool::worker::WorkerThread;
use crate::sleep::Sleep;
use crate::sync::checked::{thread, AtomicBool};
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Wake, Waker};

/// Runs `future` to completion on the calling thread and returns its output.
///
/// Called on a worker of a pool, the worker keeps executing that pool's jobs while the
/// future is pending (so a future that waits for pool work, such as a
/// [`JoinHandle`](crate::JoinHandle), cannot deadlock a one-thread pool), and parks when
/// there are none until the future's waker is called. Called elsewhere, the thread parks
/// between polls. Jobs run while waiting stack on top of this call, as for any wait
/// inside a pool.
///
/// # Panics
/// A panic in the future's `poll` propagates to the caller.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let value = pool.install(|| {
///     // The only worker waits for a job queued behind it: it runs that job itself.
///     let handle = stealpool::spawn_with_handle(|| 6 * 7);
///     stealpool::block_on(async { handle.await.unwrap() })
/// });
/// assert_eq!(value, 42);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => block_on_worker(worker, future.as_mut()),
        None => block_on_thread(future.as_mut()),
    })
}

/// The waker of a future driven on a worker: sets the worker's latch, waking it if it
/// parked on it. Owned by the waker (an `Arc`), since wakers may outlive `block_on`.
struct LatchWake {
    /// The latch the worker waits on between polls; reset before each poll.
    latch: CoreLatch,
    /// The sleep state of the worker's pool, to wake the worker if it parked.
    sleep: Arc<Sleep>,
    /// The worker's index in its pool.
    index: usize,
}

impl Wake for LatchWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SAFETY: the latch lives in this `Arc`, which the caller holds for the whole
        // call, and `sleep` is our own reference to the pool's sleep state.
        unsafe { self.sleep.set_latch_and_wake(&self.latch, self.index) }
    }
}

/// `block_on` on a worker: polls `future`, and between polls runs the pool's jobs (or
/// parks) until the waker sets the latch.
fn block_on_worker<T>(worker: &WorkerThread, mut future: Pin<&mut impl Future<Output = T>>) -> T {
    let wake = Arc::new(LatchWake {
        latch: CoreLatch::new(),
        sleep: Arc::clone(worker.sleep()),
        index: worker.index(),
    });
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        worker.wait_until(&wake.latch);
        wake.latch.reset();
    }
}

/// The waker of a future driven on a thread outside any pool: a flag and an unpark.
struct ThreadWake {
    /// Set by the waker, cleared by the polling thread before it polls again.
    notified: AtomicBool,
    /// The thread that polls the future, unparked by the waker.
    thread: thread::Thread,
}

impl Wake for ThreadWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release pairs with the Acquire swap in `block_on_thread`.
        self.notified.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// `block_on` outside any pool: polls `future`, and parks between polls until the waker
/// sets the flag.
fn block_on_thread<T>(mut future: Pin<&mut impl Future<Output = T>>) -> T {
    let wake = Arc::new(ThreadWake {
        notified: AtomicBool::new(false),
        thread: thread::current(),
    });
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    let mut parked = false;
    let value = loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            break value;
        }
        while !wake.notified.swap(false, Ordering::Acquire) {
            thread::park();
            // The park may have used up a token from other code on this thread, even
            // when it returned for our waker (tokens merge): hand one back at the end,
            // as `ParkLatch::wait` does.
            parked = true;
        }
    };
    if parked {
        wake.thread.unpark();
    }
    value
}
