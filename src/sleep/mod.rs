//! Sleep/wake: how an idle worker parks without ever missing work.
//!
//! The protocol, and the argument for why no wake-up is lost, is written up in
//! `docs/sleep.md`; the names there (`start_looking`, `announce_sleepy`, `sleep`,
//! `new_jobs`, ...) are the functions here. In short:
//!
//! 1. A worker that found nothing in a full round (local deque, injector, every victim,
//!    with `Steal::Retry` rounds repeated) yields and retries for
//!    [`ROUNDS_UNTIL_SLEEPY`] rounds.
//! 2. It then *announces* it is sleepy by making the jobs event counter (JEC) even, and
//!    searches once more.
//! 3. To sleep it takes its own mutex, moves its latch to `SLEEPING`, registers as a
//!    sleeper with a CAS that succeeds only if the JEC is unchanged, and marks itself
//!    blocked. A heavy barrier (`membarrier(2)` on Linux) and a last look at every queue
//!    follow, outside the mutex; then, unless a waker already cleared the mark or the
//!    look found work, it waits on its condvar.
//! 4. Whoever posts work issues a light barrier after the push (a compiler fence where
//!    the heavy one is a membarrier), bumps the JEC if it is even, then wakes sleepers if
//!    needed. The two barriers pair up so that no job is left unseen while every worker
//!    sleeps.
//!
//! The design is rayon-core's (its `sleep/README.md`), re-derived for this pool's loop.
//! `spot.rs` is one worker's parking spot, `isolated.rs` parks a worker that waits inside
//! an isolation region, outside the counters, and `wake.rs` is the waking half.

mod core_latch;
mod counters;
mod isolated;
mod spot;
#[cfg(all(test, not(loom)))]
mod tests;
mod wake;

use self::counters::{AtomicCounters, Counters, JobsEventCounter};
use self::spot::{block_until_woken, Blocked, WorkerSleepState};
use crate::metrics::WorkerCounters;
use crate::sync::barrier::{self, Park};
use crate::sync::checked::{yield_now, AtomicUsize, MutexGuard};
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;
use std::time::Instant;

pub(crate) use self::core_latch::CoreLatch;
pub(crate) use self::counters::THREADS_MAX;

/// Unsuccessful search rounds (each followed by `thread::yield_now`) before a worker
/// announces it is sleepy, for the workers that hold a spinner place
/// ([`max_spinners`]; the others announce at once). rayon-core spins 32 rounds; fewer
/// cost less CPU under sporadic work without a slower wake (`docs/performance.md`,
/// "Measurements behind design choices"). (0 under loom: the model explores the
/// protocol's steps, not the spinning before them.)
pub(crate) const ROUNDS_UNTIL_SLEEPY: u32 = if cfg!(loom) { 0 } else { 8 };

/// Unsuccessful rounds before a worker actually parks (one more search after announcing).
pub(crate) const ROUNDS_UNTIL_SLEEPING: u32 = ROUNDS_UNTIL_SLEEPY + 1;

/// Unsuccessful rounds before a worker tries to rescue another worker's private `join`
/// half (`docs/join.md`, "Rescue"): late enough that an owner that still calls `join`
/// promotes first (a rescue costs a heavy barrier), early enough that a long leaf's
/// sibling starts within tens of microseconds.
pub(crate) const ROUNDS_UNTIL_RESCUE: u32 = if cfg!(loom) { 0 } else { 4 };

/// How many of a pool's `n_threads` workers may spin before they announce they are
/// sleepy: half of them (tokio's bound on searching workers, which keeps a large pool's
/// idle workers from contending for the same queues), but at least two, and never more
/// than the pool has. Two workers that run out of work together (the end of every
/// fork-join call on a pool of two) then both spin: with a single place one of them
/// parks at once, and the next call's first `join` pays the wake-up of a parked worker,
/// which on a machine whose idle CPUs halt at once is longer than a small call.
pub(crate) fn max_spinners(n_threads: usize) -> usize {
    (n_threads / 2).max(2).min(n_threads)
}

/// What a lazy `join`'s poll saw of the idle workers
/// ([`Sleep::idle_workers_after_private_push`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdleWorkers(Counters);

impl IdleWorkers {
    /// Whether any worker is idle: searching, sleepy or parked.
    #[inline(always)]
    pub(crate) fn any(self) -> bool {
        self.0.any_inactive()
    }

    /// Whether any worker is parked: it sees new work only if someone wakes it.
    #[inline(always)]
    pub(crate) fn any_asleep(self) -> bool {
        self.0.sleeping_threads() > 0
    }

    /// Whether any idle worker is awake (searching or sleepy, not parked): it looks at
    /// every queue and private stack again before it can park, so it sees new work
    /// without a wake-up.
    #[inline(always)]
    pub(crate) fn any_awake(self) -> bool {
        self.0.awake_but_idle_threads() > 0
    }
}

/// Who hears that a worker parks and wakes: its metrics counters, and on a worker also
/// its timeline.
pub(crate) trait ParkObserver {
    /// The worker is about to wait on its condvar; `since_epoch_ns` is now
    /// (`metrics::now_ns`).
    fn parked(&self, since_epoch_ns: u64);
    /// The worker woke up after `nanos` nanoseconds parked.
    fn unparked(&self, nanos: u64);
}

impl ParkObserver for WorkerCounters {
    #[inline]
    fn parked(&self, since_epoch_ns: u64) {
        self.park(since_epoch_ns)
    }
    #[inline]
    fn unparked(&self, nanos: u64) {
        WorkerCounters::unparked(self, nanos)
    }
}

/// The pool-wide sleep state: the counters word and one parking spot per worker.
pub(crate) struct Sleep {
    /// One parking spot per worker, by index.
    worker_sleep_states: Vec<CachePadded<WorkerSleepState>>,
    /// The packed counters: sleeping and inactive threads, and the JEC.
    counters: AtomicCounters,
    /// Workers in their spin rounds (before announcing sleepy); at most `max_spinners`.
    spinners: CachePadded<AtomicUsize>,
    /// How many workers may spin at once ([`max_spinners`]).
    max_spinners: usize,
    /// Workers registered as parked in an isolated wait (`isolated.rs`).
    isolated_parked: AtomicUsize,
}

/// What a worker remembers between unsuccessful search rounds.
pub(crate) struct IdleState {
    /// The searching worker's index.
    worker_index: usize,
    /// Unsuccessful rounds so far.
    rounds: u32,
    /// The JEC value this worker made even when it announced it was sleepy.
    jobs_counter: JobsEventCounter,
    /// Whether this worker holds one of the pool's spinner places.
    spinner: bool,
}

impl IdleState {
    /// Unsuccessful search rounds since this worker went idle (or was partly woken).
    #[inline]
    pub(crate) fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Woken by a latch or new work: start the whole idle schedule again.
    fn wake_fully(&mut self) {
        self.rounds = 0;
        self.jobs_counter = JobsEventCounter::DUMMY;
    }

    /// Backed out of sleeping because work was posted: search again, and re-announce
    /// right away if that search fails.
    fn wake_partly(&mut self) {
        self.rounds = ROUNDS_UNTIL_SLEEPY;
        self.jobs_counter = JobsEventCounter::DUMMY;
    }
}

impl Sleep {
    /// The sleep state of a pool of `n_threads` workers, none of them idle; also sets up
    /// the barriers (`barrier::init`).
    ///
    /// # Panics
    /// If `n_threads` is over [`THREADS_MAX`].
    pub(crate) fn new(n_threads: usize) -> Sleep {
        assert!(n_threads <= THREADS_MAX);
        barrier::init();
        Sleep {
            worker_sleep_states: (0..n_threads).map(|_| Default::default()).collect(),
            counters: AtomicCounters::new(),
            spinners: CachePadded::new(AtomicUsize::new(0)),
            max_spinners: max_spinners(n_threads),
            isolated_parked: AtomicUsize::new(0),
        }
    }

    /// After a lazy `join` pushed a half on its private stack: which workers are idle
    /// ([`IdleWorkers`]), so that promoting the half would help.
    ///
    /// Between the push and this load there is only a compiler fence
    /// ([`barrier::poll_fence`]): a sleeper whose barrier was a membarrier orders the two
    /// anyway; one whose barrier was a fence of its own rechecks if a worker was running
    /// when it registered (`sleep`, step 5). Either this load sees the sleeper (and the
    /// caller promotes, which wakes it) or the sleeper's look, or its recheck, sees the
    /// private half (docs/join.md, "No half is lost"). Relaxed load: otherwise a stale
    /// answer only delays or adds one promotion.
    #[inline(always)]
    pub(crate) fn idle_workers_after_private_push(&self) -> IdleWorkers {
        barrier::poll_fence();
        IdleWorkers(self.counters.load(Ordering::Relaxed))
    }

    /// Registers one more worker as searching and parked in the counters, without any
    /// worker: for tests of what the counters answer.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn count_a_sleeper(&self) {
        self.counters.add_inactive_thread();
        while !self
            .counters
            .try_add_sleeping_thread(self.counters.load(Ordering::SeqCst))
        {}
    }

    /// A worker ran out of local work and starts searching.
    #[inline]
    pub(crate) fn start_looking(&self, worker_index: usize) -> IdleState {
        self.counters.add_inactive_thread();
        IdleState {
            worker_index,
            rounds: 0,
            jobs_counter: JobsEventCounter::DUMMY,
            spinner: false,
        }
    }

    /// Takes a spinner place if fewer than [`max_spinners`] workers hold one. A worker without a
    /// place skips the spin rounds and goes straight to announcing it is sleepy.
    #[inline]
    fn start_spinning(&self, idle_state: &mut IdleState) -> bool {
        if !idle_state.spinner {
            // Relaxed: the bound is a heuristic (how much CPU idle workers burn); no
            // wake-up depends on who spins.
            let spinning = self.spinners.fetch_add(1, Ordering::Relaxed);
            if spinning >= self.max_spinners {
                self.spinners.fetch_sub(1, Ordering::Relaxed);
                return false;
            }
            idle_state.spinner = true;
        }
        true
    }

    /// Gives the spinner place back, if held.
    #[inline]
    fn stop_spinning(&self, idle_state: &mut IdleState) {
        if idle_state.spinner {
            idle_state.spinner = false;
            self.spinners.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A full search round found nothing (every source said `Empty`). Yields, announces
    /// sleepiness, or parks, depending on how many rounds came up empty.
    ///
    /// `has_queued_jobs` is the final look at every queue this worker may take from (its
    /// broadcast queue, the injector, all deques); it runs after the sleeper registered
    /// itself and after the heavy barrier.
    #[inline]
    // The round limits are 0 under loom (fewer states): a comparison against them is then
    // constant, which is the point.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    pub(crate) fn no_work_found(
        &self,
        idle_state: &mut IdleState,
        latch: &CoreLatch,
        observer: &impl ParkObserver,
        has_queued_jobs: impl Fn() -> bool,
    ) {
        if idle_state.rounds < ROUNDS_UNTIL_SLEEPY && self.start_spinning(idle_state) {
            yield_now();
            idle_state.rounds += 1;
            return;
        }
        // Out of spin rounds, or enough workers spin already.
        self.stop_spinning(idle_state);
        if idle_state.rounds < ROUNDS_UNTIL_SLEEPING {
            // Announce, then one more search (the rounds jump to `ROUNDS_UNTIL_SLEEPING`
            // also for a worker that got no spinner place).
            idle_state.jobs_counter = self.announce_sleepy();
            idle_state.rounds = ROUNDS_UNTIL_SLEEPING;
            yield_now();
        } else {
            debug_assert_eq!(idle_state.rounds, ROUNDS_UNTIL_SLEEPING);
            self.sleep(idle_state, latch, observer, has_queued_jobs);
        }
    }

    /// Makes the JEC even (sleepy) unless it already is, and returns the even value.
    #[cold]
    fn announce_sleepy(&self) -> JobsEventCounter {
        self.counters
            .increment_jobs_event_counter_if(JobsEventCounter::is_active)
            .jobs_counter()
    }

    /// Steps 1 to 5 of parking (`docs/sleep.md`): parks the worker until a waker (new work,
    /// or the setter of `latch`) wakes it, unless the latch is set first, work has been
    /// posted since the worker announced it is sleepy, or the last look
    /// (`has_queued_jobs`) finds work.
    #[cold]
    fn sleep(
        &self,
        idle_state: &mut IdleState,
        latch: &CoreLatch,
        observer: &impl ParkObserver,
        has_queued_jobs: impl Fn() -> bool,
    ) {
        // Off the build path: the first worker to get here starts the membarrier
        // registration (sync::barrier); later calls are one load.
        barrier::prepare();
        let worker_index = idle_state.worker_index;

        // Steps 1 and 2 (`WorkerSleepState::fall_asleep`); fail if the latch was set
        // meanwhile.
        let sleep_state = &self.worker_sleep_states[worker_index];
        let Some(mut is_blocked) = sleep_state.fall_asleep(latch) else {
            idle_state.wake_fully();
            return;
        };

        // Step 3: register as a sleeper, but only if no work was posted since we got
        // sleepy (the JEC is still the even value we made it). `is_blocked` becomes true in
        // the same critical section, so every waker that sees us counted as sleeping, or
        // our latch SLEEPING, finds us blocked once it holds our mutex.
        let all_inactive = loop {
            let counters = self.counters.load(Ordering::SeqCst);
            if counters.jobs_counter() != idle_state.jobs_counter {
                idle_state.wake_partly();
                latch.wake_up();
                return;
            }
            if self.counters.try_add_sleeping_thread(counters) {
                break counters.inactive_threads() == self.worker_sleep_states.len();
            }
        };
        *is_blocked = Blocked::Counted;
        drop(is_blocked);

        // Step 4: the heavy barrier pairs with the light barrier in `new_jobs`. Either
        // the pusher sees our `sleeping` increment (and wakes us), or we see its job here.
        // Never skip the last look because the JEC was unchanged: for pushes to a
        // worker's own deque in membarrier mode it is the only thing that sees the job.
        // Both run outside the mutex: a membarrier takes microseconds, and a waker
        // spinning on our mutex meanwhile would go to sleep on it.
        let park = barrier::heavy();
        let queued = has_queued_jobs();
        self.block_counted(
            sleep_state,
            observer,
            park,
            all_inactive,
            queued,
            &has_queued_jobs,
        );

        idle_state.wake_fully();
        latch.wake_up();
    }

    /// Step 5 for a worker counted as sleeping and blocked in `sleep_state` (a searcher,
    /// or an isolated waiter, `isolated.rs`), after the heavy barrier returned `park` and
    /// its last look returned `found`: blocks, unless a waker came in between (it cleared
    /// `is_blocked` and decremented `sleeping` for us) or the look found work (then it
    /// undoes the registration itself). `all_inactive` says whether every worker was
    /// inactive when it registered; `look` is the last look again, for the recheck.
    ///
    /// A fence-only barrier does not order a lazy `join`'s poll, which has no fence
    /// (`barrier::poll_fence`): a worker that was running when we registered may have
    /// pushed a private half our look missed, and missed us in its poll. Every worker
    /// that starts running after our registration does so with a read-modify-write of
    /// the counters later than ours, so its polls see us. Recheck only for the former.
    fn block_counted(
        &self,
        sleep_state: &WorkerSleepState,
        observer: &impl ParkObserver,
        park: Park,
        all_inactive: bool,
        found: bool,
        look: &impl Fn() -> bool,
    ) {
        let recheck = match park {
            Park::Untimed => false,
            Park::FenceOnly => !all_inactive,
            Park::Recheck => true,
        };
        let mut is_blocked = sleep_state.is_blocked.lock();
        let park_now = if *is_blocked == Blocked::No {
            // Woken before we blocked.
            false
        } else if found {
            // Back out: nobody will wake us, so undo the registration ourselves.
            *is_blocked = Blocked::No;
            self.counters.sub_sleeping_thread();
            false
        } else {
            true
        };
        drop(is_blocked);
        if park_now {
            // The waker (or the recheck) decrements `sleeping` for us.
            block_until_woken(sleep_state, observer, |is_blocked| {
                if recheck && *is_blocked != Blocked::No {
                    self.recheck(sleep_state, is_blocked, look)
                } else {
                    is_blocked
                }
            });
        }
    }

    /// `Park::Recheck`: the barrier pair may have been inexact for a pusher that read
    /// the old mode (`sync::barrier`), or, after a fence-only barrier, for a lazy `join`'s
    /// poll that ran no fence (`Park::FenceOnly`). Parks for `RECHECK_AFTER` (the pusher's store
    /// buffer drains long before), then looks at the queues again; backs out if they hold
    /// work. Waits out the whole interval: a late notify from an earlier wake-up (wakers
    /// notify after unlocking) must not cut it short.
    #[cold]
    fn recheck<'a>(
        &self,
        sleep_state: &'a WorkerSleepState,
        mut is_blocked: MutexGuard<'a, Blocked>,
        has_queued_jobs: &impl Fn() -> bool,
    ) -> MutexGuard<'a, Blocked> {
        let deadline = Instant::now() + barrier::RECHECK_AFTER;
        while *is_blocked != Blocked::No {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            is_blocked = sleep_state.condvar.wait_timeout(is_blocked, deadline - now);
        }
        if *is_blocked != Blocked::No && has_queued_jobs() {
            *is_blocked = Blocked::No;
            self.counters.sub_sleeping_thread();
        }
        is_blocked
    }
}
