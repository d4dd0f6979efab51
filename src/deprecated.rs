//! rayon-core's deprecated configuration API (`Configuration`, `initialize`,
//! `ThreadPool::new`), kept so that old code switching to stealpool still compiles. Each
//! item forwards to [`ThreadPoolBuilder`].
#![allow(deprecated)]

use crate::{ThreadPool, ThreadPoolBuilder};
use std::any::Any;
use std::error::Error;
use std::fmt;

/// The old name of [`ThreadPoolBuilder`] (rayon-core's deprecated `Configuration`).
///
/// ```
/// #[allow(deprecated)]
/// let pool = stealpool::Configuration::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// ```
#[deprecated(note = "use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    /// The builder every method forwards to.
    builder: ThreadPoolBuilder,
}

impl Configuration {
    /// [`ThreadPoolBuilder::new`].
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new();
    /// // Every option at its default, as for `ThreadPoolBuilder::new()`.
    /// assert!(format!("{config:?}").starts_with("ThreadPoolBuilder { num_threads: 0,"));
    /// ```
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let pool = stealpool::Configuration::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.install(|| (1..=10).sum::<i32>()), 55);
    /// ```
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().num_threads(2).thread_name(|i| format!("old-{i}"));
    /// let pool = config.build().unwrap();
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names, ["old-0", "old-1"]);
    /// ```
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.map(|b| b.thread_name(closure))
    }

    /// [`ThreadPoolBuilder::num_threads`].
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let pool = stealpool::Configuration::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    /// ```
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.map(|b| b.num_threads(num_threads))
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// static CAUGHT: AtomicBool = AtomicBool::new(false);
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().num_threads(1);
    /// let pool = config.panic_handler(|_| CAUGHT.store(true, Ordering::SeqCst)).build().unwrap();
    /// pool.spawn(|| panic!("EXPECTED-PANIC"));
    /// pool.wait_idle().unwrap();
    /// assert!(CAUGHT.load(Ordering::SeqCst));
    /// ```
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.map(|b| b.panic_handler(panic_handler))
    }

    /// [`ThreadPoolBuilder::stack_size`] (bytes).
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().stack_size(4 << 20);
    /// assert!(format!("{config:?}").contains("stack_size: Some(4194304)"));
    /// let pool = config.num_threads(1).build().unwrap();
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// ```
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.map(|b| b.stack_size(stack_size))
    }

    /// [`ThreadPoolBuilder::breadth_first`].
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().breadth_first();
    /// assert!(format!("{config:?}").contains("breadth_first: true"));
    /// ```
    pub fn breadth_first(self) -> Self {
        self.map(ThreadPoolBuilder::breadth_first)
    }

    /// [`ThreadPoolBuilder::start_handler`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static STARTED: AtomicUsize = AtomicUsize::new(0);
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().num_threads(2);
    /// let pool = config.start_handler(|_| { STARTED.fetch_add(1, Ordering::SeqCst); }).build().unwrap();
    /// pool.broadcast(|_| ()); // every worker has started and run a job
    /// assert_eq!(STARTED.load(Ordering::SeqCst), 2);
    /// ```
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.start_handler(start_handler))
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static EXITED: AtomicUsize = AtomicUsize::new(0);
    /// #[allow(deprecated)]
    /// let config = stealpool::Configuration::new().num_threads(2);
    /// let pool = config.exit_handler(|_| { EXITED.fetch_add(1, Ordering::SeqCst); }).build().unwrap();
    /// pool.shutdown().unwrap(); // returns after every exit handler ran
    /// assert_eq!(EXITED.load(Ordering::SeqCst), 2);
    /// ```
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.exit_handler(exit_handler))
    }

    /// Applies `f` to the wrapped builder.
    fn map(self, f: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: f(self.builder),
        }
    }

    /// The wrapped builder, for `initialize` and `ThreadPool::new`.
    pub(crate) fn into_builder(self) -> ThreadPoolBuilder {
        self.builder
    }
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

/// The old name of [`ThreadPoolBuilder::build_global`].
///
/// # Errors
/// As [`ThreadPoolBuilder::build_global`], boxed.
///
/// ```
/// #[allow(deprecated)]
/// let result = stealpool::initialize(stealpool::Configuration::new().num_threads(2));
/// result.unwrap();
/// assert_eq!(stealpool::current_num_threads(), 2); // the global pool
/// ```
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.into_builder().build_global().map_err(Box::from)
}

impl ThreadPool {
    /// The old way to build a pool: [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let pool = stealpool::ThreadPool::new(stealpool::Configuration::new().num_threads(2)).unwrap();
    /// assert_eq!(pool.current_num_threads(), 2);
    /// ```
    #[deprecated(note = "use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.into_builder().build().map_err(Box::from)
    }
}
