//! The job of `Scope::spawn`: boxed or in the spawning worker's arena, and recognisable.

use super::arena::{Chunk, JobArena};
use super::JobRef;
use crate::worker::WorkerThread;
use std::alloc::Layout;
use std::ptr;

/// A job spawned into a scope. Its `JobRef` has one execute function for every closure
/// type, [`execute_scope_job`], so that a worker can tell a scope job from any other job
/// before running it ([`JobRef::is_scope_job`]; the worker defers scope jobs'
/// count-downs, `worker::count_down`). It lives in the spawning worker's [`JobArena`]
/// when it fits, else in a box.
#[repr(C)]
pub(crate) struct ScopeHeapJob<F> {
    /// First field (`repr(C)`): `execute_scope_job` reads it through the erased pointer.
    run: unsafe fn(*const ()),
    /// The arena chunk holding the job (one reference of it), or null for a box.
    chunk: *const Chunk,
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
        let pointer = match place {
            Some((place, chunk)) => {
                let job = place.cast::<Self>().as_ptr();
                // SAFETY: the arena handed out this place for a value of `Self`'s layout.
                unsafe {
                    job.write(ScopeHeapJob {
                        run: Self::run,
                        chunk,
                        func,
                    })
                };
                job.cast_const()
            }
            None => Box::into_raw(Box::new(ScopeHeapJob {
                run: Self::run,
                chunk: ptr::null(),
                func,
            }))
            .cast_const(),
        };
        JobRef {
            pointer: pointer.cast(),
            execute_fn: execute_scope_job,
        }
    }

    /// # Safety
    /// `this` came from `new_job_ref` and runs once.
    unsafe fn run(this: *const ()) {
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

/// The execute function of every [`ScopeHeapJob`]: calls the job's own `run`.
///
/// # Safety
/// `this` points to a live `ScopeHeapJob` (contract of [`Job::execute`](super::Job)).
pub(super) unsafe fn execute_scope_job(this: *const ()) {
    // SAFETY: `ScopeHeapJob` is `repr(C)` with `run` first, so the pointer to the job is
    // a pointer to its `run` field, which is initialised and read-only.
    let run = unsafe { *this.cast::<unsafe fn(*const ())>() };
    // SAFETY: forwarded from this function's contract.
    unsafe { run(this) }
}
