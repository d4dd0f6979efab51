//! rayon-core's deprecated configuration API (`Configuration`, `initialize`,
//! `ThreadPool::new`), kept so that old code switching to stealpool still compiles. Each
//! item forwards to [`ThreadPoolBuilder`].
#![allow(deprecated)]

use crate::{ThreadPool, ThreadPoolBuilder};
use std::any::Any;
use std::error::Error;
use std::fmt;

/// The old name of [`ThreadPoolBuilder`] (rayon-core's deprecated `Configuration`).
#[deprecated(note = "use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl Configuration {
    /// [`ThreadPoolBuilder::new`].
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.map(|b| b.thread_name(closure))
    }

    /// [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.map(|b| b.num_threads(num_threads))
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.map(|b| b.panic_handler(panic_handler))
    }

    /// [`ThreadPoolBuilder::stack_size`] (bytes).
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.map(|b| b.stack_size(stack_size))
    }

    /// [`ThreadPoolBuilder::breadth_first`].
    pub fn breadth_first(self) -> Self {
        self.map(ThreadPoolBuilder::breadth_first)
    }

    /// [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.start_handler(start_handler))
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.exit_handler(exit_handler))
    }

    fn map(self, f: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: f(self.builder),
        }
    }

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
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.into_builder().build_global().map_err(Box::from)
}

impl ThreadPool {
    /// The old way to build a pool: [`ThreadPoolBuilder::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    #[deprecated(note = "use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.into_builder().build().map_err(Box::from)
    }
}
