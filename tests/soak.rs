//! A randomised soak: every API at once, from pool and outside threads, across pools that
//! come and go, with pauses (so workers park) and panics. It checks that every job ran
//! exactly once (each job bumps its own slot; a slot above 1 is a duplicate, one at 0 a
//! loss), that every `JoinHandle` completes with its value, and that every panic reaches
//! the place the API routes it to.
//!
//! Ignored by default: `cargo test --release -- --ignored soak` runs it for
//! `STEALPOOL_SOAK_SECS` seconds (default 60; `.ci/run` runs 20). It prints its totals.

mod common;

use common::{quiet_expected_panics, watchdog, EXPECTED};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// One slot per job of an operation: each job bumps its own.
struct Slots(Vec<AtomicU8>);

impl Slots {
    fn new(n: usize) -> Self {
        Slots((0..n).map(|_| AtomicU8::new(0)).collect())
    }
    fn run(&self, i: usize) {
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }
    /// Counts (lost, duplicated) slots.
    fn check(&self) -> (usize, usize) {
        let mut lost = 0;
        let mut duplicated = 0;
        for slot in &self.0 {
            match slot.load(Ordering::Relaxed) {
                0 => lost += 1,
                1 => {}
                _ => duplicated += 1,
            }
        }
        (lost, duplicated)
    }
}

#[derive(Default)]
struct Totals {
    jobs: AtomicUsize,
    lost: AtomicUsize,
    duplicated: AtomicUsize,
    handles: AtomicUsize,
    panics_routed: AtomicUsize,
    ops: AtomicUsize,
    pools_built: AtomicUsize,
}

impl Totals {
    fn add(&self, slots: &Slots) {
        let (lost, duplicated) = slots.check();
        self.jobs.fetch_add(slots.0.len(), Ordering::Relaxed);
        self.lost.fetch_add(lost, Ordering::Relaxed);
        self.duplicated.fetch_add(duplicated, Ordering::Relaxed);
    }
}

fn expected_panic() -> ! {
    panic::panic_any(format!("{EXPECTED}: soak"))
}

/// A join tree with `leaves` leaves; leaf `i` bumps slot `i` (and one leaf may panic).
fn join_tree(slots: &Slots, lo: usize, hi: usize, panic_at: Option<usize>) {
    if hi - lo == 1 {
        slots.run(lo);
        if panic_at == Some(lo) {
            expected_panic();
        }
        return;
    }
    let mid = (lo + hi) / 2;
    stealpool::join(
        || join_tree(slots, lo, mid, panic_at),
        || join_tree(slots, mid, hi, panic_at),
    );
}

/// Spawns jobs `lo..hi` into `s`, half of them from nested jobs.
fn scope_spawns<'s>(s: &stealpool::Scope<'s>, slots: &'s Slots, lo: usize, hi: usize) {
    if hi - lo <= 4 {
        for i in lo..hi {
            s.spawn(move |_| slots.run(i));
        }
        return;
    }
    let mid = (lo + hi) / 2;
    s.spawn(move |s| scope_spawns(s, slots, lo, mid));
    scope_spawns(s, slots, mid, hi);
}

fn scope_body<'s>(s: &stealpool::Scope<'s>, slots: &'s Slots, n: usize, panics: bool) {
    scope_spawns(s, slots, 0, n);
    if panics {
        s.spawn(|_| expected_panic());
    }
}

/// One random operation on `pool` (maybe from inside one of its workers), checked.
fn operation(rng: &mut fastrand::Rng, pools: &[Arc<ThreadPool>], totals: &Totals) {
    let pool = &pools[rng.usize(..pools.len())];
    let other = &pools[rng.usize(..pools.len())];
    let on_worker = rng.bool();
    let panics = rng.u8(..10) == 0;
    let n = 1 + rng.usize(..200);
    let kind = rng.u8(..7);
    let run = |f: &(dyn Fn() + Sync)| {
        if on_worker {
            pool.install(f)
        } else {
            f()
        }
    };
    match kind {
        // join tree; a panicking leaf reaches the caller after every leaf ran.
        0 => {
            let slots = Slots::new(n);
            let panic_at = panics.then(|| rng.usize(..n));
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| join_tree(&slots, 0, n, panic_at))
            }));
            assert_eq!(result.is_err(), panic_at.is_some(), "join panic routing");
            totals
                .panics_routed
                .fetch_add(result.is_err() as usize, Ordering::Relaxed);
            totals.add(&slots);
        }
        // scope (or in_place_scope), nested spawns, maybe a panicking job.
        1 => {
            let slots = Slots::new(n);
            let in_place = rng.bool();
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                let slots = &slots;
                run(&|| {
                    if in_place {
                        pool.in_place_scope(|s| scope_body(s, slots, n, panics))
                    } else {
                        pool.scope(|s| scope_body(s, slots, n, panics))
                    }
                })
            }));
            assert_eq!(result.is_err(), panics, "scope panic routing");
            totals
                .panics_routed
                .fetch_add(result.is_err() as usize, Ordering::Relaxed);
            totals.add(&slots);
        }
        // spawn (fire and forget), then wait for the slots with the pool's `wait_idle`
        // when called from outside, else by polling a count.
        2 => {
            let slots = Arc::new(Slots::new(n));
            let done = Arc::new(AtomicUsize::new(0));
            for i in 0..n {
                let (slots, done) = (Arc::clone(&slots), Arc::clone(&done));
                let job = move || {
                    slots.run(i);
                    done.fetch_add(1, Ordering::Release);
                };
                if rng.bool() {
                    pool.spawn(job)
                } else {
                    pool.spawn_fifo(job)
                }
            }
            while done.load(Ordering::Acquire) < n {
                // Helps when called from a worker of this very pool.
                if stealpool::yield_now().is_none() {
                    thread::yield_now();
                }
            }
            totals.add(&slots);
        }
        // join handles, some panicking: every one completes with its value or payload.
        3 => {
            let handles: Vec<_> = (0..n.min(50))
                .map(|i| {
                    let fail = panics && i == 0;
                    pool.spawn_with_handle(move || {
                        if fail {
                            expected_panic()
                        }
                        i * 3
                    })
                })
                .collect();
            for (i, handle) in handles.into_iter().enumerate() {
                match handle.join() {
                    Ok(v) => assert_eq!(v, i * 3, "join handle value"),
                    Err(_) => {
                        assert!(panics && i == 0, "unexpected handle panic");
                        totals.panics_routed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                totals.handles.fetch_add(1, Ordering::Relaxed);
            }
        }
        // broadcast: every worker exactly once.
        4 => {
            let slots = Slots::new(pool.current_num_threads());
            let indices = pool.broadcast(|ctx| {
                slots.run(ctx.index());
                ctx.index()
            });
            assert_eq!(indices, (0..pool.current_num_threads()).collect::<Vec<_>>());
            totals.add(&slots);
        }
        // install across pools, with joins inside.
        5 => {
            let slots = Slots::new(n);
            run(&|| other.install(|| join_tree(&slots, 0, n, None)));
            totals.add(&slots);
        }
        // spawn into a scope from a job of another pool (`pool.in_place_scope` called on
        // a worker of `other`): jobs go to `pool`.
        _ => {
            let slots = Slots::new(n);
            other.install(|| pool.in_place_scope(|s| scope_spawns(s, &slots, 0, n)));
            totals.add(&slots);
        }
    }
    totals.ops.fetch_add(1, Ordering::Relaxed);
}

fn new_pool(rng: &mut fastrand::Rng, totals: &Totals) -> Arc<ThreadPool> {
    totals.pools_built.fetch_add(1, Ordering::Relaxed);
    Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(1 + rng.usize(..4))
            .build()
            .unwrap(),
    )
}

#[test]
#[ignore = "long: run with `cargo test --release -- --ignored soak` (STEALPOOL_SOAK_SECS)"]
fn soak() {
    let secs: u64 = std::env::var("STEALPOOL_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    quiet_expected_panics();
    let totals = watchdog(secs + 120, move || {
        let totals = Arc::new(Totals::default());
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut seed_rng = fastrand::Rng::with_seed(secs);
        // 1-3 pools, shared by the drivers; one of them is replaced now and then.
        let pools: Arc<Mutex<Vec<Arc<ThreadPool>>>> = Arc::new(Mutex::new(
            (0..1 + seed_rng.usize(..3))
                .map(|_| new_pool(&mut seed_rng, &totals))
                .collect(),
        ));
        let drivers: Vec<_> = (0..3)
            .map(|d| {
                let (pools, totals) = (Arc::clone(&pools), Arc::clone(&totals));
                thread::spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(1000 + d);
                    while Instant::now() < deadline {
                        let snapshot = pools.lock().unwrap().clone();
                        operation(&mut rng, &snapshot, &totals);
                        match rng.u8(..50) {
                            // A pause long enough for idle workers to park.
                            0..=4 => thread::sleep(Duration::from_micros(rng.u64(..3000))),
                            // Replace a pool: the old one ends once its users drop it.
                            5 => {
                                let fresh = new_pool(&mut rng, &totals);
                                let mut pools = pools.lock().unwrap();
                                let i = rng.usize(..pools.len());
                                pools[i] = fresh;
                            }
                            // wait_idle on a pool nobody else can reach.
                            6 => {
                                let own = new_pool(&mut rng, &totals);
                                let hits = Arc::new(AtomicUsize::new(0));
                                for _ in 0..20 {
                                    let hits = Arc::clone(&hits);
                                    own.spawn(move || {
                                        hits.fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                                own.wait_idle().unwrap();
                                assert_eq!(hits.load(Ordering::Relaxed), 20, "wait_idle");
                            }
                            _ => {}
                        }
                    }
                })
            })
            .collect();
        for driver in drivers {
            driver
                .join()
                .expect("a soak driver failed (see its panic above)");
        }
        for pool in pools.lock().unwrap().iter() {
            pool.wait_idle().unwrap();
        }
        totals
    });
    let load = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    eprintln!(
        "soak: {} ops, {} jobs checked, {} lost, {} duplicated, {} join handles, \
         {} panics routed, {} pools built",
        load(&totals.ops),
        load(&totals.jobs),
        load(&totals.lost),
        load(&totals.duplicated),
        load(&totals.handles),
        load(&totals.panics_routed),
        load(&totals.pools_built),
    );
    assert_eq!(load(&totals.lost), 0, "jobs lost");
    assert_eq!(load(&totals.duplicated), 0, "jobs run twice");
    assert!(load(&totals.ops) > 0);
}
