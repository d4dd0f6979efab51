//! An isolation region's queue and its waiters' park for the loom model
//! (`tests/loom_isolate.rs`); only with `--cfg loom`. Not an API.

use super::sleep::{ModelLatch, ModelSleep};
use crate::job::{Job, JobRef};
use crate::pool::region::Region;
use crate::sync::checked::AtomicBool;
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;

/// A region whose jobs are tokens: a job is its number, which the taker reads back.
pub struct ModelRegion(Arc<Region>);

/// A token job: never run, only handed out and read back (sized, so that token `n` is
/// `n` tokens past the base).
#[allow(dead_code)] // only its size and alignment matter
struct Token(u64);

impl Job for Token {
    unsafe fn execute(_: *const ()) {}
}

impl std::fmt::Debug for ModelRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRegion").finish_non_exhaustive()
    }
}

/// Token `n` as a job reference (its address is `n` tokens past a dangling base; it is
/// compared, never dereferenced).
fn token(n: usize) -> JobRef {
    let base = std::ptr::NonNull::<Token>::dangling().as_ptr();
    // SAFETY: the token is never executed, only compared (`number`).
    unsafe { JobRef::new(base.wrapping_add(n)) }
}

/// The number of the token `job`.
fn number(job: JobRef) -> usize {
    let base = std::ptr::NonNull::<Token>::dangling().as_ptr();
    (job.id().0 as usize - base as usize) / std::mem::size_of::<Token>()
}

impl ModelRegion {
    /// An empty region of the pool whose sleep state is `sleep`.
    pub fn new(sleep: &ModelSleep) -> Self {
        ModelRegion(Region::new(sleep.sleep().clone(), None))
    }

    /// A region nested in this one, of the same pool (an `isolate` inside it, or a `join`
    /// half of a pool that isolates every job).
    pub fn nested(&self, sleep: &ModelSleep) -> Self {
        ModelRegion(Region::new(sleep.sleep().clone(), Some(self.0.clone())))
    }

    /// A worker of the region hands out job `n` (`Region::push`, which wakes the
    /// region's parked waiters).
    pub fn push(&self, n: usize) {
        self.0.push(token(n));
    }

    /// Worker `index` waits inside the region until `latch` is set or it took a job of
    /// the region, parking when there is none (`WorkerThread::wait_isolated`'s loop,
    /// without the spin). Returns the job it took, if any.
    pub fn wait(&self, sleep: &ModelSleep, index: usize, latch: &ModelLatch) -> Option<usize> {
        loop {
            if latch.probe() {
                return None;
            }
            if let Some((_, job)) = self.0.take_for_waiter(index) {
                return Some(number(job));
            }
            sleep.sleep().park_isolated(
                index,
                latch.core(),
                sleep.counters(index),
                || self.0.register_parked(index),
                || false,
                || self.0.unregister_parked(index),
                || false,
            );
        }
    }

    /// [`wait`](Self::wait) for a waiter that may also rescue a private `join` half of a
    /// worker in the region, modelled by `private` (set by the owner's push, taken with a
    /// compare-exchange as the rescue's claim under the stack's lock): the last look after
    /// the heavy barrier reads it. Returns the job taken from the region's queue, or
    /// `RESCUED`.
    pub fn wait_or_rescue(
        &self,
        sleep: &ModelSleep,
        index: usize,
        latch: &ModelLatch,
        private: &AtomicBool,
    ) -> Option<usize> {
        loop {
            if latch.probe() {
                return None;
            }
            if let Some((_, job)) = self.0.take_for_waiter(index) {
                return Some(number(job));
            }
            if private
                .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Some(RESCUED);
            }
            sleep.sleep().park_isolated(
                index,
                latch.core(),
                sleep.counters(index),
                || self.0.register_parked(index),
                || private.load(Ordering::Acquire),
                || self.0.unregister_parked(index),
                || false,
            );
        }
    }
}

/// What [`ModelRegion::wait_or_rescue`] returns for a rescued half.
pub const RESCUED: usize = usize::MAX;
