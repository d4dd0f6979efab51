//! A join handle and its job's completion for the loom model (`tests/loom_handle.rs`);
//! only with `--cfg loom`. Not an API. The joiner is outside any pool (it waits on the
//! handle's condvar), as for `JoinHandle::join` called from a non-worker thread.

use crate::join_handle::{HandleState, JoinHandle};
use crate::sync::unchecked::Arc;

/// The job's side: completes the handle once.
pub struct ModelCompletion<T>(Arc<HandleState<T>>);

impl<T> std::fmt::Debug for ModelCompletion<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelCompletion").finish_non_exhaustive()
    }
}

/// A handle (the real `JoinHandle`: `join`, `is_finished`, drop) and its job's side.
pub fn handle<T>() -> (JoinHandle<T>, ModelCompletion<T>) {
    let (handle, state) = JoinHandle::new_pair(None);
    (handle, ModelCompletion(state))
}

impl<T> ModelCompletion<T> {
    /// The job returned `value`.
    pub fn complete(self, value: T) {
        self.0.complete(Ok(value))
    }
}
