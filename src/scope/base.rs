//! The part every scope kind shares: its pool, its count latch, its first panic; how a
//! spawned job is made and run, and how the scope completes.

use super::job::ScopeHeapJob;
use super::{Scope, ScopeFifo};
use crate::broadcast::{take_terminate_references, BroadcastContext};
use crate::job::{HeapJob, JobRef};
use crate::latch::{CountLatch, Latch};
use crate::pool::global;
use crate::pool::registry::{Registry, WaitNeeds};
use crate::pool::worker::{self, WorkerThread};
use crate::sync::unchecked::Arc;
use crate::sync::unchecked::AtomicPtr;
use crate::sync::Ordering;
use crate::unwind;
use std::any::Any;
use std::marker::PhantomData;
use std::ptr;

/// What every scope kind (`Scope`, `ScopeFifo`) shares: its pool, its first panic, and
/// the count of its outstanding jobs, which its owner waits on.
pub(super) struct ScopeBase<'scope> {
    /// The pool that spawned jobs go to.
    pub(super) registry: Arc<Registry>,
    /// The first panic captured in the body or a job, re-raised at the end.
    panic: AtomicPtr<Box<dyn Any + Send + 'static>>,
    /// Outstanding jobs, plus one for the body.
    job_completed_latch: CountLatch,
    /// Makes `'scope` invariant, so a scope cannot be shortened to accept shorter borrows.
    #[allow(clippy::type_complexity)]
    marker: PhantomData<Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>>,
}

impl<'scope> ScopeBase<'scope> {
    /// A scope on `registry`'s pool, else on `owner`'s, else on the global pool; its
    /// latch counts the body as its one outstanding job.
    pub(super) fn new(owner: Option<&WorkerThread>, registry: Option<&Arc<Registry>>) -> Self {
        let registry = match (registry, owner) {
            (Some(registry), _) => Arc::clone(registry),
            (None, Some(owner)) => Arc::clone(owner.registry()),
            (None, None) => Arc::clone(global::global_registry()),
        };
        ScopeBase {
            registry,
            panic: AtomicPtr::new(ptr::null_mut()),
            job_completed_latch: CountLatch::new(owner),
            marker: PhantomData,
        }
    }

    /// A heap job of this scope that runs `body(scope)` (`Scope::spawn`,
    /// `ScopeFifo::spawn_fifo`), counted in the scope's latch. Each job is one allocation.
    pub(super) fn heap_job_ref<S, BODY>(&self, scope: &S, body: BODY) -> JobRef
    where
        S: HasBase<'scope> + Sync,
        BODY: FnOnce(&S) + Send + 'scope,
    {
        // One pointer, not two, for both the scope and its base: a smaller job.
        let scope_ptr = ScopePtr(scope);
        let func = move || {
            // SAFETY: the scope does not end (and so stays alive) until this job has
            // counted its latch down at the very end of `execute_spawned`; `body` runs
            // before.
            unsafe {
                let scope = &*scope_ptr.as_ptr();
                ScopeBase::execute_spawned(scope.base(), move || body(scope))
            };
        };
        self.job_completed_latch.increment();
        // A worker spawning puts the job in its arena (`job::arena`).
        WorkerThread::with_current(|worker| {
            let arena = worker.map(WorkerThread::job_arena);
            // SAFETY: the job borrows only data outliving `'scope`, the scope waits for
            // the job to finish before `'scope` ends, and the deque or injector it goes to
            // runs it once.
            unsafe { ScopeHeapJob::new_job_ref(func, arena) }
        })
    }

    /// One job of this scope per worker of its pool, each running `body` with its
    /// broadcast context.
    ///
    /// Every job owns an `Arc` of `body` and drops it *inside* the job, before the latch
    /// decrement, so the last copy of `body` (which may borrow `'scope` data) is dropped
    /// before the scope can end.
    pub(super) fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let n_threads = self.registry.num_threads();
        // Each copy also holds the pool alive until it ran (see `take_terminate_references`).
        take_terminate_references(&self.registry, n_threads);
        let body = Arc::new(body);
        let base_ptr = ScopePtr(self);
        for _ in 0..n_threads {
            self.job_completed_latch.increment();
        }
        let job_refs = (0..n_threads).map(|_| {
            let body = Arc::clone(&body);
            let registry = Arc::clone(&self.registry);
            let job = HeapJob::new(move || {
                let base = base_ptr.as_ptr();
                // SAFETY: the scope stays alive until this job's decrement, the last
                // thing `execute_job` does; `body` is consumed (dropped) before it.
                unsafe {
                    ScopeBase::execute_job(base, move || {
                        BroadcastContext::with(|ctx| body(ctx));
                    })
                };
                // Our own `Arc`: the scope may be gone by now.
                registry.terminate();
            });
            // SAFETY: the job borrows only data outliving `'scope`, and the scope waits
            // for it.
            unsafe { job.into_job_ref() }
        });
        worker::inject_broadcast(&self.registry, job_refs);
        drop(body);
    }

    /// Runs the body as the scope's first "job", waits for every job, re-raises a panic.
    pub(super) fn complete<R>(&self, owner: Option<&WorkerThread>, func: impl FnOnce() -> R) -> R {
        if owner.is_none() {
            // A thread outside the pool will wait for the workers: before the body can
            // queue a job that borrows this scope, since it may panic (Windows' loader
            // lock).
            self.registry.check_wait(WaitNeeds::AnyWorker);
        }
        // SAFETY: `self` is borrowed for this whole call, so it outlives the decrement.
        let result = unsafe { Self::execute_job_closure(self, func) };
        self.job_completed_latch.wait(owner);
        self.maybe_propagate_panic();
        result.expect("stealpool: scope body panicked but no panic was recorded")
    }

    /// Runs one job of the scope, then counts it as done.
    ///
    /// # Safety
    /// `this` must be alive on entry; it may be freed by the owner as soon as the job's
    /// decrement lands, which is the last thing this function does with it.
    unsafe fn execute_job(this: *const Self, func: impl FnOnce()) {
        // SAFETY: forwarded.
        let _ = unsafe { Self::execute_job_closure(this, func) };
    }

    /// Runs a job spawned into this scope on a worker; its count-down is left to the
    /// worker, which delivers it later, together with those of the same scope's jobs it
    /// runs next (`pool::worker::deferred`).
    ///
    /// # Safety
    /// `this` is alive until this job counted down.
    unsafe fn execute_spawned(this: *const Self, func: impl FnOnce()) {
        // SAFETY: not counted down yet, so the scope is alive.
        let latch = unsafe { ptr::addr_of!((*this).job_completed_latch) };
        WorkerThread::with_current(|worker| {
            let Some(worker) = worker else {
                // Not on a worker (no scheduling loop to defer to): count down now.
                // SAFETY: forwarded.
                return unsafe { Self::execute_job(this, func) };
            };
            worker.scope_job_starts(latch);
            if let Err(payload) = unwind::halt_unwinding(func) {
                // SAFETY: not counted down yet, so the scope is alive.
                unsafe { (*this).job_panicked(payload) };
            }
            // SAFETY: this job has not counted down; the worker delivers the count.
            unsafe { worker.count_down_later(latch) };
        })
    }

    /// Runs one job of the scope, then counts it as done; returns its value, or `None`
    /// if it panicked (the panic is kept for the owner).
    ///
    /// # Safety
    /// As [`ScopeBase::execute_job`]. A raw pointer, not `&self`: a reference would
    /// assert the scope stays alive until the function returns, which the owner does not
    /// promise once the latch is set.
    unsafe fn execute_job_closure<R>(this: *const Self, func: impl FnOnce() -> R) -> Option<R> {
        let result = match unwind::halt_unwinding(func) {
            Ok(value) => Some(value),
            Err(payload) => {
                // SAFETY: the latch is not decremented yet, so the scope is alive.
                unsafe { (*this).job_panicked(payload) };
                None
            }
        };
        // SAFETY: alive until this decrement; `CountLatch::set` takes a raw pointer and
        // does not touch the latch after the decrement that may free it.
        unsafe { Latch::set(ptr::addr_of!((*this).job_completed_latch)) };
        result
    }

    /// Keeps the first panic; later ones are dropped (quietly: a payload whose destructor
    /// panics must not unwind past the latch decrement that follows).
    fn job_panicked(&self, payload: Box<dyn Any + Send + 'static>) {
        // Relaxed: only a shortcut; the CAS below decides who is first.
        if !self.panic.load(Ordering::Relaxed).is_null() {
            unwind::drop_quietly(payload);
            return;
        }
        let boxed = Box::into_raw(Box::new(payload));
        // Release on success publishes the payload to the owner's Acquire swap in
        // `maybe_propagate_panic`; a failed CAS reads nothing we use.
        if self
            .panic
            .compare_exchange(ptr::null_mut(), boxed, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // Another job's panic got there first.
            // SAFETY: `boxed` came from `Box::into_raw` above and was not published.
            unwind::drop_quietly(unsafe { Box::from_raw(boxed) });
        }
    }

    /// Re-raises the first panic of the body or a job, if any.
    fn maybe_propagate_panic(&self) {
        // Acquire: see the payload written by the job that published it. The latch wait
        // already synchronised with every job, so this is belt and braces.
        let panic = self.panic.swap(ptr::null_mut(), Ordering::Acquire);
        if !panic.is_null() {
            // SAFETY: a non-null pointer was published by `job_panicked` from
            // `Box::into_raw`, and the swap makes us its only owner.
            let payload = unsafe { Box::from_raw(panic) };
            unwind::resume_unwinding(*payload);
        }
    }
}

/// A scope kind's shared part.
pub(super) trait HasBase<'scope> {
    /// The [`ScopeBase`] inside this scope.
    fn base(&self) -> &ScopeBase<'scope>;
}

impl<'scope> HasBase<'scope> for Scope<'scope> {
    fn base(&self) -> &ScopeBase<'scope> {
        &self.base
    }
}

impl<'scope> HasBase<'scope> for ScopeFifo<'scope> {
    fn base(&self) -> &ScopeBase<'scope> {
        &self.base
    }
}

/// A raw pointer to a scope, moved into its jobs.
pub(super) struct ScopePtr<T>(pub(super) *const T);

impl<T> Clone for ScopePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ScopePtr<T> {}

// SAFETY: only ever dereferenced as `&Scope`, and `Scope` is `Sync`.
unsafe impl<T: Sync> Send for ScopePtr<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for ScopePtr<T> {}

impl<T> ScopePtr<T> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    pub(super) fn as_ptr(&self) -> *const T {
        self.0
    }
}
