//! Spawn-heavy workloads: stealpool against rayon-core, side by side.
//!
//! * `scope_spawn/N`: one scope that spawns N tiny tasks from its body (the injector /
//!   own-deque push path, stealing by the other workers, the scope's count latch).
//! * `spawn_wait/N`: N `spawn`s from outside the pool and a latch counted down by each
//!   (the injector path and wake-ups of parked workers).
//! * `broadcast`: one blocking `broadcast` of a trivial closure (wake every worker).
//! * `park_round_trip`: a 1-worker pool, parked; one outside `spawn` of an empty job, then
//!   wait until the worker has parked again (its metrics count the park): a wake-up, the
//!   job, the idle rounds and one park (the heavy barrier). stealpool only: rayon-core
//!   has no way to see that a worker parked.
//!
//! Each pool is built once with its default size (one worker per logical CPU).
//!
//! ```text
//! cargo bench --bench spawn
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// A count-down latch for the outside thread (the same for both pools).
struct Done {
    left: AtomicUsize,
    lock: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    fn new(n: usize) -> Arc<Self> {
        Arc::new(Done {
            left: AtomicUsize::new(n),
            lock: Mutex::new(false),
            cv: Condvar::new(),
        })
    }
    fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.lock.lock().unwrap() = true;
            self.cv.notify_all();
        }
    }
    fn wait(&self) {
        let mut done = self.lock.lock().unwrap();
        while !*done {
            done = self.cv.wait(done).unwrap();
        }
    }
}

fn spawn_benches(c: &mut Criterion) {
    let sp = stealpool::ThreadPoolBuilder::new().build().unwrap();
    let rc = rayon_core::ThreadPoolBuilder::new().build().unwrap();

    let mut group = c.benchmark_group("scope_spawn");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for n in [1_000usize, 10_000] {
        group.bench_with_input(BenchmarkId::new("stealpool", n), &n, |b, &n| {
            b.iter(|| {
                let hits = AtomicUsize::new(0);
                sp.scope(|s| {
                    for _ in 0..n {
                        s.spawn(|_| {
                            hits.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                assert_eq!(hits.into_inner(), n);
            })
        });
        group.bench_with_input(BenchmarkId::new("rayon-core", n), &n, |b, &n| {
            b.iter(|| {
                let hits = AtomicUsize::new(0);
                rc.scope(|s| {
                    for _ in 0..n {
                        s.spawn(|_| {
                            hits.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                assert_eq!(hits.into_inner(), n);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("spawn_wait");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for n in [1_000usize, 10_000] {
        group.bench_with_input(BenchmarkId::new("stealpool", n), &n, |b, &n| {
            b.iter(|| {
                let done = Done::new(n);
                for _ in 0..n {
                    let done = Arc::clone(&done);
                    sp.spawn(move || done.count_down());
                }
                done.wait();
            })
        });
        group.bench_with_input(BenchmarkId::new("rayon-core", n), &n, |b, &n| {
            b.iter(|| {
                let done = Done::new(n);
                for _ in 0..n {
                    let done = Arc::clone(&done);
                    rc.spawn(move || done.count_down());
                }
                done.wait();
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("broadcast");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function("stealpool", |b| {
        b.iter(|| black_box(sp.broadcast(|ctx| ctx.index())))
    });
    group.bench_function("rayon-core", |b| {
        b.iter(|| black_box(rc.broadcast(|ctx| ctx.index())))
    });
    group.finish();
}

fn park_round_trip(c: &mut Criterion) {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    // Parked = the worker counted a park (it did so just before its condvar wait), not
    // merely registered as a sleeper: a wake-up that lands between the two finds a worker
    // that never blocked, which is a different (cheaper) path.
    let parks = |pool: &stealpool::ThreadPool| pool.metrics().workers[0].parks;
    let wait_parked = |pool: &stealpool::ThreadPool, before: u64| {
        let unparks = |pool: &stealpool::ThreadPool| pool.metrics().workers[0].unparks;
        while parks(pool) == before || parks(pool) == unparks(pool) {
            std::hint::spin_loop();
        }
    };
    wait_parked(&pool, 0);
    let mut group = c.benchmark_group("park_round_trip");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function("stealpool", |b| {
        b.iter(|| {
            let before = parks(&pool);
            let done = Done::new(1);
            let job_done = Arc::clone(&done);
            pool.spawn(move || job_done.count_down());
            done.wait();
            wait_parked(&pool, before);
        })
    });
    group.finish();
}

criterion_group!(benches, spawn_benches, park_round_trip);
criterion_main!(benches);
