//! The lazy `join`'s private stack for the loom model (`tests/loom_join.rs`); only with
//! `--cfg loom`. Not an API. Halves are plain tokens (never executed).

use crate::job::JobRef;
use crate::join::pending::{PendingHalves, Popped};

/// One worker's private stack of `join` halves, and the tokens its pushes promoted to
/// make room (the owner's "deque").
pub struct ModelPending(PendingHalves, std::sync::Mutex<Vec<usize>>);

impl std::fmt::Debug for ModelPending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelPending").finish_non_exhaustive()
    }
}

unsafe fn never_run(_: *const ()) {
    unreachable!("model halves are never executed")
}

fn half(token: usize) -> JobRef {
    // SAFETY: the two words of a JobRef; the model never executes it.
    unsafe {
        JobRef::from_raw(
            token as *const (),
            never_run as unsafe fn(*const ()) as usize,
        )
    }
}

fn token(job: JobRef) -> usize {
    job.id().0 as usize
}

impl Default for ModelPending {
    fn default() -> Self {
        ModelPending(PendingHalves::new(), std::sync::Mutex::default())
    }
}

impl ModelPending {
    /// Owner: `join` keeps the half `token` private; returns its position. A full stack
    /// promotes its oldest halves first (see [`promoted_to_make_room`](Self::promoted_to_make_room)).
    pub fn push(&self, token: usize) -> usize {
        self.0.push(half(token), || match self.promote_oldest() {
            Some(promoted) => {
                self.1.lock().unwrap().push(promoted);
                true
            }
            None => false,
        })
    }
    /// Slots of the private stack.
    pub fn capacity(&self) -> usize {
        crate::join::pending::CAPACITY
    }
    /// The tokens that pushes promoted to make room, oldest first.
    pub fn promoted_to_make_room(&self) -> Vec<usize> {
        self.1.lock().unwrap().clone()
    }
    /// Owner: the `join` of `pos` takes its half back: `"private"` (run inline) or
    /// `"taken"` (promoted or rescued).
    pub fn pop(&self, pos: usize) -> &'static str {
        match self.0.pop(pos) {
            Popped::Private => "private",
            Popped::Taken => "taken",
        }
    }
    /// Owner: promotes the oldest private half; returns its token.
    pub fn promote_oldest(&self) -> Option<usize> {
        let mut promoted = None;
        self.0.promote_oldest(|job| promoted = Some(token(job)));
        promoted
    }
    /// Another worker: rescues the oldest private half; returns its token.
    pub fn rescue(&self) -> Option<usize> {
        self.0.rescue(|| true).map(token)
    }
}
