//! `spawn_with_handle`: a spawned job whose result (or panic) can be waited for.
//!
//! rayon-core's `spawn` returns nothing (rayon-rs/rayon issues 1252, 431, 890); a handle
//! built on top of it has to poll. Here the job stores its `thread::Result` in a shared
//! slot and wakes whoever waits: a thread outside the pool blocks on a condvar; a worker
//! (of any pool) registers a latch on its own stack and keeps executing jobs with
//! `wait_until` until the job sets it, so joining a handle from inside a pool never takes
//! a worker out of circulation; async code awaits the handle (it is a `Future`), and the
//! job wakes the task's waker. The name follows `futures::task::SpawnExt::spawn_with_handle`.

use crate::latch::CoreLatch;
use crate::pool::config::PanicHandler;
use crate::pool::global;
use crate::pool::registry::{report_panic, Registry};
use crate::pool::worker::WorkerThread;
use crate::sleep::Sleep;
use crate::spawn::{spawn_job_in, Order};
use crate::sync::checked::{AtomicBool, Condvar, Mutex};
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;
use crate::unwind;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::thread;

/// A handle to a job started with [`spawn_with_handle`] or
/// [`ThreadPool::spawn_with_handle`](crate::ThreadPool::spawn_with_handle): wait for its
/// value with [`join`](Self::join), or ask whether it is done with
/// [`is_finished`](Self::is_finished).
///
/// A handle is also a [`Future`] of the same `thread::Result<T>`: async code (a tokio or
/// async-std task) can `.await` CPU work sent to the pool without blocking its executor
/// thread, which the `tokio-rayon` crate does by hand for rayon. The job wakes the
/// awaiting task when it finishes.
///
/// Dropping the handle detaches the job: it still runs; its value is dropped, and a panic
/// goes to the pool's panic handler as for [`spawn`](fn@crate::spawn).
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let handles: Vec<stealpool::JoinHandle<u64>> =
///     (1..=4).map(|i| pool.spawn_with_handle(move || i * i)).collect();
/// let squares: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
/// assert_eq!(squares, [1, 4, 9, 16]);
/// ```
pub struct JoinHandle<T> {
    /// The state shared with the job.
    state: Arc<HandleState<T>>,
    /// The pool's panic handler: where an unjoined outcome's panic goes when the handle
    /// is dropped after the job finished (the panic of an unjoined job, or of its value's
    /// destructor), as the job itself sends it when the handle was dropped first.
    ///
    /// `AssertUnwindSafe` keeps the handle `UnwindSafe`, as it is without a handler: the
    /// handle only calls the handler, which the pool calls from any thread at any time
    /// anyway, and never reads state of it that a panic could leave broken.
    panic_handler: AssertUnwindSafe<Option<std::sync::Arc<PanicHandler>>>,
}

/// What a handle shares with its job: the outcome and how to wake whoever waits for it.
pub(crate) struct HandleState<T> {
    /// The outcome and the waiters, under the lock that `complete`, `join`, `poll` and
    /// `drop` take.
    slot: Mutex<Slot<T>>,
    /// Wakes a joiner that is not a worker.
    condvar: Condvar,
    /// Set (Release) once `slot.result` is filled, for `is_finished`.
    finished: AtomicBool,
}

/// What [`HandleState::slot`] guards.
struct Slot<T> {
    /// The job's value or panic: `None` until the job finished, and again once `join` or
    /// `poll` took it.
    result: Option<thread::Result<T>>,
    /// A worker waiting in `join`, to be woken through its latch.
    waiter: Option<Waiter>,
    /// The task that last polled the handle as a `Future`.
    waker: Option<Waker>,
    /// The handle was dropped before the job finished.
    detached: bool,
}

/// A worker blocked in `JoinHandle::join`: its latch (on its stack) and how to wake it.
struct Waiter {
    /// The latch on the waiting worker's stack, which the job sets.
    latch: *const CoreLatch,
    /// The waiting worker's pool's sleep state (our own `Arc`: the pool may be gone once
    /// the latch is set).
    sleep: Arc<Sleep>,
    /// The waiting worker's index in its pool.
    index: usize,
}

// SAFETY: `latch` is only dereferenced by the job, under the slot's mutex hand-over, while
// the waiting worker is still inside `join` (it leaves only after the latch is set).
unsafe impl Send for Waiter {}

/// Runs `func` on the current pool (the global pool if the caller is not a worker), like
/// [`spawn`](fn@crate::spawn), and returns a [`JoinHandle`] for its result. Not in
/// rayon-core: the handle follows `std::thread::JoinHandle` (`join` gives a
/// `thread::Result`), and as a `Future` it does what the `tokio-rayon` crate builds by hand.
///
/// # Panics
/// A panic in `func` is not sent to the panic handler: [`JoinHandle::join`] returns it as
/// `Err` (unless the handle was dropped first). Called outside any pool, panics if the
/// global pool has to be built and cannot be (see
/// [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
///
/// ```
/// let handle = stealpool::spawn_with_handle(|| 6 * 7);
/// assert_eq!(handle.join().unwrap(), 42);
/// ```
pub fn spawn_with_handle<F, T>(func: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_with_handle_in(func, &global::current_registry())
}

/// Spawns `func` into `registry` with a handle.
pub(crate) fn spawn_with_handle_in<F, T>(func: F, registry: &Arc<Registry>) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (handle, job_state) = JoinHandle::new_pair(registry.panic_handler());
    spawn_job_in(
        move || job_state.complete(unwind::halt_unwinding(func)),
        registry,
        Order::Lifo,
    );
    handle
}

impl<T> JoinHandle<T> {
    /// A handle and the state its job completes (`HandleState::complete`); an unjoined
    /// panic found when the handle is dropped goes to `panic_handler`.
    pub(crate) fn new_pair(
        panic_handler: Option<std::sync::Arc<PanicHandler>>,
    ) -> (JoinHandle<T>, Arc<HandleState<T>>) {
        let state = Arc::new(HandleState {
            slot: Mutex::new(Slot {
                result: None,
                waiter: None,
                waker: None,
                detached: false,
            }),
            condvar: Condvar::new(),
            finished: AtomicBool::new(false),
        });
        let job_state = Arc::clone(&state);
        (
            JoinHandle {
                state,
                panic_handler: AssertUnwindSafe(panic_handler),
            },
            job_state,
        )
    }
}

impl<T> HandleState<T> {
    /// Stores the job's outcome and wakes the joiner; if the handle was dropped, drops
    /// the value instead. A panic, the job's or its value's destructor's, then goes on to
    /// the caller: the pool's panic routing.
    pub(crate) fn complete(&self, result: thread::Result<T>) {
        let mut slot = self.slot.lock();
        if slot.detached {
            drop(slot);
            // Nobody will join: a panic goes where a `spawn` panic goes (the caller,
            // `spawn_job_in`, runs us under `Registry::catch_unwind`).
            match result {
                Ok(value) => drop(value),
                Err(payload) => unwind::resume_unwinding(payload),
            }
            return;
        }
        slot.result = Some(result);
        // Release: `is_finished() == true` implies `join` will not block.
        self.finished.store(true, Ordering::Release);
        let waiter = slot.waiter.take();
        let waker = slot.waker.take();
        drop(slot);
        // After unlocking, so the woken joiner does not block again on our mutex (std's
        // condvar does not requeue); `self` is kept alive by the job's `Arc`.
        self.condvar.notify_all();
        if let Some(waiter) = waiter {
            // SAFETY: the waiting worker stays in `join` (so its latch stays alive) until
            // this set is observed; we read nothing from the latch afterwards and use our
            // own `Arc` of its pool's sleep state to wake it.
            unsafe { waiter.sleep.set_latch_and_wake(waiter.latch, waiter.index) };
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> JoinHandle<T> {
    /// Waits for the job and returns its value, or `Err` with its panic payload (as
    /// `std::thread::JoinHandle::join` does).
    ///
    /// Called on a worker of any pool, the worker keeps executing jobs (of its own pool)
    /// while it waits, so joining from inside a job never blocks a worker; elsewhere the
    /// caller blocks.
    ///
    /// # Errors
    /// `Err(payload)` if the job panicked; re-raise it with `std::panic::resume_unwind`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let sum = pool.spawn_with_handle(|| (1..=100u32).sum::<u32>());
    /// assert_eq!(sum.join().unwrap(), 5050);
    ///
    /// let failed = pool.spawn_with_handle(|| -> u32 { panic!("no result") });
    /// assert!(failed.join().is_err());
    /// ```
    ///
    /// # Panics
    /// If the handle was already awaited to completion as a `Future` (its result is gone).
    pub fn join(self) -> thread::Result<T> {
        let mut slot = self.state.slot.lock();
        if let Some(result) = slot.result.take() {
            return result;
        }
        self.assert_result_not_taken();
        slot = WorkerThread::with_current(|worker| match worker {
            Some(worker) => {
                let latch = CoreLatch::new();
                slot.waiter = Some(Waiter {
                    latch: &latch,
                    sleep: Arc::clone(worker.sleep()),
                    index: worker.index(),
                });
                drop(slot);
                worker.wait_until(&latch);
                self.state.slot.lock()
            }
            None => {
                while slot.result.is_none() {
                    slot = self.state.condvar.wait(slot);
                }
                slot
            }
        });
        slot.result
            .take()
            .expect("stealpool: join handle woken without a result")
    }

    /// Panics if the result was already handed out by `poll` (it is gone). Call with the
    /// slot locked and found empty.
    fn assert_result_not_taken(&self) {
        // Relaxed: read under the slot's mutex, under which `complete` stores it.
        assert!(
            !self.state.finished.load(Ordering::Relaxed),
            "stealpool: JoinHandle used after it was awaited to completion"
        );
    }

    /// Whether the job has finished (then [`join`](Self::join) returns at once).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel::<u32>();
    /// let handle = pool.spawn_with_handle(move || rx.recv().unwrap() * 2);
    /// assert!(!handle.is_finished()); // the job waits for the message
    /// tx.send(21).unwrap();
    /// pool.wait_idle().unwrap();
    /// assert!(handle.is_finished());
    /// assert_eq!(handle.join().unwrap(), 42);
    /// ```
    pub fn is_finished(&self) -> bool {
        // Acquire pairs with the Release in `complete`.
        self.state.finished.load(Ordering::Acquire)
    }
}

/// Awaiting a handle: `Ready` with the job's value, or `Err` with its panic payload, once
/// the job finished; until then `Pending`, and the job wakes the last task that polled.
///
/// # Panics
/// If polled again after it returned `Ready`.
///
/// ```
/// let handle = stealpool::spawn_with_handle(|| 6 * 7);
/// // In any async context (a tokio task...); here driven by stealpool's own `block_on`.
/// let value = stealpool::block_on(async { handle.await.unwrap() });
/// assert_eq!(value, 42);
/// ```
impl<T> Future for JoinHandle<T> {
    type Output = thread::Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.state.slot.lock();
        if let Some(result) = slot.result.take() {
            return Poll::Ready(result);
        }
        self.assert_result_not_taken();
        if matches!(&slot.waker, Some(waker) if waker.will_wake(cx.waker())) {
            return Poll::Pending;
        }
        // The waker's clone, and the old waker's drop, are the executor's code: they run
        // outside the lock, which the job's `complete` takes (a waker that waits for the
        // pool would hold up the job it waits for).
        drop(slot);
        let waker = cx.waker().clone();
        let mut slot = self.state.slot.lock();
        // Registered under the lock `complete` takes: either the job has not finished and
        // will find this waker, or its result is there now. (On return the guard drops
        // before `waker`, declared earlier.)
        if let Some(result) = slot.result.take() {
            return Poll::Ready(result);
        }
        let replaced = slot.waker.replace(waker);
        drop(slot);
        drop(replaced);
        Poll::Pending
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        let mut slot = self.state.slot.lock();
        let result = slot.result.take();
        if result.is_none() {
            slot.detached = true;
        }
        drop(slot);
        // An unjoined value or panic, outside the lock: a panic goes to the pool's panic
        // handler, as it would had the handle been dropped before the job finished.
        let report = |payload| report_panic(self.panic_handler.as_deref(), payload);
        match result {
            None => {}
            Some(Ok(value)) => {
                if let Err(payload) = unwind::halt_unwinding(move || drop(value)) {
                    report(payload);
                }
            }
            Some(Err(payload)) => report(payload),
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
