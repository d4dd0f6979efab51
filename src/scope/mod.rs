//! `scope`: spawn jobs that may borrow from the enclosing stack frame.
//!
//! A scope counts its outstanding jobs in a [`CountLatch`](crate::latch::CountLatch) (starting at 1 for the body)
//! and does not return until the count is zero, which is what makes borrowing sound. The
//! owner waits by executing other jobs if it is a worker, by blocking otherwise. Panics in
//! the body or in any job are captured (the first one wins), every job still runs, and the
//! panic is re-raised when the scope ends. Same contract as rayon-core's `scope`.
//!
//! [`ScopeFifo`] is the same with FIFO order among the jobs one worker spawns: each worker
//! of the pool gets a [`JobFifo`] in the scope, and the deque carries stubs that run the
//! oldest job of that FIFO (rayon-core's design). `in_place_scope` runs the body on the
//! calling thread instead of moving it onto a worker.

use crate::broadcast::BroadcastContext;
use crate::job::JobFifo;
use crate::pool::global;
use crate::pool::registry::Registry;
use crate::pool::worker::{self, WorkerThread};
use crate::sync::unchecked::Arc;
use std::fmt;

/// A fork-join scope: jobs spawned into it may borrow anything that outlives `'scope`.
///
/// Created by [`scope`] or [`ThreadPool::scope`](crate::ThreadPool::scope). It is `Sync`,
/// so jobs can spawn more jobs into the same scope.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let count = AtomicUsize::new(0);
/// stealpool::scope(|s: &stealpool::Scope<'_>| {
///     for _ in 0..4 {
///         // Each job spawns one more job into the same scope.
///         s.spawn(|s| s.spawn(|_| { count.fetch_add(1, Ordering::SeqCst); }));
///     }
/// });
/// assert_eq!(count.into_inner(), 4); // the scope waited for the inner jobs too
/// ```
pub struct Scope<'scope> {
    /// The scope's pool, latch and panic slot.
    base: ScopeBase<'scope>,
}

/// A fork-join scope whose jobs, when spawned from the same worker, start in the order
/// they were spawned (FIFO); otherwise like [`Scope`].
///
/// Created by [`scope_fifo`], [`in_place_scope_fifo`] or the `ThreadPool` methods of the
/// same names. Like rayon-core's, it has `spawn_fifo` and `spawn_broadcast` but no plain
/// `spawn`.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let (lifo, fifo) = (&std::sync::Mutex::new(Vec::new()), &std::sync::Mutex::new(Vec::new()));
/// pool.scope(|s| (0..3).for_each(|i| s.spawn(move |_| lifo.lock().unwrap().push(i))));
/// pool.scope_fifo(|s: &stealpool::ScopeFifo<'_>| {
///     (0..3).for_each(|i| s.spawn_fifo(move |_| fifo.lock().unwrap().push(i)))
/// });
/// assert_eq!(*lifo.lock().unwrap(), [2, 1, 0]); // newest first
/// assert_eq!(*fifo.lock().unwrap(), [0, 1, 2]); // oldest first
/// ```
pub struct ScopeFifo<'scope> {
    /// The scope's pool, latch and panic slot.
    base: ScopeBase<'scope>,
    /// One FIFO per worker of the scope's pool; the deques carry stubs into them.
    fifos: Vec<JobFifo>,
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
/// Called outside any pool, also panics if the global pool has to be built and cannot be
/// (see [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)). On
/// Windows, a scope whose owner is outside the pool also panics with the reason, instead
/// of hanging, if the owner holds the loader lock (a thread-local destructor) and no worker
/// has started, or the process is exiting (`docs/guarantees.md`).
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
    global::in_worker(|owner_thread, _| {
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
    global::in_worker(|owner_thread, _| {
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
    WorkerThread::with_current(|thread| {
        let scope = Scope::new(thread, registry);
        scope.base.complete(thread, || op(&scope))
    })
}

/// [`in_place_scope`] with FIFO order among jobs spawned from the same worker (see
/// [`ScopeFifo`]).
///
/// # Panics
/// As [`scope`].
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let order = &std::sync::Mutex::new(Vec::new());
/// pool.install(|| {
///     // The body runs right here, on the pool's only worker; the jobs wait their turn.
///     stealpool::in_place_scope_fifo(|s| {
///         (0..3).for_each(|i| s.spawn_fifo(move |_| order.lock().unwrap().push(i)));
///     });
/// });
/// assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
/// ```
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
    WorkerThread::with_current(|thread| {
        let scope = ScopeFifo::new(thread, registry);
        scope.base.complete(thread, || op(&scope))
    })
}

impl<'scope> Scope<'scope> {
    /// A scope as [`ScopeBase::new`] makes it.
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
    /// A worker allocates the job from its own arena of 64 KiB chunks (closures up to
    /// 512 bytes); other threads box it.
    ///
    /// # Panics
    /// A panic in `body` does not unwind here: it is captured, the remaining jobs still
    /// run, and the scope re-raises it when it ends.
    ///
    /// ```
    /// let mut squares = vec![0u64; 8];
    /// stealpool::scope(|s| {
    ///     for (i, slot) in squares.iter_mut().enumerate() {
    ///         // Each job borrows its own slot; a job may spawn more jobs through `s`.
    ///         s.spawn(move |_| *slot = (i as u64) * (i as u64));
    ///     }
    /// });
    /// assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49]);
    /// ```
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let job_ref = self.base.heap_job_ref(self, body);
        worker::inject_or_push(&self.base.registry, job_ref);
    }

    /// Runs `body` once on every worker of the scope's pool, as jobs of this scope (the
    /// scope waits for all of them). Each run receives the scope and a
    /// [`BroadcastContext`].
    ///
    /// # Panics
    /// As [`Scope::spawn`]: panics are captured and re-raised when the scope ends.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let sum = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, ctx| { sum.fetch_add(ctx.index() + 1, Ordering::SeqCst); });
    /// });
    /// assert_eq!(sum.into_inner(), 1 + 2 + 3); // each worker ran it once
    /// ```
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
    /// A scope as [`ScopeBase::new`] makes it, with one empty FIFO per worker.
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
    ///
    /// ```
    /// // One worker: the jobs it spawns start in the order they were spawned.
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// ```
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        let job_ref = self.base.heap_job_ref(self, body);
        worker::with_worker_of(&self.base.registry, |worker| match worker {
            Some(worker) => {
                // SAFETY: the FIFO lives in the scope, which outlives all its jobs and
                // so every stub (one per job).
                let stub = unsafe { self.fifos[worker.index()].push(job_ref) };
                worker.push(stub);
            }
            None => worker::inject(&self.base.registry, job_ref),
        })
    }

    /// Runs `body` once on every worker of the scope's pool, as jobs of this scope (see
    /// [`Scope::spawn_broadcast`]).
    ///
    /// # Panics
    /// As [`Scope::spawn`].
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let seen = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push(ctx.index())));
    /// let mut seen = seen.into_inner().unwrap();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1]); // once on every worker
    /// ```
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

mod base;
mod job;
#[cfg(test)]
mod test;

use base::{ScopeBase, ScopePtr};
