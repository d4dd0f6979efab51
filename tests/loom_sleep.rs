//! Model checking of the sleep/wake protocol with [loom](https://docs.rs/loom): every
//! interleaving (up to loom's preemption bound) of a worker falling asleep against a thread
//! posting work or setting its latch. A lost wake-up shows up as a deadlock (every thread
//! blocked), which loom reports as a failure.
//!
//! loom cannot see `membarrier(2)`, so the model checks the fence variant of the barrier
//! pair (`--cfg stealpool_fences`, a SeqCst fence on both sides; loom models SeqCst
//! fences exactly). The queues are modelled by one atomic flag per job: the protocol only
//! needs "the push is visible to a later look", which crossbeam-deque's push (Release) and
//! `is_empty` (Acquire) give. A steal is a `compare_exchange(true, false)`, like
//! crossbeam's CAS on the deque's front; a `swap(false)` would be wrong for the model:
//! loom 0.7 lets a load that happens after the pusher's store still read the value an
//! earlier failed "take" swap wrote (found while writing this model; a CAS writes nothing
//! when it fails, which is also what the real steal does).
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg stealpool_fences" \
//!     cargo test --release --features loom --target-dir target/loom --test loom_sleep
//! ```
//!
//! `.ci/run` runs exactly that (about 1 s after a 2-minute build). The single-worker models
//! also pass unbounded (121 iterations for the push, exhaustive); the two-worker models
//! grow fast (one_job: 807 / 10,521 / 113,977 iterations at 2 / 3 / 4 preemptions, all
//! passing).
//!
//! What the model can and cannot show (measured with hand-made mutants of `sleep()`):
//! removing *both* the JEC check (step 3) and the last look (step 4) is caught
//! (`a_second_push_is_never_missed` deadlocks); removing only one of them, or only the
//! sleeper's fence, is not. loom models a SeqCst fence as a global happens-before edge,
//! which is stronger than the C11 model once SeqCst read-modify-writes are also present
//! (our counters), so in loom each mechanism covers for the other, and the barrier pair is
//! never needed. The argument for why each is needed on real hardware (own-deque pushes
//! under membarrier, a second push that finds the JEC odd) stays in docs/sleep.md.
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealpool::__loom::{ModelLatch, ModelSleep};

/// One worker falls asleep while another thread pushes one job: the worker must take it.
#[test]
fn a_push_is_never_missed_by_a_worker_going_to_sleep() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(1));
        let job = Arc::new(AtomicBool::new(false));
        let latch = Arc::new(ModelLatch::new());
        let worker = {
            let (sleep, job, latch) = (sleep.clone(), job.clone(), latch.clone());
            thread::spawn(move || sleep.search_until(0, &job, &latch))
        };
        // The push (Release, like crossbeam's `back` store), then `new_jobs`.
        job.store(true, Ordering::Release);
        sleep.new_jobs(1, true);
        assert!(
            worker.join().unwrap(),
            "the worker returned without the job"
        );
    });
}

/// Two pushes in a row. The first makes the jobs event counter odd, so the second may find
/// it odd and skip its counter update, which exercises the sleeper's JEC check and its
/// last look together. With both removed (a hand-made mutant) loom finds the lost
/// wake-up here as a deadlock; see the module docs for what it cannot show.
#[test]
fn a_second_push_is_never_missed() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(1));
        let jobs = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let latch = Arc::new(ModelLatch::new());
        let worker = {
            let (sleep, jobs, latch) = (sleep.clone(), jobs.clone(), latch.clone());
            thread::spawn(move || {
                // Job 0, then job 1: after running a job a worker starts looking afresh.
                sleep.search_until(0, &jobs[0], &latch) && sleep.search_until(0, &jobs[1], &latch)
            })
        };
        for job in jobs.iter() {
            job.store(true, Ordering::Release);
            sleep.new_jobs(1, true);
        }
        assert!(worker.join().unwrap(), "a job was left behind");
    });
}

/// A latch set while its owner falls asleep (a stolen `join` half finishing, the pool
/// terminating) must wake the owner.
#[test]
fn a_latch_set_is_never_missed_by_its_sleeping_owner() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(1));
        let job = Arc::new(AtomicBool::new(false));
        let latch = Arc::new(ModelLatch::new());
        let worker = {
            let (sleep, job, latch) = (sleep.clone(), job.clone(), latch.clone());
            thread::spawn(move || sleep.search_until(0, &job, &latch))
        };
        sleep.set_latch(&latch, 0);
        assert!(!worker.join().unwrap());
    });
}

/// Two workers, one job: one of them takes it, and the other is released by its latch
/// (set by the taker, as a pool's termination does). Exercises the "awake but idle"
/// heuristic in `new_jobs`, which may decide to wake nobody.
#[test]
fn one_job_two_workers_someone_takes_it() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let job = Arc::new(AtomicBool::new(false));
        let latches = Arc::new([ModelLatch::new(), ModelLatch::new()]);
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (sleep, job, latches) = (sleep.clone(), job.clone(), latches.clone());
                thread::spawn(move || {
                    let took = sleep.search_until(i, &job, &latches[i]);
                    if took {
                        // Release the other worker.
                        sleep.set_latch(&latches[1 - i], 1 - i);
                    }
                    took
                })
            })
            .collect();
        job.store(true, Ordering::Release);
        sleep.new_jobs(1, true);
        let took: Vec<bool> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(took.iter().filter(|&&t| t).count(), 1, "{took:?}");
    });
}

/// "The last searcher wakes one": worker 0 searches, worker 1 falls asleep, and a thread
/// pushes a job that only worker 1 can still take: worker 0 finds other work (`other`, on
/// its own queue from the start) and never searches again. The pusher may wake nobody,
/// counting on the searcher; the searcher, leaving, must then see the job and wake the
/// sleeper. `injected`: the pusher is outside the pool (`new_injected_jobs`, which decides
/// to count on the searchers on a read-modify-write, so that a last searcher beside
/// parked workers only may look without a barrier); else it is a third worker that keeps running
/// (`new_jobs`, a push with the light barrier only, which the searcher's heavy barrier and
/// second look cover).
fn a_searcher_counted_on_wakes_a_sleeper_when_it_leaves(injected: bool) {
    loom::model(move || {
        let sleep = Arc::new(ModelSleep::new(if injected { 2 } else { 3 }));
        let job = Arc::new(AtomicBool::new(false));
        let latch = Arc::new(ModelLatch::new());
        let searcher = {
            let (sleep, job) = (sleep.clone(), job.clone());
            thread::spawn(move || {
                let other = AtomicBool::new(true);
                let mut idle = sleep.start_looking(0);
                assert!(other.swap(false, Ordering::Acquire));
                sleep.work_found(&mut idle, || job.load(Ordering::Acquire));
            })
        };
        let sleeper = {
            let (sleep, job, latch) = (sleep.clone(), job.clone(), latch.clone());
            thread::spawn(move || sleep.search_until(1, &job, &latch))
        };
        job.store(true, Ordering::Release);
        if injected {
            sleep.new_injected_jobs(1, true);
        } else {
            sleep.new_jobs(1, true);
        }
        searcher.join().unwrap();
        assert!(
            sleeper.join().unwrap(),
            "the sleeper returned without the job"
        );
    });
}

/// [`a_searcher_counted_on_wakes_a_sleeper_when_it_leaves`], the pusher outside the pool.
#[test]
fn an_injection_counted_on_a_searcher_is_never_missed() {
    a_searcher_counted_on_wakes_a_sleeper_when_it_leaves(true);
}

/// [`a_searcher_counted_on_wakes_a_sleeper_when_it_leaves`], the pusher a running worker.
#[test]
fn a_push_counted_on_a_searcher_is_never_missed() {
    a_searcher_counted_on_wakes_a_sleeper_when_it_leaves(false);
}

/// A broadcast: one job per worker, each only for its own worker; every worker must wake
/// for its own (`new_broadcast_jobs`).
#[test]
fn every_worker_wakes_for_its_broadcast_job() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let jobs = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let latches = Arc::new([ModelLatch::new(), ModelLatch::new()]);
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (sleep, jobs, latches) = (sleep.clone(), jobs.clone(), latches.clone());
                thread::spawn(move || sleep.search_until(i, &jobs[i], &latches[i]))
            })
            .collect();
        for job in jobs.iter() {
            job.store(true, Ordering::Release);
        }
        sleep.new_broadcast_jobs();
        for w in workers {
            assert!(w.join().unwrap());
        }
    });
}

/// A lazy `join` half (docs/join.md): the owner keeps it private and promotes it to its
/// deque only if its poll sees an idle worker; the owner then never comes back (its first
/// half blocks on the second). The worker must still get the half: promoted (and woken
/// for it) or rescued from the private stack after its last look saw it. (As for the
/// other models: a mutant whose last look ignores private halves is *not* caught here,
/// because in loom's fence model the worker's `start_looking` and its search already
/// order against the owner's poll; on hardware with the compiler-fence side of the
/// membarrier pair the last look is what sees the half, docs/join.md.)
#[test]
fn a_private_half_is_never_hidden_from_a_worker_going_to_sleep() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(2));
        let private = Arc::new(AtomicBool::new(false));
        let deque = Arc::new(AtomicBool::new(false));
        let latch = Arc::new(ModelLatch::new());
        let worker = {
            let (sleep, private, deque, latch) =
                (sleep.clone(), private.clone(), deque.clone(), latch.clone());
            thread::spawn(move || {
                let mut idle = sleep.start_looking(1);
                loop {
                    // A steal from the deque, then a rescue from the private stack: each a
                    // CAS, as the real ones are (the rescue under its lock).
                    let took = |flag: &AtomicBool| {
                        flag.compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
                            .is_ok()
                    };
                    if took(&deque) || took(&private) {
                        sleep.work_found(&mut idle, || false);
                        return;
                    }
                    sleep.no_work_found(1, &mut idle, &latch, || {
                        deque.load(Ordering::Acquire) || private.load(Ordering::Acquire)
                    });
                }
            })
        };
        // The owner (worker 0, active): private push, poll, maybe promote.
        private.store(true, Ordering::Release);
        if sleep.idle_workers_after_private_push()
            && private
                .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            deque.store(true, Ordering::Release);
            sleep.new_jobs(1, true);
        }
        worker.join().unwrap();
    });
}

/// `block_on` on a worker: the future's waker sets the worker's latch (waking it if it
/// sleeps), and the worker resets the latch before each poll. Two wake-ups, each after
/// the future's state advanced: the worker must see the final state, however the second
/// wake-up interleaves with the reset (a reset that overwrote a wake-up it had not
/// synchronised with would leave the worker asleep on a stale poll: a deadlock).
#[test]
fn a_reset_latch_never_loses_a_wake_up_between_polls() {
    loom::model(|| {
        let sleep = Arc::new(ModelSleep::new(1));
        let latch = Arc::new(ModelLatch::new());
        // The future's state: how many of its two events happened (Release/Acquire, as
        // any future's own synchronisation).
        let ready = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let never = Arc::new(AtomicBool::new(false));
        let worker = {
            let (sleep, latch, ready) = (sleep.clone(), latch.clone(), ready.clone());
            thread::spawn(move || {
                // block_on_worker: poll; if pending, wait on the latch, reset, poll again.
                while ready.load(Ordering::Acquire) < 2 {
                    sleep.search_until(0, &never, &latch);
                    latch.reset();
                }
            })
        };
        for _ in 0..2 {
            ready.fetch_add(1, Ordering::Release);
            sleep.set_latch(&latch, 0);
        }
        worker.join().unwrap();
    });
}
