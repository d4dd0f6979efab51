//! Stress tests: exactly-once execution of a million jobs, lost wakeups in
//! the sleep protocol, deep join recursion and many sequential joins.
//!
//! Completion is always awaited through latches with timeouts; a pool that
//! drops or duplicates a job, or loses a wakeup, fails the test.
//!
//! The tests of this binary run one at a time (see [`serial`]): the
//! lost-wakeup tests aim their bursts at the moment workers go to sleep,
//! which they measure, and other pools running meanwhile would blur that.

mod common;

use std::panic;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use common::pools::run_on_all_workers;
use common::wake::Pacer;
use common::work::random_u64s;
use common::{watchdog, Countdown};
use stealpool::ThreadPoolBuilder;

/// Held for the whole of each test, so that the tests of this binary do not
/// run concurrently.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Generous: a healthy pool needs a fraction of this even in a debug build.
const WAIT: Duration = Duration::from_secs(60);

/// Bookkeeping for `total` jobs, each identified by an index.
struct ExactlyOnce {
    marks: Vec<AtomicU8>,
    sum: AtomicU64,
    remaining: AtomicUsize,
    done: Arc<Countdown>,
}

impl ExactlyOnce {
    fn new(total: usize) -> Arc<Self> {
        Arc::new(Self {
            marks: (0..total).map(|_| AtomicU8::new(0)).collect(),
            sum: AtomicU64::new(0),
            remaining: AtomicUsize::new(total),
            done: Countdown::new(1),
        })
    }

    /// The body of job `index`.
    fn run(&self, index: usize) {
        self.marks[index].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(index as u64, Ordering::Relaxed);
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.count_down();
        }
    }

    /// Waits for all jobs, then checks that each ran exactly once.
    fn check(&self) {
        let total = self.marks.len();
        if self.done.wait(WAIT) != 0 {
            panic!(
                "only {} of {total} jobs ran within {WAIT:?}",
                total - self.remaining.load(Ordering::SeqCst)
            );
        }
        let bad: Vec<(usize, u8)> = self
            .marks
            .iter()
            .enumerate()
            .map(|(i, m)| (i, m.load(Ordering::SeqCst)))
            .filter(|&(_, count)| count != 1)
            .take(10)
            .collect();
        assert!(
            bad.is_empty(),
            "jobs not run exactly once (index, runs): {bad:?}"
        );
        let total = total as u64;
        assert_eq!(self.sum.load(Ordering::SeqCst), total * (total - 1) / 2);
    }
}

const MILLION: usize = 1_000_000;

#[test]
fn million_spawns_from_outside_threads_run_exactly_once() {
    let _serial = serial();
    watchdog(120, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(4).build().unwrap());
        let state = ExactlyOnce::new(MILLION);
        let spawners = 4;
        let per = MILLION / spawners;
        let handles: Vec<_> = (0..spawners)
            .map(|t| {
                let pool = Arc::clone(&pool);
                let state = Arc::clone(&state);
                thread::spawn(move || {
                    for i in t * per..(t + 1) * per {
                        let state = Arc::clone(&state);
                        pool.spawn(move || state.run(i));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        state.check();
    });
}

#[test]
fn million_spawns_from_inside_workers_run_exactly_once() {
    let _serial = serial();
    watchdog(120, || {
        // 4 root jobs, each spawning 500 jobs, each spawning 500 leaf jobs,
        // all with the free `spawn` from inside the pool's workers.
        let pool = ThreadPoolBuilder::new()
            .num_threads(4)
            .thread_name(|i| format!("stress-inner-{i}"))
            .build()
            .unwrap();
        let state = ExactlyOnce::new(MILLION);
        let off_pool = Arc::new(AtomicUsize::new(0));
        let (roots, mids, leaves) = (4, 500, 500);
        assert_eq!(roots * mids * leaves, MILLION);
        for r in 0..roots {
            let state = Arc::clone(&state);
            let off_pool = Arc::clone(&off_pool);
            pool.spawn(move || {
                for m in 0..mids {
                    let state = Arc::clone(&state);
                    let off_pool = Arc::clone(&off_pool);
                    stealpool::spawn(move || {
                        let base = (r * mids + m) * leaves;
                        for l in 0..leaves {
                            let state = Arc::clone(&state);
                            let off_pool = Arc::clone(&off_pool);
                            stealpool::spawn(move || {
                                let name = thread::current().name().map(str::to_owned);
                                if !name.is_some_and(|n| n.starts_with("stress-inner-")) {
                                    off_pool.fetch_add(1, Ordering::Relaxed);
                                }
                                state.run(base + l);
                            });
                        }
                    });
                }
            });
        }
        state.check();
        assert_eq!(
            off_pool.load(Ordering::SeqCst),
            0,
            "jobs spawned inside the pool ran on threads outside it"
        );
        // The pool is still healthy: all 4 workers are alive.
        assert_eq!(run_on_all_workers(&pool, 4), vec![0, 1, 2, 3]);
    });
}

#[test]
fn scope_spawns_run_exactly_once() {
    let _serial = serial();
    watchdog(120, || {
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let total = 200_000;
        let marks: Vec<AtomicU8> = (0..total).map(|_| AtomicU8::new(0)).collect();
        pool.scope(|s| {
            for chunk in 0..200 {
                let marks = &marks;
                s.spawn(move |s| {
                    for mark in &marks[chunk * 1000..(chunk + 1) * 1000] {
                        s.spawn(move |_| {
                            mark.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        // scope returned: every job must already have run, exactly once.
        let bad = marks
            .iter()
            .filter(|m| m.load(Ordering::SeqCst) != 1)
            .count();
        assert_eq!(bad, 0, "{bad} scope jobs did not run exactly once");
    });
}

/// Number of bursts per lost-wakeup test.
const BURSTS: usize = 50_000;
/// How long one burst may take before we call it a lost wakeup.
const BURST_WAIT: Duration = Duration::from_secs(10);

/// Runs `burst(0..BURSTS)` on a helper thread and fails as soon as one burst
/// makes no progress for three times `BURST_WAIT` (e.g. an `install` whose
/// job was never picked up), naming the stuck burst, instead of hanging until
/// the test's watchdog fires. Panics of `burst` are re-raised here.
fn run_bursts(what: &str, mut burst: impl FnMut(usize) + Send + 'static) {
    let completed = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let runner = {
        let completed = Arc::clone(&completed);
        thread::Builder::new()
            .name(format!("{what}-bursts"))
            .spawn(move || {
                for b in 0..BURSTS {
                    burst(b);
                    completed.store(b + 1, Ordering::SeqCst);
                }
                drop(done_tx);
            })
            .unwrap()
    };
    let mut last = (0, Instant::now());
    // The runner never sends: the channel disconnects when it finishes or
    // panics.
    while let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(Duration::from_millis(200)) {
        let now_completed = completed.load(Ordering::SeqCst);
        if now_completed != last.0 {
            last = (now_completed, Instant::now());
        } else if last.1.elapsed() > BURST_WAIT * 3 {
            panic!(
                "{what}: burst {now_completed} of {BURSTS} made no progress for {:?} \
                 (lost wakeup?)",
                BURST_WAIT * 3
            );
        }
    }
    if let Err(payload) = runner.join() {
        panic::resume_unwind(payload);
    }
    assert_eq!(completed.load(Ordering::SeqCst), BURSTS);
}

/// Bursts of 1..=2n jobs injected with `ThreadPool::spawn` from outside.
fn injected_bursts(n: usize, seed: u64) {
    let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let mut pacer = Pacer::new(seed);
    run_bursts("injected", move |burst| {
        pacer.before_round(&pool, n);
        let jobs = pacer.rng.usize(1..=2 * n);
        let latch = Countdown::new(jobs);
        for _ in 0..jobs {
            let latch = Arc::clone(&latch);
            pool.spawn(move || latch.count_down());
        }
        let left = latch.wait(BURST_WAIT);
        assert_eq!(
            left, 0,
            "burst {burst}: {left} of {jobs} injected jobs never ran"
        );
    });
}

#[test]
fn lost_wakeup_bursts_injected_into_one_worker() {
    let _serial = serial();
    watchdog(120, || injected_bursts(1, 0x5eed_0001));
}

#[test]
fn lost_wakeup_bursts_injected_into_three_workers() {
    let _serial = serial();
    watchdog(120, || injected_bursts(3, 0x5eed_0002));
}

#[test]
fn lost_wakeup_bursts_of_install() {
    let _serial = serial();
    watchdog(120, || {
        let n = 2;
        let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let mut pacer = Pacer::new(0x5eed_0003);
        run_bursts("install", move |burst| {
            pacer.before_round(&pool, n);
            // The first closure of the join blocks until the second one has
            // run, which it can then only do on another worker: a parked
            // worker must be woken for the join's local job.
            let latch = Countdown::new(1);
            let (left, ()) =
                pool.install(|| stealpool::join(|| latch.wait(BURST_WAIT), || latch.count_down()));
            assert_eq!(
                left, 0,
                "burst {burst}: join's second closure was not stolen by another worker"
            );
        });
    });
}

#[test]
fn lost_wakeup_bursts_spawned_from_a_worker() {
    let _serial = serial();
    watchdog(120, || {
        let n = 3;
        let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let mut pacer = Pacer::new(0x5eed_0004);
        run_bursts("spawned-from-worker", move |burst| {
            pacer.before_round(&pool, n);
            // A root job spawns children onto its own worker's deque and then
            // blocks until they ran, so they can only run on other workers,
            // which must be woken up for them.
            let children = pacer.rng.usize(1..=2 * n);
            let children_done = Countdown::new(children);
            let (tx, rx) = mpsc::channel();
            {
                let children_done = Arc::clone(&children_done);
                pool.spawn(move || {
                    for _ in 0..children {
                        let children_done = Arc::clone(&children_done);
                        stealpool::spawn(move || children_done.count_down());
                    }
                    tx.send(children_done.wait(BURST_WAIT)).unwrap();
                });
            }
            let left = rx
                .recv_timeout(BURST_WAIT * 2)
                .unwrap_or_else(|_| panic!("burst {burst}: the injected root job never ran"));
            assert_eq!(
                left, 0,
                "burst {burst}: {left} of {children} jobs spawned by a blocked worker \
                 were not run by another worker"
            );
        });
    });
}

fn quicksort(v: &mut [u64]) {
    if v.len() <= 32 {
        v.sort_unstable();
        return;
    }
    // Median of three as the pivot, moved to the end (Lomuto partition).
    let last = v.len() - 1;
    let mid = v.len() / 2;
    if v[mid] < v[0] {
        v.swap(mid, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[mid] < v[last] {
        v.swap(mid, last);
    }
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    let (left, right) = v.split_at_mut(store);
    stealpool::join(|| quicksort(left), || quicksort(&mut right[1..]));
}

#[test]
fn join_quicksort_of_a_million_random_u64() {
    let _serial = serial();
    watchdog(120, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let mut data = random_u64s(MILLION, 0x5eed_0004);
        let mut expected = data.clone();
        expected.sort();
        pool.install(|| quicksort(&mut data));
        assert!(
            data == expected,
            "parallel quicksort result differs from sort()"
        );
    });
}

#[test]
fn half_a_million_pool_joins_on_two_threads() {
    let _serial = serial();
    // Like rayon-core's join_counter_overflow: many joins from outside the pool.
    watchdog(120, || {
        const JOINS: u32 = 500_000;
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (mut a, mut b) = (0u32, 0u32);
        for _ in 0..JOINS {
            pool.join(|| a += 1, || b += 1);
        }
        assert_eq!((a, b), (JOINS, JOINS));
    });
}
