//! `scope`: spawn jobs that may borrow from the enclosing stack frame.
//!
//! A scope counts its outstanding jobs in a [`CountLatch`] (starting at 1 for the body)
//! and does not return until the count is zero, which is what makes borrowing sound. The
//! owner waits by executing other jobs if it is a worker, by blocking otherwise. Panics in
//! the body or in any job are captured (the first one wins), every job still runs, and the
//! panic is re-raised when the scope ends. Same contract as rayon-core's `scope`.
//!
//! [`ScopeFifo`] is the same with FIFO order among the jobs one worker spawns: each worker
//! of the pool gets a [`JobFifo`] in the scope, and the deque carries stubs that run the
//! oldest job of that FIFO (rayon-core's design). `in_place_scope` runs the body on the
//! calling thread instead of moving it onto a worker.

use crate::broadcast::{take_terminate_references, BroadcastContext};
use crate::job::{HeapJob, JobFifo, JobRef, ScopeHeapJob};
use crate::latch::{CountLatch, Latch};
use crate::registry::{self, Registry};
use crate::sync::Arc;
use crate::sync::{AtomicPtr, Ordering};
use crate::unwind;
use crate::worker::WorkerThread;
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;

/// A fork-join scope: jobs spawned into it may borrow anything that outlives `'scope`.
///
/// Created by [`scope`] or [`ThreadPool::scope`](crate::ThreadPool::scope). It is `Sync`,
/// so jobs can spawn more jobs into the same scope.
pub struct Scope<'scope> {
    base: ScopeBase<'scope>,
}

/// A fork-join scope whose jobs, when spawned from the same worker, start in the order
/// they were spawned (FIFO); otherwise like [`Scope`].
///
/// Created by [`scope_fifo`], [`in_place_scope_fifo`] or the `ThreadPool` methods of the
/// same names. Like rayon-core's, it has `spawn_fifo` and `spawn_broadcast` but no plain
/// `spawn`.
pub struct ScopeFifo<'scope> {
    base: ScopeBase<'scope>,
    /// One FIFO per worker of the scope's pool; the deques carry stubs into them.
    fifos: Vec<JobFifo>,
}

struct ScopeBase<'scope> {
    /// The pool that spawned jobs go to.
    registry: Arc<Registry>,
    /// The first panic captured in the body or a job, re-raised at the end.
    panic: AtomicPtr<Box<dyn Any + Send + 'static>>,
    /// Outstanding jobs, plus one for the body.
    job_completed_latch: CountLatch,
    /// Makes `'scope` invariant, so a scope cannot be shortened to accept shorter borrows.
    #[allow(clippy::type_complexity)]
    marker: PhantomData<Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>>,
}

/// Creates a scope, runs `op` in it on a worker of the current pool (the global pool if
/// the caller is not a worker), and returns once `op` and every job spawned into the scope
/// have finished.
///
/// Outside a pool the caller blocks; on a worker it keeps executing other jobs while it
/// waits.
///
/// # Panics
/// If `op` or any spawned job panics, the scope still waits for every job, then re-raises
/// one of the panics (the first captured) in the caller.
///
/// ```
/// let mut left = 0;
/// let mut right = 0;
/// stealpool::scope(|s| {
///     s.spawn(|_| left = 1);
///     s.spawn(|_| right = 2);
/// });
/// assert_eq!((left, right), (1, 2));
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    registry::in_worker(|owner_thread, _| {
        let scope = Scope::new(Some(owner_thread), None);
        scope.base.complete(Some(owner_thread), || op(&scope))
    })
}

/// Like [`scope`], but jobs spawned from the same worker start in FIFO order relative to
/// each other (see [`ScopeFifo`]).
///
/// # Panics
/// As [`scope`].
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let order = std::sync::Mutex::new(Vec::new());
/// pool.scope_fifo(|s| {
///     for i in 0..3 {
///         let order = &order;
///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///     }
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    registry::in_worker(|owner_thread, _| {
        let scope = ScopeFifo::new(Some(owner_thread), None);
        scope.base.complete(Some(owner_thread), || op(&scope))
    })
}

/// Like [`scope`], but the body `op` runs on the **calling** thread (so it need not be
/// `Send`); only the spawned jobs go to the pool: the pool the caller is a worker of, else
/// the global pool. The caller then waits for them: a worker keeps executing jobs of its
/// own pool, any other thread blocks.
///
/// # Panics
/// As [`scope`].
///
/// ```
/// let not_send = std::rc::Rc::new(5);
/// let mut x = 0;
/// let slot = &mut x;
/// stealpool::in_place_scope(|s| {
///     let v = *not_send; // the body may use non-Send data
///     s.spawn(move |_| *slot = v);
/// });
/// assert_eq!(x, 5);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    do_in_place_scope(None, op)
}

/// The body of `in_place_scope` and `ThreadPool::in_place_scope`.
pub(crate) fn do_in_place_scope<'scope, OP, R>(registry: Option<&Arc<Registry>>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let thread = WorkerThread::current();
    let scope = Scope::new(thread, registry);
    scope.base.complete(thread, || op(&scope))
}

/// [`in_place_scope`] with FIFO order among jobs spawned from the same worker (see
/// [`ScopeFifo`]).
///
/// # Panics
/// As [`scope`].
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    do_in_place_scope_fifo(None, op)
}

/// The body of `in_place_scope_fifo` and `ThreadPool::in_place_scope_fifo`.
pub(crate) fn do_in_place_scope_fifo<'scope, OP, R>(registry: Option<&Arc<Registry>>, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let thread = WorkerThread::current();
    let scope = ScopeFifo::new(thread, registry);
    scope.base.complete(thread, || op(&scope))
}

impl<'scope> Scope<'scope> {
    fn new(owner: Option<&WorkerThread>, registry: Option<&Arc<Registry>>) -> Self {
        Scope {
            base: ScopeBase::new(owner, registry),
        }
    }

    /// Spawns `body` into the scope. It runs on some worker of the scope's pool, possibly
    /// in parallel with the body and other jobs, and may borrow anything that outlives
    /// `'scope`. It receives the scope, so it can spawn more jobs.
    ///
    /// Spawned from a worker of the scope's pool the job goes on that worker's deque
    /// (LIFO for the owner, stealable by others); from any other thread it is injected.
    /// Each job is one heap allocation.
    ///
    /// # Panics
    /// A panic in `body` does not unwind here: it is captured, the remaining jobs still
    /// run, and the scope re-raises it when it ends.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let job_ref = self.base.heap_job_ref(self, body);
        self.base.registry.inject_or_push(job_ref);
    }

    /// Runs `body` once on every worker of the scope's pool, as jobs of this scope (the
    /// scope waits for all of them). Each run receives the scope and a
    /// [`BroadcastContext`].
    ///
    /// # Panics
    /// As [`Scope::spawn`]: panics are captured and re-raised when the scope ends.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let scope_ptr = ScopePtr(self);
        self.base.spawn_broadcast(move |ctx| {
            // SAFETY: called from a job of this scope, which keeps the scope alive.
            body(unsafe { &*scope_ptr.as_ptr() }, ctx)
        });
    }
}

impl<'scope> ScopeFifo<'scope> {
    fn new(owner: Option<&WorkerThread>, registry: Option<&Arc<Registry>>) -> Self {
        let base = ScopeBase::new(owner, registry);
        let fifos = (0..base.registry.num_threads())
            .map(|_| JobFifo::new())
            .collect();
        ScopeFifo { base, fifos }
    }

    /// Spawns `body` into the scope, like [`Scope::spawn`], but jobs spawned from the same
    /// worker start in FIFO order relative to each other. From a thread that is not a
    /// worker of the scope's pool the job is injected (the injector is FIFO too).
    ///
    /// # Panics
    /// As [`Scope::spawn`].
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        let job_ref = self.base.heap_job_ref(self, body);
        match self.base.registry.current_worker() {
            Some(worker) => {
                // SAFETY: the FIFO lives in the scope, which outlives all its jobs and so
                // every stub (one per job).
                let stub = unsafe { self.fifos[worker.index()].push(job_ref) };
                worker.push(stub);
            }
            None => self.base.registry.inject(job_ref),
        }
    }

    /// Runs `body` once on every worker of the scope's pool, as jobs of this scope (see
    /// [`Scope::spawn_broadcast`]).
    ///
    /// # Panics
    /// As [`Scope::spawn`].
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let scope_ptr = ScopePtr(self);
        self.base.spawn_broadcast(move |ctx| {
            // SAFETY: called from a job of this scope, which keeps the scope alive.
            body(unsafe { &*scope_ptr.as_ptr() }, ctx)
        });
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("pool_threads", &self.base.registry.num_threads())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo")
            .field("pool_threads", &self.base.registry.num_threads())
            .finish_non_exhaustive()
    }
}

impl<'scope> ScopeBase<'scope> {
    fn new(owner: Option<&WorkerThread>, registry: Option<&Arc<Registry>>) -> Self {
        let registry = match (registry, owner) {
            (Some(registry), _) => Arc::clone(registry),
            (None, Some(owner)) => Arc::clone(owner.registry()),
            (None, None) => Arc::clone(registry::global_registry()),
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
    fn heap_job_ref<S, BODY>(&self, scope: &S, body: BODY) -> JobRef
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
        let arena = WorkerThread::current().map(WorkerThread::job_arena);
        // SAFETY: the job borrows only data outliving `'scope`, the scope waits for the
        // job to finish before `'scope` ends, and the deque or injector it goes to runs
        // it once.
        unsafe { ScopeHeapJob::new_job_ref(func, arena) }
    }

    /// One job of this scope per worker of its pool, each running `body` with its
    /// broadcast context.
    ///
    /// Every job owns an `Arc` of `body` and drops it *inside* the job, before the latch
    /// decrement, so the last copy of `body` (which may borrow `'scope` data) is dropped
    /// before the scope can end.
    fn spawn_broadcast<BODY>(&self, body: BODY)
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
        self.registry.inject_broadcast(job_refs);
        drop(body);
    }

    /// Runs the body as the scope's first "job", waits for every job, re-raises a panic.
    fn complete<R>(&self, owner: Option<&WorkerThread>, func: impl FnOnce() -> R) -> R {
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

    /// # Safety
    /// As [`ScopeBase::execute_job`]. A raw pointer, not `&self`: a reference would
    /// assert the scope stays alive until the function returns, which the owner does not
    /// promise once the latch is set.
    /// Runs a job spawned into this scope on a worker; its count-down is left to the
    /// worker, which delivers it later, together with those of the same scope's jobs it
    /// runs next (`worker::count_down`).
    ///
    /// # Safety
    /// `this` is alive until this job counted down.
    unsafe fn execute_spawned(this: *const Self, func: impl FnOnce()) {
        // SAFETY: not counted down yet, so the scope is alive.
        let latch = unsafe { ptr::addr_of!((*this).job_completed_latch) };
        let Some(worker) = WorkerThread::current() else {
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
    }

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

/// A raw pointer to a scope, moved into its jobs.
/// A scope kind's shared part.
trait HasBase<'scope> {
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

struct ScopePtr<T>(*const T);

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
    fn as_ptr(&self) -> *const T {
        self.0
    }
}

#[cfg(test)]
mod test;
