//! [`FnContext`]: what a closure passed to [`join_context`](crate::join_context) learns
//! about where it runs.

use std::marker::PhantomData;

/// What a closure passed to [`join_context`](crate::join_context) learns about where it
/// runs.
///
/// Not `Send`/`Sync`: it describes the current call on the current thread.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (a, b) = pool.install(|| {
///     stealpool::join_context(|ctx: stealpool::FnContext| ctx.migrated(), |_| 2 + 2)
/// });
/// assert!(!a); // the first closure ran on the calling worker
/// assert_eq!(b, 4);
/// ```
#[derive(Debug)]
pub struct FnContext {
    /// What [`FnContext::migrated`] returns.
    migrated: bool,
    /// Makes the context neither `Send` nor `Sync`.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    /// A context whose [`migrated`](FnContext::migrated) answers `migrated`.
    #[inline]
    pub(crate) fn new(migrated: bool) -> Self {
        FnContext {
            migrated,
            _marker: PhantomData,
        }
    }

    /// `true` if the closure was not run directly by the
    /// [`join_context`](crate::join_context) call on the calling worker: it was stolen by
    /// another worker, the whole call came from outside the pool (and so runs on a worker),
    /// or, rarely, the calling worker itself picked the second closure up from its deque
    /// while waiting for other work (same thread, but reported as migrated, as in
    /// rayon-core). `false` means it runs on the calling worker, called directly by
    /// `join_context`. One difference from rayon-core: after the first closure panicked, a
    /// second closure that nobody took is run directly (`false`); rayon-core runs it
    /// through its wait and reports `true`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// // On a worker, the first closure runs right there: not migrated.
    /// let (a, _) = pool.install(|| stealpool::join_context(|ctx| ctx.migrated(), |_| ()));
    /// assert!(!a);
    /// // From outside any pool, the whole call moves onto a worker: migrated.
    /// let (a, _) = stealpool::join_context(|ctx| ctx.migrated(), |_| ());
    /// assert!(a);
    /// ```
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}
