//! What `isolate` costs (`docs/isolation.md`, `docs/performance.md`, "Isolation"): the
//! benchmark table's fork-join work (`benches/table/forkjoin.rs`: fib(30), tree-sum over
//! 2^22 boxed nodes, quicksort of 4M `u64`, and smaller sizes) run by `install` and by
//! `isolate` on one pool, and by `install` on a pool built with `isolate_waits(true)`,
//! medians of 9 interleaved rounds.
//!
//! ```text
//! cargo bench --bench isolate               # 2 workers
//! STEALPOOL_NUM_THREADS=1 cargo bench --bench isolate
//! ```

#[allow(dead_code)]
#[path = "table/workload.rs"]
mod workload;

use std::sync::Mutex;
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

/// Fibonacci with a `join` per call (the table's `sp_work::fib`).
fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// The sum of a boxed tree with a `join` per node (the table's `sp_work::tree_sum`).
fn tree_sum(node: &workload::Node) -> u64 {
    let (l, r) = stealpool::join(
        || node.left.as_deref().map_or(0, tree_sum),
        || node.right.as_deref().map_or(0, tree_sum),
    );
    node.value + l + r
}

/// Quicksort with a `join` per partition (the table's `sp_work::quicksort`).
fn quicksort(v: &mut [u64]) {
    if v.len() <= workload::QS_CUTOFF {
        return v.sort_unstable();
    }
    let mid = workload::partition(v);
    let (l, r) = v.split_at_mut(mid);
    stealpool::join(|| quicksort(l), || quicksort(&mut r[1..]));
}

/// The medians of `runs` timed calls of each of `calls`, in ms, the calls interleaved
/// (one of each per round) so that a drift of the machine weighs on all of them alike.
fn medians_ms<const N: usize>(runs: usize, calls: [&dyn Fn(); N]) -> [f64; N] {
    let mut times = [(); N].map(|()| Vec::with_capacity(runs));
    for _ in 0..runs {
        for (call, times) in calls.iter().zip(&mut times) {
            let start = Instant::now();
            call();
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.map(|mut times| {
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    })
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

    let (small, large) = (workload::tree_bfs(16), workload::tree_bfs(22));
    let (small_sum, large_sum) = (workload::sum_seq(&small), workload::sum_seq(&large));
    let mut rng = fastrand::Rng::with_seed(7);
    let input: Vec<u64> = (0..4_000_000).map(|_| rng.u64(..)).collect();
    let mut sorted = input.clone();
    sorted.sort_unstable();
    // Each call sorts a fresh copy (the copy is timed too, the same in every column).
    let buf = Mutex::new(input.clone());
    let sort = || {
        let mut buf = buf.lock().unwrap();
        buf.copy_from_slice(&input);
        quicksort(&mut buf);
        assert!(*buf == sorted, "quicksort gave a wrong order");
    };
    let work: [(&str, &(dyn Fn() + Sync)); 6] = [
        ("64 leaves of 1 ms", &|| leaves(64)),
        ("fib(25)", &|| assert_eq!(fib(25), 75_025)),
        ("fib(30)", &|| assert_eq!(fib(30), 832_040)),
        ("tree-sum, 2^16 boxed nodes", &|| {
            assert_eq!(tree_sum(&small), small_sum)
        }),
        ("tree-sum, 2^22 boxed nodes", &|| {
            assert_eq!(tree_sum(&large), large_sum)
        }),
        ("quicksort 4M u64, cutoff 1000", &sort),
    ];

    println!("{threads} worker(s), median of {runs} interleaved rounds\n");
    println!(
        "| work | install | isolate | `isolate_waits(true)` | isolate / install | \
         isolate_waits / install |\n| --- | ---: | ---: | ---: | ---: | ---: |"
    );
    for (name, work) in work {
        let [install, isolate, every_job] = medians_ms(
            runs,
            [&|| pool.install(work), &|| pool.isolate(work), &|| {
                isolating.install(work)
            }],
        );
        println!(
            "| {name} | {install:.3} ms | {isolate:.3} ms | {every_job:.3} ms | {:.2}x | {:.2}x |",
            isolate / install,
            every_job / install
        );
    }
}
