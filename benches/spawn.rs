//! Spawn-heavy workloads: stealpool against rayon-core, side by side.
//!
//! * `scope_spawn/N`: one scope that spawns N tiny tasks from its body (the injector /
//!   own-deque push path, stealing by the other workers, the scope's count latch).
//! * `spawn_wait/N`: N `spawn`s from outside the pool and a latch counted down by each
//!   (the injector path and wake-ups of parked workers).
//! * `broadcast`: one blocking `broadcast` of a trivial closure (wake every worker).
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

criterion_group!(benches, spawn_benches);
criterion_main!(benches);
