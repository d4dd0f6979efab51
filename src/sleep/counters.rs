//! The packed counters word of the sleep module.
//!
//! One `AtomicU64` holds three fields so that "how many are asleep" and "has new work
//! been posted" can be read and changed in one atomic step:
//!
//! | bits  | field                                    |
//! |-------|------------------------------------------|
//! | 0-15  | sleeping threads (parked on a condvar)   |
//! | 16-31 | inactive threads (idle, sleepy or asleep)|
//! | 32    | searchers counted on (see below)         |
//! | 33-63 | jobs event counter (JEC)                 |
//!
//! The JEC is even while some thread is *sleepy* and nobody posted work since; odd while
//! the pool is *active*. The layout follows rayon-core's `sleep/counters.rs`.
//!
//! *Searchers counted on* is set by a thread that injected work, saw workers parked and
//! woke none because a worker that is searching will find the work; the last searcher to
//! stop searching clears it, and then looks for work left (docs/sleep.md, "When P wakes
//! nobody").

use crate::sync::checked::AtomicU64;
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;

/// Width in bits of each thread-count field.
const THREADS_BITS: u32 = 16;
/// Position of the sleeping-threads field (bits 0-15).
const SLEEPING_SHIFT: u32 = 0;
/// Position of the inactive-threads field (bits 16-31).
const INACTIVE_SHIFT: u32 = THREADS_BITS;
/// The searchers-counted-on flag (bit 32).
const COUNTED_ON: u64 = 1 << (2 * THREADS_BITS);
/// Position of the jobs event counter (bits 33-63).
const JEC_SHIFT: u32 = 2 * THREADS_BITS + 1;
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

    /// Whether an injection counted on the searching workers since the last searcher
    /// stopped searching ([`AtomicCounters::count_on_searchers`]). The protocol needs no
    /// test of it: the flag's read-modify-write is what orders the injection's push before
    /// the last searcher's look.
    #[cfg(test)]
    pub(crate) fn searchers_counted_on(self) -> bool {
        self.word & COUNTED_ON != 0
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

    /// Sets the searchers-counted-on flag and returns the counters as they were before:
    /// an injector that woke no sleeper because a searching worker will find its job
    /// decides on this value, so that the decision and the flag take one atomic step.
    #[inline]
    pub(crate) fn count_on_searchers(&self) -> Counters {
        Counters {
            word: self.value.fetch_or(COUNTED_ON, Ordering::SeqCst),
        }
    }

    /// A worker found work: it is no longer inactive. The last searcher (no other
    /// inactive worker awake) also clears the searchers-counted-on flag, in the same
    /// step. Returns the counters as they were before (the caller decides whether to look
    /// for work left and wake a sleeper: "the last searcher wakes one").
    #[inline]
    pub(crate) fn sub_inactive_thread(&self) -> Counters {
        let mut old = self.load(Ordering::Relaxed);
        loop {
            debug_assert!(old.inactive_threads() > 0);
            debug_assert!(old.sleeping_threads() <= old.inactive_threads());
            let mut new = old.word - ONE_INACTIVE;
            if old.awake_but_idle_threads() == 1 {
                new &= !COUNTED_ON;
            }
            // SeqCst both ways: the read is the value the caller decides on, and it
            // must come after every injection's flag that it clears (the injection's
            // push then happens before the caller's look).
            match self.value.compare_exchange_weak(
                old.word,
                new,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return old,
                Err(word) => old = Counters { word },
            }
        }
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
    fn the_last_searcher_clears_the_counted_on_flag() {
        let c = AtomicCounters::new();
        // Two searchers and a sleeper; an injection counts on the searchers.
        c.add_inactive_thread();
        c.add_inactive_thread();
        c.add_inactive_thread();
        assert!(c.try_add_sleeping_thread(c.load(Ordering::SeqCst)));
        assert!(!c.count_on_searchers().searchers_counted_on());
        assert!(c.count_on_searchers().searchers_counted_on());
        // The first searcher to leave is not the last: the flag stays for the other.
        let first = c.sub_inactive_thread();
        assert_eq!(first.awake_but_idle_threads(), 2);
        assert!(c.load(Ordering::SeqCst).searchers_counted_on());
        // The last one sees it and clears it; the JEC and the other fields are untouched.
        let jec = c.load(Ordering::SeqCst).jobs_counter();
        let last = c.sub_inactive_thread();
        assert!(last.searchers_counted_on());
        assert_eq!(last.awake_but_idle_threads(), 1);
        let now = c.load(Ordering::SeqCst);
        assert!(!now.searchers_counted_on());
        assert_eq!(now.jobs_counter(), jec);
        assert_eq!((now.inactive_threads(), now.sleeping_threads()), (1, 1));
    }

    #[test]
    fn jec_wraps_without_touching_thread_fields() {
        let c = AtomicCounters {
            value: CachePadded::new(AtomicU64::new(
                (u64::MAX << JEC_SHIFT) | COUNTED_ON | ONE_INACTIVE | ONE_SLEEPING,
            )),
        };
        let after = c.increment_jobs_event_counter_if(|_| true);
        assert_eq!(after.jobs_counter(), JobsEventCounter(0));
        assert!(after.searchers_counted_on());
        assert_eq!(after.inactive_threads(), 1);
        assert_eq!(after.sleeping_threads(), 1);
    }
}
