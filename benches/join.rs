//! `join` overhead: stealpool against rayon-core, side by side.
//!
//! Recursive Fibonacci with one `join` per call and no sequential cutoff, so
//! the time is dominated by the cost of `join` itself (pushing a job, maybe
//! having it stolen, waiting for it). Each pool is built once with its
//! default size and every measurement runs inside `pool.install`. A serial
//! version gives the no-pool baseline.
//!
//! ```text
//! cargo bench --bench join            # full run
//! cargo bench --bench join -- --test  # quick check that everything runs
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const SIZES: [u64; 2] = [20, 25];

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    fib_serial(n - 1) + fib_serial(n - 2)
}

fn fib_stealpool(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib_stealpool(n - 1), || fib_stealpool(n - 2));
    a + b
}

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon_core::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_join(c: &mut Criterion) {
    let stealpool_pool = stealpool::ThreadPoolBuilder::new()
        .build()
        .expect("build stealpool pool");
    let rayon_pool = rayon_core::ThreadPoolBuilder::new()
        .build()
        .expect("build rayon-core pool");

    let mut group = c.benchmark_group("fib_join");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));

    for n in SIZES {
        // All three must agree before anything is timed.
        let expected = fib_serial(n);
        assert_eq!(stealpool_pool.install(|| fib_stealpool(n)), expected);
        assert_eq!(rayon_pool.install(|| fib_rayon(n)), expected);

        group.bench_with_input(BenchmarkId::new("serial", n), &n, |b, &n| {
            b.iter(|| fib_serial(black_box(n)))
        });
        group.bench_with_input(BenchmarkId::new("stealpool", n), &n, |b, &n| {
            b.iter(|| stealpool_pool.install(|| fib_stealpool(black_box(n))))
        });
        group.bench_with_input(BenchmarkId::new("rayon-core", n), &n, |b, &n| {
            b.iter(|| rayon_pool.install(|| fib_rayon(black_box(n))))
        });
    }
    group.finish();
}

criterion_group!(benches, fib_join);
criterion_main!(benches);
