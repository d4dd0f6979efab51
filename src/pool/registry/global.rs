//! The global pool: built lazily on first use, or once by `build_global`.

use super::Registry;
use crate::pool::build_error::{ErrorKind, ThreadPoolBuildError};
use crate::pool::config::Config;
use crate::pool::spawn_handler::ThreadSpawn;
use crate::sync::unchecked::{Arc, OnceLock};

/// The global pool's registry, once built.
static THE_REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();

/// The global pool's registry, built with the default builder on first use.
///
/// # Panics
/// If the global pool cannot be built (e.g. the OS refuses to start threads, or
/// `STEALPOOL_NUM_THREADS` is not a number). rayon-core panics here too.
pub(crate) fn global_registry() -> &'static Arc<Registry> {
    THE_REGISTRY.get_or_init(|| {
        // The default builder runs no user code, so this cannot re-enter `get_or_init`.
        Registry::new(Config::default(), true).unwrap_or_else(|err| {
            panic!("stealpool: the global thread pool could not be built: {err}")
        })
    })
}

/// Builds the global pool from `config` (for `build_global`).
///
/// The registry is built *before* it is offered to the `OnceLock`, with no lock held, so
/// user code in the builder (a `thread_name` closure) may call free functions: if one of
/// them builds the default global pool first, this returns "already initialized" and the
/// registry built here is terminated.
pub(crate) fn init_global_registry<S: ThreadSpawn>(
    config: Config<S>,
) -> Result<(), ThreadPoolBuildError> {
    let already = || {
        Err(ThreadPoolBuildError::new(
            ErrorKind::GlobalPoolAlreadyInitialized,
        ))
    };
    if THE_REGISTRY.get().is_some() {
        return already();
    }
    let mut candidate = Some(Registry::new(config, true)?);
    let registry = THE_REGISTRY.get_or_init(|| candidate.take().expect("offered once"));
    match candidate {
        None => {
            registry.adopt_current_thread();
            registry.wait_until_primed();
            Ok(())
        }
        Some(lost) => {
            // Someone else initialised the global pool meanwhile: stop our workers.
            lost.terminate();
            already()
        }
    }
}

/// Terminates a half-built registry if building it fails or panics.
pub(super) struct Terminator<'a>(pub(super) &'a Arc<Registry>);

impl Drop for Terminator<'_> {
    fn drop(&mut self) {
        self.0.terminate();
    }
}
