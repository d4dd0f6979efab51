//! The packed counters word of the sleep module.
//!
//! One `AtomicU64` holds three fields so that "how many are asleep" and "has new work
//! been posted" can be read and changed in one atomic step:
//!
//! | bits  | field                                    |
//! |-------|------------------------------------------|
//! | 0-15  | sleeping threads (parked on a condvar)   |
//! | 16-31 | inactive threads (idle, sleepy or asleep)|
//! | 32-63 | jobs event counter (JEC)                 |
//!
//! The JEC is even while some thread is *sleepy* and nobody posted work since; odd while
//! the pool is *active*. The layout follows rayon-core's `sleep/counters.rs`.

use crate::sync::checked::AtomicU64;
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;

/// Width in bits of each thread-count field.
const THREADS_BITS: u32 = 16;
/// Position of the sleeping-threads field (bits 0-15).
const SLEEPING_SHIFT: u32 = 0;
/// Position of the inactive-threads field (bits 16-31).
const INACTIVE_SHIFT: u32 = THREADS_BITS;
/// Position of the jobs event counter (bits 32-63).
const JEC_SHIFT: u32 = 2 * THREADS_BITS;
/// One sleeping thread, as an addend to the word.
const ONE_SLEEPING: u64 = 1 << SLEEPING_SHIFT;
/// One inactive thread, as an addend to the word.
const ONE_INACTIVE: u64 = 1 << INACTIVE_SHIFT;
/// One step of the jobs event counter, as an addend to the word.
const ONE_JEC: u64 = 1 << JEC_SHIFT;
/// A thread-count field's bits, once shifted down.
const THREADS_MASK: u64 = (1 << THREADS_BITS) - 1;

/// The largest pool the counters can describe: 65,535 threads.
pub(crate) const THREADS_MAX: usize = THREADS_MASK as usize;

/// A snapshot of the jobs event counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobsEventCounter(u64);

impl JobsEventCounter {
    /// A value no real counter snapshot compares equal to in practice.
    pub(crate) const DUMMY: JobsEventCounter = JobsEventCounter(u64::MAX);

    /// Even: a thread announced it is sleepy and no work was posted since.
    #[inline]
    pub(crate) fn is_sleepy(self) -> bool {
        self.0 & 1 == 0
    }

    /// Odd: work was posted since the last thread got sleepy.
    #[inline]
    pub(crate) fn is_active(self) -> bool {
        !self.is_sleepy()
    }
}

/// The atomic word.
#[derive(Debug)]
pub(crate) struct AtomicCounters {
    /// On a cache line of its own: every idle transition writes it and every push reads
    /// it, so it must not share a line with the registry's read-mostly fields (the
    /// stealers' vector, the handlers), whose readers would miss on each of those writes.
    value: CachePadded<AtomicU64>,
}

/// A snapshot of the word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counters {
    /// The packed fields, laid out as in the module's table.
    word: u64,
}

impl Counters {
    /// The jobs event counter.
    #[inline]
    pub(crate) fn jobs_counter(self) -> JobsEventCounter {
        JobsEventCounter(self.word >> JEC_SHIFT)
    }

    /// Threads that are idle, sleepy or sleeping.
    #[inline]
    pub(crate) fn inactive_threads(self) -> usize {
        ((self.word >> INACTIVE_SHIFT) & THREADS_MASK) as usize
    }

    /// Whether any thread is idle, sleepy or sleeping: `inactive_threads() > 0` as one
    /// masked test of the word.
    #[inline]
    pub(crate) fn any_inactive(self) -> bool {
        self.word & (THREADS_MASK << INACTIVE_SHIFT) != 0
    }

    /// Threads parked on their condvar.
    #[inline]
    pub(crate) fn sleeping_threads(self) -> usize {
        ((self.word >> SLEEPING_SHIFT) & THREADS_MASK) as usize
    }

    /// Threads looking for work but not parked: they will see new work without a wake-up.
    #[inline]
    pub(crate) fn awake_but_idle_threads(self) -> usize {
        debug_assert!(self.sleeping_threads() <= self.inactive_threads());
        self.inactive_threads() - self.sleeping_threads()
    }
}

impl AtomicCounters {
    /// All fields zero: no thread inactive or sleeping, the JEC even.
    pub(crate) fn new() -> Self {
        AtomicCounters {
            value: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// Loads the word.
    #[inline]
    pub(crate) fn load(&self, ordering: Ordering) -> Counters {
        Counters {
            word: self.value.load(ordering),
        }
    }

    /// Replaces the word with `new` if it still equals `old`; returns whether it did.
    #[inline]
    fn try_exchange(&self, old: Counters, new: Counters) -> bool {
        self.value
            .compare_exchange(old.word, new.word, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// A worker starts looking for work.
    #[inline]
    pub(crate) fn add_inactive_thread(&self) {
        self.value.fetch_add(ONE_INACTIVE, Ordering::SeqCst);
    }

    /// A worker in an isolated wait parks (`Sleep::park_isolated`): it counts as inactive
    /// and sleeping at once, as a parked searcher does, so that a lazy `join`'s poll sees
    /// it. Returns the counters after the change.
    #[inline]
    pub(crate) fn add_isolated_sleeper(&self) -> Counters {
        let old = self
            .value
            .fetch_add(ONE_INACTIVE + ONE_SLEEPING, Ordering::SeqCst);
        Counters {
            word: old + ONE_INACTIVE + ONE_SLEEPING,
        }
    }

    /// Increments the JEC if `increment_when` holds for its current value; returns the
    /// counters after the (possible) increment.
    #[inline]
    pub(crate) fn increment_jobs_event_counter_if(
        &self,
        increment_when: impl Fn(JobsEventCounter) -> bool,
    ) -> Counters {
        loop {
            let old = self.load(Ordering::SeqCst);
            if !increment_when(old.jobs_counter()) {
                return old;
            }
            // Wrapping: the JEC lives in the top bits and may roll over (docs/sleep.md).
            let new = Counters {
                word: old.word.wrapping_add(ONE_JEC),
            };
            if self.try_exchange(old, new) {
                return new;
            }
        }
    }

    /// Reads the word with a read-modify-write that changes nothing (`fetch_add(0)`): an
    /// injector that is about to wake no sleeper, counting on a searching worker to find
    /// its job, decides on this value. Being a write in the word's modification order
    /// (SeqCst, so a release), it orders the injector's push before the look of the last
    /// searcher, whose decrement follows it there; a searcher whose decrement precedes
    /// it is no longer counted as searching in the value returned (docs/sleep.md, "When
    /// P wakes nobody").
    #[inline]
    pub(crate) fn count_on_searchers(&self) -> Counters {
        Counters {
            word: self.value.fetch_add(0, Ordering::SeqCst),
        }
    }

    /// A worker found work: it is no longer inactive. Returns the counters as they were
    /// before (the caller decides whether to wake a sleeper: "the last searcher wakes one").
    #[inline]
    pub(crate) fn sub_inactive_thread(&self) -> Counters {
        let old = Counters {
            word: self.value.fetch_sub(ONE_INACTIVE, Ordering::SeqCst),
        };
        debug_assert!(old.inactive_threads() > 0);
        debug_assert!(old.sleeping_threads() <= old.inactive_threads());
        old
    }

    /// A sleeper is woken (by its waker) or backs out of sleeping (by itself).
    #[inline]
    pub(crate) fn sub_sleeping_thread(&self) {
        let old = Counters {
            word: self.value.fetch_sub(ONE_SLEEPING, Ordering::SeqCst),
        };
        debug_assert!(old.sleeping_threads() > 0);
    }

    /// Registers one more sleeper, but only if the counters still equal `old`, the value
    /// the caller read after it got sleepy: then the JEC did not move (nobody posted
    /// work since). Returns `false` if any field moved; the caller reads them again.
    #[inline]
    pub(crate) fn try_add_sleeping_thread(&self, old: Counters) -> bool {
        debug_assert!(old.inactive_threads() > 0);
        debug_assert!(old.sleeping_threads() < THREADS_MAX);
        let new = Counters {
            word: old.word + ONE_SLEEPING,
        };
        self.try_exchange(old, new)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn fields_are_independent() {
        let c = AtomicCounters::new();
        c.add_inactive_thread();
        c.add_inactive_thread();
        let snap = c.load(Ordering::SeqCst);
        assert_eq!(snap.inactive_threads(), 2);
        assert_eq!(snap.sleeping_threads(), 0);
        assert!(snap.jobs_counter().is_sleepy());
        assert!(c.try_add_sleeping_thread(snap));
        let snap = c.load(Ordering::SeqCst);
        assert_eq!(snap.sleeping_threads(), 1);
        assert_eq!(snap.awake_but_idle_threads(), 1);
        // A stale snapshot no longer matches.
        let stale = Counters { word: 0 };
        assert!(!c.try_add_sleeping_thread(Counters {
            word: stale.word + ONE_INACTIVE
        }));
        assert_eq!(c.sub_inactive_thread().sleeping_threads(), 1);
        c.sub_sleeping_thread();
        let snap = c.load(Ordering::SeqCst);
        assert_eq!((snap.inactive_threads(), snap.sleeping_threads()), (1, 0));
    }

    #[test]
    fn jec_increments_only_when_asked() {
        let c = AtomicCounters::new();
        // Even (sleepy) -> increment to odd.
        let after = c.increment_jobs_event_counter_if(JobsEventCounter::is_sleepy);
        assert!(after.jobs_counter().is_active());
        // Odd: "if sleepy" does nothing.
        let again = c.increment_jobs_event_counter_if(JobsEventCounter::is_sleepy);
        assert_eq!(again.jobs_counter(), after.jobs_counter());
        // Getting sleepy turns it even again.
        let sleepy = c.increment_jobs_event_counter_if(JobsEventCounter::is_active);
        assert!(sleepy.jobs_counter().is_sleepy());
        assert_ne!(sleepy.jobs_counter(), after.jobs_counter());
    }

    #[test]
    fn counting_on_searchers_reads_the_word_and_changes_nothing() {
        let c = AtomicCounters::new();
        c.add_inactive_thread();
        c.add_inactive_thread();
        assert!(c.try_add_sleeping_thread(c.load(Ordering::SeqCst)));
        let before = c.load(Ordering::SeqCst).word;
        let read = c.count_on_searchers();
        assert_eq!(read.word, before);
        assert_eq!(read.awake_but_idle_threads(), 1);
        assert_eq!(c.load(Ordering::SeqCst).word, before);
    }

    #[test]
    fn jec_wraps_without_touching_thread_fields() {
        let c = AtomicCounters {
            value: CachePadded::new(AtomicU64::new(
                (u64::MAX << JEC_SHIFT) | ONE_INACTIVE | ONE_SLEEPING,
            )),
        };
        let after = c.increment_jobs_event_counter_if(|_| true);
        assert_eq!(after.jobs_counter(), JobsEventCounter(0));
        assert_eq!(after.inactive_threads(), 1);
        assert_eq!(after.sleeping_threads(), 1);
    }
}
