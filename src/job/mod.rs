//! Type-erased jobs: what the deques carry.
//!
//! A [`JobRef`] is a pointer plus the function that knows how to run it, so one deque type
//! carries stack jobs (`join`, `install`), heap jobs (`spawn`), scope jobs
//! (`Scope::spawn`, in a worker's arena) and FIFO stubs. Every `JobRef` must be executed
//! exactly once. The design follows
//! rayon-core's `job.rs`.

mod arena;
mod heap;
mod stack;

pub(crate) use arena::{Chunk, JobArena};
pub(crate) use heap::{HeapJob, JobFifo};
pub(crate) use stack::{JoinHalf, StackJob};

use crate::unwind;
use std::any::Any;
use std::mem;

/// A job that can be executed through a raw pointer.
pub(crate) trait Job {
    /// Runs the job.
    ///
    /// # Safety
    /// `this` must point to a live job of this type that has not been executed yet, and it
    /// must be executed at most once.
    unsafe fn execute(this: *const ());
}

/// A type-erased reference to a job: data pointer plus the function that runs it.
///
/// The data pointer's lowest bit is the job's type tag: [`SCOPE_JOB_TAG`] for a job
/// spawned into a scope ([`JobRef::new_scope_job`]), clear for every other job; the
/// alignment of every job type (checked at compile time) keeps the bit free. So a worker
/// can tell a scope job from any other job without running it, and without comparing
/// function addresses (which identical-code folding may merge).
///
/// Moved through crossbeam deques between threads; whoever takes it out must call
/// [`JobRef::execute`] exactly once. Not `Clone` or `Copy`: executing consumes it, so
/// safe code cannot run a job twice; a second reference to the same job can only come
/// from the unsafe constructors ([`JobRef::new`], [`JobRef::new_scope_job`],
/// [`JoinHalf::hand_out`]), whose callers answer for it.
#[derive(Debug)]
pub(crate) struct JobRef {
    /// The job's data, with the type tag in its lowest bit.
    pointer: *const (),
    /// The function that runs the job `pointer` points to.
    execute_fn: unsafe fn(*const ()),
}

// SAFETY: a JobRef is only a handle; the job types that create one (StackJob, HeapJob)
// require their closures and results to be `Send`, and the creator keeps the data alive
// until the job has run (stack jobs wait on their latch, heap jobs own their box).
unsafe impl Send for JobRef {}
// SAFETY: see `Send`; a shared `&JobRef` only allows copying the two pointers.
unsafe impl Sync for JobRef {}

impl JobRef {
    /// Erases the type of `data`.
    ///
    /// # Safety
    /// `data` must stay valid until the returned `JobRef` is executed, and it must be
    /// executed exactly once.
    pub(crate) unsafe fn new<T: Job>(data: *const T) -> JobRef {
        // The type tag's bit must be clear in every other job's address.
        const { assert!(mem::align_of::<T>() > SCOPE_JOB_TAG) };
        JobRef {
            pointer: data.cast(),
            execute_fn: <T as Job>::execute,
        }
    }

    /// Erases the type of `data`, a job spawned into a scope: the reference carries the
    /// scope-job tag ([`JobRef::is_scope_job`]).
    ///
    /// # Safety
    /// As for [`JobRef::new`].
    pub(crate) unsafe fn new_scope_job<T: Job>(data: *const T) -> JobRef {
        const { assert!(mem::align_of::<T>() > SCOPE_JOB_TAG) };
        JobRef {
            // `wrapping_add` keeps the pointer's provenance; `execute_untagged` takes the
            // tag off before the job is touched.
            pointer: data.cast::<u8>().wrapping_add(SCOPE_JOB_TAG).cast(),
            execute_fn: execute_untagged::<T>,
        }
    }

    /// The reference's two words (data pointer, execute function as `usize`): the
    /// identity by which `join` recognises its own second half when popping it back.
    #[inline]
    pub(crate) fn id(&self) -> (*const (), usize) {
        (self.pointer, self.execute_fn as usize)
    }

    /// Whether this is a job spawned into a scope (its type tag).
    #[inline]
    pub(crate) fn is_scope_job(&self) -> bool {
        self.pointer as usize & SCOPE_JOB_TAG != 0
    }

    /// Runs the job.
    ///
    /// # Safety
    /// Called exactly once per job, while the job's data is alive (guaranteed by the
    /// contract of [`JobRef::new`]).
    #[inline]
    pub(crate) unsafe fn execute(self) {
        // SAFETY: forwarded from this function's contract.
        unsafe { (self.execute_fn)(self.pointer) }
    }
}

/// The type tag of a job spawned into a scope, set in its `JobRef`'s data pointer.
const SCOPE_JOB_TAG: usize = 1;

/// The execute function of a tagged `JobRef`: takes the tag off, then runs the job.
///
/// # Safety
/// `this` is the tagged pointer of a live job of type `T` (contract of [`Job::execute`]).
unsafe fn execute_untagged<T: Job>(this: *const ()) {
    let this = this.cast::<u8>().wrapping_sub(SCOPE_JOB_TAG).cast::<()>();
    // SAFETY: forwarded: `this` is now the job's own address.
    unsafe { T::execute(this) }
}

/// The outcome of a job that somebody waits for.
pub(crate) enum JobResult<T> {
    /// Ran and returned a value.
    Ok(T),
    /// Ran and panicked; the payload is re-raised in the waiter.
    Panic(Box<dyn Any + Send>),
}

impl<T> JobResult<T> {
    /// Runs `func`, capturing its value or its panic.
    #[inline]
    pub(crate) fn call(func: impl FnOnce() -> T) -> Self {
        match unwind::halt_unwinding(func) {
            Ok(x) => JobResult::Ok(x),
            Err(p) => JobResult::Panic(p),
        }
    }

    /// Returns the value, or re-raises the captured panic in the caller.
    ///
    /// # Panics
    /// Re-raises the job's panic.
    pub(crate) fn into_return_value(self) -> T {
        match self {
            JobResult::Ok(x) => x,
            JobResult::Panic(p) => unwind::resume_unwinding(p),
        }
    }
}
