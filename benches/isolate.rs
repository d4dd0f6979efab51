//! What `isolate` costs (`docs/isolation.md`, `docs/performance.md`, "Isolation"): the same
//! fork-join work run by `install` and by `isolate` on one pool, and by `install` on a
//! pool built with `isolate_waits(true)`, medians of 9 calls.
//!
//! ```text
//! cargo bench --bench isolate               # 2 workers
//! STEALPOOL_NUM_THREADS=1 cargo bench --bench isolate
//! ```

use std::time::{Duration, Instant};

/// Spins for `d` (a leaf that keeps its worker busy).
fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {}
}

/// A balanced `join` tree over `n` leaves of 1 ms each.
fn leaves(n: usize) {
    if n == 1 {
        return spin(Duration::from_millis(1));
    }
    stealpool::join(|| leaves(n / 2), || leaves(n / 2));
}

/// Fibonacci with a `join` per call.
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// A `join` tree of `2^depth` leaves.
fn tree(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = stealpool::join(|| tree(depth - 1), || tree(depth - 1));
    a + b
}

/// The median of `runs` timed calls of `call`, in ms.
fn median_ms(runs: usize, mut call: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            call();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    // `cargo test --benches` runs bench targets with `--bench`-less flags: one quick pass.
    let quick = std::env::args().any(|a| a == "--test");
    let runs = if quick { 1 } else { 9 };
    let threads = std::env::var("STEALPOOL_NUM_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let build = |isolate_waits| {
        stealpool::ThreadPoolBuilder::new()
            .num_threads(threads)
            .isolate_waits(isolate_waits)
            .build()
            .unwrap()
    };
    let (pool, isolating) = (build(false), build(true));
    println!("{threads} worker(s), median of {runs} calls\n");
    println!(
        "| work | install | isolate | `isolate_waits(true)` | isolate / install | \
         isolate_waits / install |\n| --- | ---: | ---: | ---: | ---: | ---: |"
    );
    let work: [(&str, fn()); 3] = [
        ("64 leaves of 1 ms", || leaves(64)),
        ("fib(25)", || assert_eq!(fib(25), 75_025)),
        ("tree-sum 2^16", || assert_eq!(tree(16), 1 << 16)),
    ];
    for (name, work) in work {
        let install = median_ms(runs, || pool.install(work));
        let isolate = median_ms(runs, || pool.isolate(work));
        let every_job = median_ms(runs, || isolating.install(work));
        println!(
            "| {name} | {install:.3} ms | {isolate:.3} ms | {every_job:.3} ms | {:.2}x | {:.2}x |",
            isolate / install,
            every_job / install
        );
    }
}
