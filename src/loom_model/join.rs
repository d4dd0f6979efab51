//! The lazy `join`'s private stack for the loom model (`tests/loom_join.rs`); only with
//! `--cfg loom`. Not an API. Halves are real stack jobs, named by tokens, never executed.

use crate::job::{JobRef, JoinHalf, StackJob};
use crate::latch::{JoinLatch, LatchOwner};
use crate::pool::private_stack::{Popped, PrivateStack};
use crate::sleep::Sleep;
use crate::sync::barrier::CheckedLight;
use crate::sync::unchecked::Arc;
use std::collections::HashMap;
use std::sync::Mutex;

/// A half of the model: never run, only moved between the stack and its takers.
type Half = StackJob<JoinLatch, fn(bool), ()>;

/// The model's halves by token, boxed: their addresses are what the stack keeps.
struct Halves(HashMap<usize, Box<Half>>);

// SAFETY: a `Half` is only a closure pointer, an unused result and a latch whose owner
// pointer targets the model's own `LatchOwner` (which is `Sync`); the halves are only
// reached through the mutex around this map, or through the stack, as in a real pool.
unsafe impl Send for Halves {}

/// One worker's private stack of `join` halves, the tokens its pushes promoted to make
/// room (the owner's "deque"), and the halves themselves.
pub struct ModelPending {
    /// The private stack under test (owned by worker 0 of a one-worker sleep state).
    stack: PrivateStack,
    /// The tokens that pushes promoted to make room, oldest first.
    promoted: Mutex<Vec<usize>>,
    /// The halves, by token.
    halves: Mutex<Halves>,
}

impl std::fmt::Debug for ModelPending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelPending").finish_non_exhaustive()
    }
}

/// The closure of every model half: never called.
fn never_run(_: bool) {
    unreachable!("model halves are never executed")
}

impl Default for ModelPending {
    fn default() -> Self {
        ModelPending {
            stack: PrivateStack::new(
                LatchOwner {
                    sleep: Arc::new(Sleep::new(1)),
                    index: 0,
                },
                true,
            ),
            promoted: Mutex::default(),
            halves: Mutex::new(Halves(HashMap::new())),
        }
    }
}

impl ModelPending {
    /// The half named `token` (made on first use; it stays until the model ends).
    fn half(&self, token: usize) -> JoinHalf {
        let mut halves = self.halves.lock().unwrap();
        let half = halves.0.entry(token).or_insert_with(|| {
            Box::new(StackJob::new(
                never_run as fn(bool),
                JoinLatch::new_unwritten(),
            ))
        });
        // SAFETY: the box lives in `self.halves` until the model ends, after every stack
        // operation, and the half is never run.
        unsafe { half.as_join_half() }
    }

    /// The token of a half the stack handed out; checks that its latch was written.
    fn token(&self, job: JobRef) -> usize {
        let pointer = job.id().0;
        let halves = self.halves.lock().unwrap();
        let (token, half) = (halves.0.iter())
            .find(|(_, half)| std::ptr::eq(pointer, (&***half as *const Half).cast()))
            .expect("a half the model pushed");
        // SAFETY: the stack wrote the latch when it handed the half out, under its lock
        // and on this thread (the caller's promotion or rescue).
        let latch = unsafe { half.latch.core_latch() };
        assert!(
            !latch.probe(),
            "a half handed out has its latch written, unset"
        );
        *token
    }
}

impl ModelPending {
    /// Owner: `join` keeps the half `token` private; returns its position. A full stack
    /// promotes its oldest halves first (see [`promoted_to_make_room`](Self::promoted_to_make_room)).
    pub fn push(&self, token: usize) -> usize {
        self.stack
            .push(self.half(token), || match self.promote_oldest() {
                Some(promoted) => {
                    self.promoted.lock().unwrap().push(promoted);
                    true
                }
                None => false,
            })
    }
    /// Slots of the private stack.
    pub fn capacity(&self) -> usize {
        crate::pool::private_stack::CAPACITY
    }
    /// The tokens that pushes promoted to make room, oldest first.
    pub fn promoted_to_make_room(&self) -> Vec<usize> {
        self.promoted.lock().unwrap().clone()
    }
    /// Owner: the `join` of `pos` takes its half back: `"private"` (run inline) or
    /// `"taken"` (promoted or rescued).
    pub fn pop(&self, pos: usize) -> &'static str {
        // The checked path's barrier (the `join` frame model, `join_steal`, runs the fast
        // path's).
        match self.stack.pop(pos, CheckedLight) {
            Popped::Private => "private",
            Popped::Taken => "taken",
        }
    }
    /// Owner: promotes the oldest private half; returns its token.
    pub fn promote_oldest(&self) -> Option<usize> {
        let mut promoted = None;
        self.stack
            .promote_oldest(|job| promoted = Some(self.token(job)));
        promoted
    }
    /// Another worker: rescues the oldest private half; returns its token.
    pub fn rescue(&self) -> Option<usize> {
        self.stack.rescue(|| true).map(|job| self.token(job))
    }
}
