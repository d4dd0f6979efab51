//! The job of `Scope::spawn`: in the spawning worker's arena when it fits, else boxed,
//! and tagged as a scope job ([`JobRef::new_scope_job`]).

use crate::job::{Chunk, Job, JobArena, JobRef};
use crate::pool::worker::WorkerThread;
use std::alloc::Layout;
use std::ptr;

/// A job spawned into a scope. Its `JobRef` carries the scope-job tag, so that a worker
/// can tell a scope job from any other job before running it ([`JobRef::is_scope_job`];
/// the worker defers scope jobs' count-downs, `pool::worker::deferred`). It lives in the
/// spawning worker's [`JobArena`] when it fits, else in a box.
pub(crate) struct ScopeHeapJob<F> {
    /// The arena chunk holding the job (one reference of it), or null for a box.
    chunk: *const Chunk,
    /// The spawned closure, run once by `execute`.
    func: F,
}

impl<F> ScopeHeapJob<F>
where
    F: FnOnce() + Send,
{
    /// Stores `func` in `arena` if given and it fits, else in a box, and returns the job.
    ///
    /// # Safety
    /// Anything `func` borrows must outlive the job's execution (scopes guarantee it by
    /// waiting for every spawned job), and the job must be executed exactly once.
    pub(crate) unsafe fn new_job_ref(func: F, arena: Option<&JobArena>) -> JobRef {
        let place = arena.and_then(|arena| arena.allocate(Layout::new::<Self>()));
        let job: *const Self = match place {
            Some((place, chunk)) => {
                let job = place.cast::<Self>().as_ptr();
                // SAFETY: the arena handed out this place for a value of `Self`'s layout.
                unsafe { job.write(ScopeHeapJob { chunk, func }) };
                job.cast_const()
            }
            None => Box::into_raw(Box::new(ScopeHeapJob {
                chunk: ptr::null(),
                func,
            }))
            .cast_const(),
        };
        // SAFETY: the job lives until it runs (in its arena chunk, which holds a reference
        // for it, or in its box); once-only execution and the borrows are the caller's.
        unsafe { JobRef::new_scope_job(job) }
    }
}

impl<F> Job for ScopeHeapJob<F>
where
    F: FnOnce() + Send,
{
    /// # Safety
    /// `this` came from `new_job_ref` and runs once.
    unsafe fn execute(this: *const ()) {
        let this = this.cast::<Self>().cast_mut();
        // SAFETY: a live job, executed once (contract): its fields are read once, and the
        // place is given back (box freed, chunk reference released) after the read.
        let func = unsafe {
            let chunk = (*this).chunk;
            if chunk.is_null() {
                Box::from_raw(this).func
            } else {
                let func = ptr::addr_of!((*this).func).read();
                WorkerThread::with_current(|worker| match worker {
                    Some(worker) => worker.release_later(chunk),
                    None => Chunk::release(chunk, 1),
                });
                func
            }
        };
        func();
    }
}

#[cfg(all(test, not(loom)))]
mod test {
    use super::ScopeHeapJob;
    use crate::job::{HeapJob, JobArena, JobRef, StackJob};
    use crate::latch::LockLatch;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Runs `job` and says whether it was recognised as a scope job.
    fn tag_then_run(job: JobRef) -> bool {
        let is_scope_job = job.is_scope_job();
        // SAFETY: each job below is alive and taken out here exactly once.
        unsafe { job.execute() };
        is_scope_job
    }

    #[test]
    fn only_scope_jobs_carry_the_tag_and_each_runs_with_it_removed() {
        let ran = AtomicUsize::new(0);
        // Zero-sized closures, aligned to 1: the jobs' own alignment keeps the bit clear.
        let zst = HeapJob::new(|| ());
        // SAFETY: a `'static` closure, run once by `tag_then_run`.
        assert!(!tag_then_run(unsafe { zst.into_job_ref() }));
        let stack = StackJob::new(
            |_migrated: bool| {
                ran.fetch_add(1, Ordering::Relaxed);
            },
            LockLatch::new(),
        );
        // SAFETY: `stack` outlives its execution below, which happens once.
        assert!(!tag_then_run(unsafe { stack.as_job_ref() }));
        // SAFETY: the closure borrows `ran`, which outlives the job run at once.
        let boxed = unsafe {
            ScopeHeapJob::new_job_ref(
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                },
                None,
            )
        };
        assert!(tag_then_run(boxed));
        let arena = JobArena::new();
        // SAFETY: as above.
        let in_arena = unsafe {
            ScopeHeapJob::new_job_ref(
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                },
                Some(&arena),
            )
        };
        assert!(tag_then_run(in_arena));
        assert_eq!(
            ran.load(Ordering::Relaxed),
            3,
            "every job ran once, through its untagged pointer"
        );
    }
}
