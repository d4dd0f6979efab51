//! Boxed jobs: [`HeapJob`] (`spawn`) and the FIFO behind a LIFO deque, [`JobFifo`].

use super::{Job, JobRef};

/// A boxed job for fire-and-forget work (`spawn`, `Scope::spawn`).
///
/// The closure does its own bookkeeping (panic routing, counters, latches); the box is
/// freed when it runs. Aligned to at least 2 (a closure may be aligned to 1) so that the
/// type tag's bit of its `JobRef` stays clear.
#[repr(align(2))]
pub(crate) struct HeapJob<F> {
    /// The job's closure, run once by `execute`.
    func: F,
}

impl<F> HeapJob<F>
where
    F: FnOnce() + Send,
{
    /// Boxes `func`.
    pub(crate) fn new(func: F) -> Box<Self> {
        Box::new(HeapJob { func })
    }

    /// Gives up the box to a `JobRef`.
    ///
    /// # Safety
    /// Anything `F` borrows must outlive the job's execution (trivially true for
    /// `'static` closures; scopes guarantee it by waiting for every spawned job).
    pub(crate) unsafe fn into_job_ref(self: Box<Self>) -> JobRef {
        // SAFETY: the box is leaked here and reclaimed exactly once in `execute`; the
        // borrow requirement is forwarded from this function's contract.
        unsafe { JobRef::new(Box::into_raw(self)) }
    }
}

impl<F> Job for HeapJob<F>
where
    F: FnOnce() + Send,
{
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `Box::into_raw` in `into_job_ref` and is executed once.
        let this = unsafe { Box::from_raw(this.cast::<Self>().cast_mut()) };
        (this.func)();
    }
}

/// A FIFO of jobs behind a LIFO deque: how `spawn_fifo` and `ScopeFifo::spawn_fifo` get
/// first-in-first-out order out of a worker's LIFO deque (rayon-core's `JobFifo`).
///
/// [`JobFifo::push`] queues the real job here and returns a *stub* `JobRef` to push on the
/// deque. Whoever executes a stub (the owner popping it, or a thief) runs the **oldest**
/// queued job, not the one the stub was made for. There is exactly one stub per queued
/// job, so every job runs exactly once, in FIFO order relative to the others in this
/// queue.
pub(crate) struct JobFifo {
    /// The queued jobs, oldest first.
    inner: crate::sync::deque::Injector<JobRef>,
}

impl JobFifo {
    /// An empty FIFO.
    pub(crate) fn new() -> Self {
        JobFifo {
            inner: crate::sync::deque::Injector::new(),
        }
    }

    /// Queues `job_ref` and returns the stub to push on a deque.
    ///
    /// # Safety
    /// `self` must stay alive until the returned stub has executed (the worker's FIFO
    /// lives as long as the worker thread, which outlives every spawn job; a scope's
    /// FIFOs live until the scope's jobs are all done).
    pub(crate) unsafe fn push(&self, job_ref: JobRef) -> JobRef {
        self.inner.push(job_ref);
        // SAFETY: the caller keeps `self` alive until the stub has executed; each stub is
        // executed once and takes exactly one job, which the queue holds by then.
        unsafe { JobRef::new(self) }
    }
}

impl Job for JobFifo {
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` is a live `JobFifo` (contract of `push`).
        let this = unsafe { &*this.cast::<Self>() };
        // Retry only means another stub's steal raced ours: the queue still holds at
        // least our job (one job per stub), so keep trying.
        loop {
            match this.inner.steal() {
                crate::sync::deque::Steal::Success(job_ref) => {
                    // SAFETY: the job was queued by `push` under the same contract as any
                    // JobRef, and is taken out exactly once here.
                    return unsafe { job_ref.execute() };
                }
                crate::sync::deque::Steal::Retry => std::hint::spin_loop(),
                crate::sync::deque::Steal::Empty => {
                    unreachable!("stealpool: FIFO stub executed with an empty FIFO")
                }
            }
        }
    }
}
