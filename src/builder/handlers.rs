//! The builder's handlers: what runs when a job panics with no caller to catch it
//! ([`panic_handler`](ThreadPoolBuilder::panic_handler)), and when a worker starts
//! ([`start_handler`](ThreadPoolBuilder::start_handler)) or exits
//! ([`exit_handler`](ThreadPoolBuilder::exit_handler)).

use super::ThreadPoolBuilder;
use std::any::Any;

impl<S> ThreadPoolBuilder<S> {
    /// Receives panics that have no caller to go to: from `spawn`ed jobs and from the
    /// start and exit handlers. Called on the worker that caught the panic.
    ///
    /// Without a handler such a panic is reported once by the standard panic hook (when it
    /// happens) and then dropped, and the pool keeps running. **This differs from
    /// rayon-core, which aborts the process.** If the handler itself panics, that panic is
    /// reported by the hook and dropped too: no panic ever kills a worker thread.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static CAUGHT: AtomicUsize = AtomicUsize::new(0);
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .panic_handler(|_payload| { CAUGHT.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| panic!("EXPECTED-PANIC")); // no caller to re-raise it in
    /// pool.wait_idle().unwrap();
    /// assert_eq!(CAUGHT.load(Ordering::SeqCst), 1);
    /// ```
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.config.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// Runs `start_handler(index)` on each worker thread before it takes any job.
    ///
    /// # Panics
    /// A panic in the handler goes to the [`panic_handler`](Self::panic_handler); the
    /// worker still starts.
    ///
    /// ```
    /// use std::cell::Cell;
    /// thread_local! { static ID: Cell<usize> = const { Cell::new(usize::MAX) }; }
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .start_handler(|index| ID.with(|id| id.set(index * 10)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.broadcast(|_| ID.with(Cell::get)), [0, 10, 20]);
    /// ```
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.config.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Runs `exit_handler(index)` on each worker thread after the pool terminated and the
    /// worker left its loop. Never runs for the global pool, which lives for the process.
    ///
    /// # Panics
    /// A panic in the handler goes to the [`panic_handler`](Self::panic_handler).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static EXITED: AtomicUsize = AtomicUsize::new(0);
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .exit_handler(|index| { EXITED.fetch_add(index + 1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// pool.shutdown().unwrap(); // returns after every exit handler ran
    /// assert_eq!(EXITED.load(Ordering::SeqCst), 1 + 2);
    /// ```
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.config.exit_handler = Some(Box::new(exit_handler));
        self
    }
}
