//! [`ThreadPool`]'s scopes: [`scope`](ThreadPool::scope),
//! [`scope_fifo`](ThreadPool::scope_fifo), [`in_place_scope`](ThreadPool::in_place_scope)
//! and [`in_place_scope_fifo`](ThreadPool::in_place_scope_fifo), the crate's scope
//! functions aimed at this pool.

use super::ThreadPool;
use crate::scope::{do_in_place_scope, do_in_place_scope_fifo, Scope, ScopeFifo};

impl ThreadPool {
    /// [`scope`](fn@crate::scope) on this pool: same as `self.install(|| scope(op))`.
    ///
    /// # Panics
    /// As [`scope`](fn@crate::scope).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let words = ["a", "bb", "ccc"];
    /// let mut lengths = [0; 3];
    /// pool.scope(|s| {
    ///     for (len, word) in lengths.iter_mut().zip(&words) {
    ///         s.spawn(move |_| *len = word.len()); // jobs may borrow `lengths` and `words`
    ///     }
    /// });
    /// assert_eq!(lengths, [1, 2, 3]);
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope(op))
    }

    /// [`scope_fifo`](crate::scope_fifo) on this pool: same as
    /// `self.install(|| scope_fifo(op))`.
    ///
    /// # Panics
    /// As [`scope`](fn@crate::scope).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let order = &std::sync::Mutex::new(String::new());
    /// pool.scope_fifo(|s| {
    ///     for c in ['a', 'b', 'c', 'd'] {
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(c));
    ///     }
    /// });
    /// assert_eq!(*order.lock().unwrap(), "abcd"); // oldest first
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope_fifo(op))
    }

    /// [`in_place_scope`](crate::in_place_scope) whose jobs go to this pool: the body runs
    /// on the calling thread.
    ///
    /// # Panics
    /// As [`scope`](fn@crate::scope).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut on_pool = false;
    /// pool.in_place_scope(|s| {
    ///     assert_eq!(pool.current_thread_index(), None); // the body runs here
    ///     s.spawn(|_| on_pool = pool.current_thread_index().is_some()); // jobs on `pool`
    /// });
    /// assert!(on_pool);
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        do_in_place_scope(Some(&self.registry), op)
    }

    /// [`in_place_scope_fifo`](crate::in_place_scope_fifo) whose jobs go to this pool.
    ///
    /// # Panics
    /// As [`scope`](fn@crate::scope).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let input = std::rc::Rc::new(vec![1, 2, 3]); // not `Send`: the body runs here
    /// let mut doubled = vec![0; 3];
    /// pool.in_place_scope_fifo(|s| {
    ///     for (slot, &x) in doubled.iter_mut().zip(input.iter()) {
    ///         s.spawn_fifo(move |_| *slot = x * 2);
    ///     }
    /// });
    /// assert_eq!(doubled, [2, 4, 6]);
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        do_in_place_scope_fifo(Some(&self.registry), op)
    }
}
