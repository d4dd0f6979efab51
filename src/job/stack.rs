//! [`StackJob`]: a job in the frame of the thread that waits for it (`join`, `install`),
//! and [`JoinHalf`], a `join`'s second half as one word.

use super::{Job, JobRef, JobResult};
use crate::latch::{JoinLatch, LatchOwner};
use crate::sync::checked::UnsafeCell;
use crate::unwind;
use std::mem::{self, ManuallyDrop, MaybeUninit};

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
    /// The closure, until `run_inline` or `execute` takes it.
    func: UnsafeCell<ManuallyDrop<F>>,
    /// The closure's value or panic, written by `execute` before it sets `latch`.
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
    /// the CPU cannot forward from the stores that built it, a stall on every `join`.
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
        let func = unsafe { self.func.with_mut(|func| ManuallyDrop::take(&mut *func)) };
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
        unsafe { self.result.with(|result| (*result).assume_init_read()) }
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

/// A `join`'s second half as its owner's private stack keeps it (`pool::private_stack`):
/// the address of a [`StackJob`] whose latch is a [`JoinLatch`], one word. The job's header
/// holds its execute function, and the stack writes its latch when it hands the half out
/// (the `join` fast path never does). Made only by [`StackJob::as_join_half`], or rebuilt
/// from its word.
#[derive(Debug)]
pub(crate) struct JoinHalf(*const ());

/// The header every `StackJob<JoinLatch, _, _>` starts with (`StackJob` is `repr(C)`).
#[repr(C)]
struct JoinHalfHeader {
    /// The job's `StackJob::execute` field.
    execute: unsafe fn(*const ()),
    /// The job's `StackJob::latch` field.
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
            let func = (*this).func.with_mut(|func| ManuallyDrop::take(&mut *func));
            (*this).result.with_mut(|result| {
                (*result).write(JobResult::call(move || func(true)));
            });
            // After `set` the owner may free the job: `this` is not used again.
            L::set(&(*this).latch);
        }
        mem::forget(abort);
    }
}
