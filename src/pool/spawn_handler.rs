//! How a builder starts its worker threads: the sealed [`ThreadSpawn`] and its two
//! implementations, [`DefaultSpawn`] and [`CustomSpawn`].

use crate::pool::worker::ThreadBuilder;
use std::fmt;
use std::io;
use std::thread;

/// How a builder starts worker threads. Sealed: only [`DefaultSpawn`] and
/// [`CustomSpawn`] implement it, and neither can be named outside this crate; they appear
/// only as `ThreadPoolBuilder`'s type parameter (rayon-core's `ThreadSpawn`).
///
/// ```
/// // `ThreadPoolBuilder<DefaultSpawn>`: stealpool starts the threads.
/// let default = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// // `ThreadPoolBuilder<CustomSpawn<_>>`: the closure starts them.
/// let custom = stealpool::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .spawn_handler(|thread| std::thread::Builder::new().spawn(|| thread.run()).map(drop))
///     .build()
///     .unwrap();
/// assert_eq!(default.install(|| 1) + custom.install(|| 2), 3);
/// ```
#[allow(unreachable_pub)]
pub trait ThreadSpawn: private::Sealed {
    /// Starts a thread that calls `thread.run()`; returns its handle if it has one.
    #[doc(hidden)]
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<thread::JoinHandle<()>>>;
}

/// Seals [`ThreadSpawn`]: the trait is public, but only this crate can implement it.
mod private {
    /// The supertrait of [`ThreadSpawn`](super::ThreadSpawn) that outside crates cannot name.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// Starts workers with `std::thread::Builder` (name and stack size, in bytes, from the
/// builder), keeping their join handles for `ThreadPool::shutdown` (rayon-core's
/// `DefaultSpawn`).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
/// static DROPS: AtomicUsize = AtomicUsize::new(0);
/// struct Guard;
/// impl Drop for Guard { fn drop(&mut self) { DROPS.fetch_add(1, SeqCst); } }
/// thread_local! { static GUARD: Guard = const { Guard }; }
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.broadcast(|_| GUARD.with(|_| ()));
/// pool.shutdown().unwrap(); // joins the threads: their thread-locals were dropped
/// assert_eq!(DROPS.load(SeqCst), 2);
/// ```
#[derive(Debug, Default)]
#[allow(unreachable_pub)]
pub struct DefaultSpawn;

impl private::Sealed for DefaultSpawn {}

impl ThreadSpawn for DefaultSpawn {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<thread::JoinHandle<()>>> {
        thread.std_builder().spawn(move || thread.run()).map(Some)
    }
}

/// Starts workers with the application's closure (see
/// [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler); rayon-core's `CustomSpawn`). A closure's `Err`
/// becomes the build error.
///
/// ```
/// let result = stealpool::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .spawn_handler(|_thread| Err(std::io::Error::other("no threads today")))
///     .build();
/// let err = result.unwrap_err();
/// assert_eq!(err.to_string(), "no threads today");
/// assert!(std::error::Error::source(&err).is_some()); // the `io::Error`
/// ```
#[allow(unreachable_pub)]
pub struct CustomSpawn<F>(pub(crate) F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn(<closure>)")
    }
}

impl<F> private::Sealed for CustomSpawn<F> where F: FnMut(ThreadBuilder) -> io::Result<()> {}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<thread::JoinHandle<()>>> {
        (self.0)(thread).map(|()| None)
    }
}
