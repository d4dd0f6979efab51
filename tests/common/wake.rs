//! Workers asleep and woken: how many are parked, waiting until they are, whether a
//! round's work woke another worker, and pacing rounds so that they meet workers on their
//! way to sleep.

use super::deadline::wait_until;
use super::work::{rng, spin_for};
use std::time::{Duration, Instant};
use stealpool::ThreadPool;

/// How many workers of `pool` are parked right now, from the public metrics: a worker
/// counts a park just before it blocks and an unpark when it wakes, so a parked worker
/// has one park more than unparks. A racy snapshot, for tests that need an idle pool.
pub fn parked_workers(pool: &ThreadPool) -> usize {
    pool.metrics()
        .workers
        .iter()
        .filter(|w| w.parks > w.unparks)
        .count()
}

/// Runs `round` inside `pool` and tells whether a worker other than the one that ran it
/// woke from a park meanwhile: the round's work met another worker asleep or on its way
/// to sleep, the race a wake-up test aims at. The wake-up of the worker that took the
/// `install` itself is not counted. A wake-up the round's work needed (the other worker
/// had to run part of it) is counted before the round returns: the worker counts its
/// wake-up before it runs anything, and the round waits for that work.
pub fn another_worker_woke<R: Send>(
    pool: &ThreadPool,
    round: impl FnOnce() -> R + Send,
) -> (R, bool) {
    let before = pool.metrics();
    let (value, me) = pool.install(|| {
        let value = round();
        (value, stealpool::current_thread_index().unwrap())
    });
    let after = pool.metrics();
    let woke = before
        .workers
        .iter()
        .zip(&after.workers)
        .enumerate()
        .any(|(index, (b, a))| index != me && a.unparks > b.unparks);
    (value, woke)
}

/// Asserts that some of a randomized wake-up test's rounds met a worker asleep or on its
/// way to sleep ([`another_worker_woke`]); otherwise the test never reached its race.
pub fn assert_some_woke(rounds_that_woke: usize, rounds: usize, what: &str) {
    assert!(
        rounds_that_woke > 0,
        "{what}: in none of {rounds} rounds did the round's work wake another worker"
    );
}

/// Decides when each round of a wake-up test starts, so that its work arrives both at
/// parked workers and at workers on their way to park.
///
/// A quarter of the rounds (and the first one) wait until every worker is parked, and
/// measure how long that took since the previous round ended. The others pause for a
/// random time between 0 and 1.5 times that measured time to park, so that the round
/// often lands in the short window where the last worker decides to go to sleep: this is
/// where a wake-up gets lost, and random pauses not aimed at it hit it rarely. (The pause
/// is pacing, not synchronisation or a timing assertion.)
pub struct Pacer {
    /// The test's own random choices too, from the same seed.
    pub rng: fastrand::Rng,
    /// Running estimate of the time to park (ns); `None` before the first measure.
    park_ns: Option<u64>,
}

impl Pacer {
    /// A pacer with no estimate yet, its random choices from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: rng(seed),
            park_ns: None,
        }
    }

    /// Waits before the next round, right after the previous one ended: until the `n`
    /// workers of `pool` are all parked, or for a random pause ([`Pacer`]).
    pub fn before_round(&mut self, pool: &ThreadPool, n: usize) {
        if let Some(nanos) = self.next_pause(pool, n) {
            spin_for(nanos);
        }
    }

    /// The wait of [`before_round`](Self::before_round): waits until the `n` workers are
    /// all parked and returns `None`, or returns the random pause (ns) to spend.
    fn next_pause(&mut self, pool: &ThreadPool, n: usize) -> Option<u64> {
        let start = Instant::now();
        if self.wants_a_measure() {
            wait_parked(pool, n);
            self.measured(start.elapsed());
            None
        } else {
            Some(self.random_pause())
        }
    }

    /// Paces a round from inside one of its jobs on `pool` (`n` workers), where the
    /// worker that runs the job cannot park and the others take the time they take beside
    /// a busy worker (longer than in an idle pool when they compete with other threads
    /// for the CPUs): either spins for a random pause, or (the first round and a quarter
    /// of the others) waits until the `n - 1` other workers are parked and takes that time
    /// as the estimate. The wait spins too: one that yielded would lend them this
    /// worker's CPU and measure a shorter time. Returns whether the round paused at random
    /// (the rounds a test counts toward [`assert_some_woke`]). Panics if the others are not
    /// parked within 20 s.
    pub fn pace_in_job(&mut self, pool: &ThreadPool, n: usize) -> bool {
        if !self.wants_a_measure() {
            spin_for(self.random_pause());
            return true;
        }
        let start = Instant::now();
        while parked_workers(pool) < n - 1 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the other workers never went to sleep ({} of {} parked)",
                parked_workers(pool),
                n - 1
            );
            std::hint::spin_loop();
        }
        self.measured(start.elapsed());
        false
    }

    /// Whether this round measures the time to park (the first round and a quarter of
    /// the others) instead of pausing at random.
    fn wants_a_measure(&mut self) -> bool {
        self.park_ns.is_none() || self.rng.u8(0..4) == 0
    }

    /// A new measured time to park, folded into the running estimate.
    fn measured(&mut self, took: Duration) {
        let took = took.as_nanos() as u64;
        self.park_ns = Some(self.park_ns.map_or(took, |ns| (ns * 7 + took) / 8));
    }

    /// A random pause between 0 and 1.5 times the estimated time to park (ns).
    fn random_pause(&mut self) -> u64 {
        let park_ns = self.park_ns.unwrap_or(0);
        self.rng.u64(0..=park_ns * 3 / 2)
    }
}

/// Waits (up to 20 s, else panics) until at least `n` workers of `pool` are parked.
pub fn wait_parked(pool: &ThreadPool, n: usize) {
    assert!(
        wait_until(Duration::from_secs(20), || parked_workers(pool) >= n),
        "pool never went to sleep ({} of {n} workers parked)",
        parked_workers(pool)
    );
}
