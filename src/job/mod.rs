//! Type-erased jobs: what the deques carry.
//!
//! A [`JobRef`] is a pointer plus the function that knows how to run it, so one deque type
//! carries stack jobs (`join`, `install`), heap jobs (`spawn`), scope jobs
//! (`Scope::spawn`, in a worker's arena) and FIFO stubs. Every `JobRef` must be executed
//! exactly once. The design follows
//! rayon-core's `job.rs`.

mod arena;

pub(crate) use arena::{Chunk, DeferredReleases, JobArena};

use crate::latch::{JoinLatch, LatchOwner};
use crate::sync::UnsafeCell;
use crate::unwind;
use std::any::Any;
use std::mem::{self, ManuallyDrop, MaybeUninit};

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
/// from the unsafe constructors ([`JobRef::new`], [`JobRef::from_raw`]), whose callers
/// answer for it.
#[derive(Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
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

/// A job that lives in the stack frame of the thread waiting for it (`join`, `install`).
///
/// No allocation: the waiter keeps the frame alive until `latch` is set, and only then
/// reads `result`. The latch, not a tag in the job, says what is initialised: the closure
/// until it was taken (by [`run_inline`](Self::run_inline) or by whoever executes the
/// job), the result once the latch is set. So the `join` fast path writes no `None`
/// into the closure it takes and no empty result it then checks for a destructor. A job
/// that is dropped without ever running leaks its closure (its captures are not
/// dropped); every creator runs its job or waits for its latch, so none is.
///
/// `repr(C)`, its execute function first and its latch next, at offsets that do not depend
/// on `F` or `R`: a `join` half's private stack reads the one and writes the other through
/// the job's address alone ([`JoinHalf`]).
#[repr(C)]
pub(crate) struct StackJob<L, F, R> {
    /// `<Self as Job>::execute`, at the job's address: a `join` half's private stack keeps
    /// only the job's address (one word per slot) and finds the function here.
    execute: unsafe fn(*const ()),
    /// Set after `result` is written; the waiter may free the job as soon as it observes it.
    pub(crate) latch: L,
    func: UnsafeCell<ManuallyDrop<F>>,
    result: UnsafeCell<MaybeUninit<JobResult<R>>>,
}

impl<L, F, R> StackJob<L, F, R>
where
    L: crate::latch::Latch + Sync,
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    /// A job that will run `func(migrated)` and then set `latch`.
    #[inline(always)]
    pub(crate) fn new(func: F, latch: L) -> Self {
        StackJob {
            execute: <Self as Job>::execute,
            latch,
            func: UnsafeCell::new(ManuallyDrop::new(func)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// A reference that another thread may execute.
    ///
    /// # Safety
    /// The caller must keep `self` alive (not move or drop it) until the latch is set.
    #[inline(always)]
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded from this function's contract.
        unsafe { JobRef::new(self) }
    }

    /// The identity of [`as_job_ref`](Self::as_job_ref)'s reference ([`JobRef::id`]),
    /// without making one: how `join` recognises its half when popping its deque.
    #[inline]
    pub(crate) fn id(&self) -> (*const (), usize) {
        let execute: unsafe fn(*const ()) = <Self as Job>::execute;
        ((self as *const Self).cast(), execute as usize)
    }

    /// Runs the closure on the current thread, for a job that was never executed and that
    /// its owner took back.
    ///
    /// Takes `&self`, not `self`: moving the whole job into the call costs a copy that
    /// the CPU cannot forward from the stores that built it (a stall of about 4 ns per
    /// `join` measured with `perf annotate`).
    ///
    /// # Safety
    /// No other thread may execute the job, now or later: it was never handed out, or the
    /// caller took it back (popped it from its private stack or its deque). Called at
    /// most once, and never after the job was executed.
    ///
    /// # Panics
    /// A panic in the closure unwinds straight out of this call.
    #[inline(always)]
    pub(crate) unsafe fn run_inline(&self, migrated: bool) -> R {
        // SAFETY: per the contract this thread is the job's only user and the closure
        // was not taken yet.
        let func = unsafe { ManuallyDrop::take(&mut *self.func.get()) };
        func(migrated)
    }

    /// Moves the job's result out after its latch was observed set. By reference, so
    /// that the waiter's frame keeps the job where it is (no copy of it).
    ///
    /// # Safety
    /// The latch was observed set (by this thread, with Acquire): the job was executed
    /// and wrote its result. Called at most once per job (with the methods below, which
    /// call it): the result is moved out.
    #[inline]
    unsafe fn take_result(&self) -> JobResult<R> {
        // SAFETY: per the contract the result is initialised, nobody else touches it
        // any more, and it is read only once.
        unsafe { (*self.result.get()).assume_init_read() }
    }

    /// The job's value after its latch was observed set.
    ///
    /// # Safety
    /// As [`take_result`](Self::take_result): the latch was observed set.
    ///
    /// # Panics
    /// Re-raises the closure's panic in the waiting thread.
    pub(crate) unsafe fn take_value(&self) -> R {
        // SAFETY: forwarded.
        unsafe { self.take_result() }.into_return_value()
    }

    /// The job's value or panic payload after its latch was observed set.
    ///
    /// # Safety
    /// As [`take_result`](Self::take_result): the latch was observed set.
    pub(crate) unsafe fn take_job_result(&self) -> std::thread::Result<R> {
        // SAFETY: forwarded.
        match unsafe { self.take_result() } {
            JobResult::Ok(x) => Ok(x),
            JobResult::Panic(p) => Err(p),
        }
    }

    /// Drops the job's result after its latch was observed set, without letting a
    /// panicking destructor (of the value or of a panic payload) unwind.
    ///
    /// # Safety
    /// As [`take_result`](Self::take_result): the latch was observed set.
    pub(crate) unsafe fn discard_result(&self) {
        // SAFETY: forwarded.
        unwind::drop_quietly(unsafe { self.take_result() });
    }
}

/// A `join`'s second half as its owner's private stack keeps it (`pool::pending`): the
/// address of a [`StackJob`] whose latch is a [`JoinLatch`], one word. The job's header
/// holds its execute function, and the stack writes its latch when it hands the half out
/// (the `join` fast path never does). Made only by [`StackJob::as_join_half`], or rebuilt
/// from its word.
#[derive(Debug)]
pub(crate) struct JoinHalf(*const ());

/// The header every `StackJob<JoinLatch, _, _>` starts with (`StackJob` is `repr(C)`).
#[repr(C)]
struct JoinHalfHeader {
    execute: unsafe fn(*const ()),
    latch: JoinLatch,
}

impl JoinHalf {
    /// The half's one word: its job's address.
    #[inline(always)]
    pub(crate) fn word(&self) -> usize {
        self.0 as usize
    }

    /// Rebuilds a half from [`word`](Self::word).
    ///
    /// # Safety
    /// `word` must be the word of one `JoinHalf`, unchanged.
    #[inline]
    pub(crate) unsafe fn from_word(word: usize) -> JoinHalf {
        JoinHalf(word as *const ())
    }

    /// Writes the half's latch (`UNSET`, owned by `owner`) and gives the job to whoever
    /// runs it.
    ///
    /// # Safety
    /// The half's job is live, and handed out once, here, by the thread that holds its
    /// private stack's lock; `owner` outlives every setter (as [`JoinLatch::write`]).
    #[inline]
    pub(crate) unsafe fn hand_out(self, owner: &LatchOwner) -> JobRef {
        let header = self.0.cast::<JoinHalfHeader>();
        // SAFETY: a `JoinHalf` points to a live `StackJob<JoinLatch, _, _>`
        // (`as_join_half`, and the caller's contract), which is `repr(C)` and starts with
        // the fields of `JoinHalfHeader`: its execute function, written when the job was
        // built, and its latch, which nobody reads before this write.
        unsafe {
            JoinLatch::write(std::ptr::addr_of!((*header).latch), owner);
            JobRef {
                pointer: self.0,
                execute_fn: (*header).execute,
            }
        }
    }
}

impl<F, R> StackJob<JoinLatch, F, R>
where
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    /// The half for its owner's private stack.
    ///
    /// # Safety
    /// As [`as_job_ref`](Self::as_job_ref): the job stays alive and in place until it was
    /// taken back or its latch was set, and it is executed at most once.
    #[inline(always)]
    pub(crate) unsafe fn as_join_half(&self) -> JoinHalf {
        const {
            assert!(
                std::mem::offset_of!(Self, execute)
                    == std::mem::offset_of!(JoinHalfHeader, execute)
            );
            assert!(
                std::mem::offset_of!(Self, latch) == std::mem::offset_of!(JoinHalfHeader, latch)
            );
        }
        JoinHalf((self as *const Self).cast())
    }
}

impl<L, F, R> Job for StackJob<L, F, R>
where
    L: crate::latch::Latch + Sync,
    F: FnOnce(bool) -> R + Send,
    R: Send,
{
    unsafe fn execute(this: *const ()) {
        let this = this.cast::<Self>();
        let abort = unwind::AbortIfPanic;
        // SAFETY: the job is alive and executed once (contract of `Job::execute`), and a
        // job that is executed is never also run inline (contract of `run_inline`), so
        // the closure is still there; until the latch is set nobody else touches `func`
        // or `result`.
        unsafe {
            let func = ManuallyDrop::take(&mut *(*this).func.get());
            (*(*this).result.get()).write(JobResult::call(move || func(true)));
            // After `set` the owner may free the job: `this` is not used again.
            L::set(&(*this).latch);
        }
        mem::forget(abort);
    }
}

/// A boxed job for fire-and-forget work (`spawn`, `Scope::spawn`).
///
/// The closure does its own bookkeeping (panic routing, counters, latches); the box is
/// freed when it runs. Aligned to at least 2 (a closure may be aligned to 1) so that the
/// type tag's bit of its `JobRef` stays clear.
#[repr(align(2))]
pub(crate) struct HeapJob<F> {
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
    inner: crate::sync::deque::Injector<JobRef>,
}

impl JobFifo {
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
