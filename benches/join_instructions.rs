//! The fixed workload behind `scripts/join-instructions`: fib(n) with one `join` per call,
//! repeated, on a one-worker pool of stealpool, rayon-core or chili, or sequentially.
//! Run under `valgrind --tool=callgrind`, the instruction counts of two pools over the
//! same workload differ by what their `join`s cost (`docs/join.md`, "Cost").
//!
//! ```text
//! cargo bench --bench join_instructions -- stealpool 25 5
//! ```
//!
//! Arguments: the pool (`stealpool`, `rayon-core`, `chili` or `sequential`), n, the
//! number of repetitions. Prints the result and the number of `join`s made.

// The peers' fib (their tree-sum is unused here).
#[allow(dead_code)]
#[path = "table/peers.rs"]
mod peers;
// The sequential fib (the table's other workloads are unused here).
#[allow(dead_code)]
#[path = "table/workload.rs"]
mod workload;

use peers::{fib_chili, fib_rc};
use std::hint::black_box;
use std::num::NonZero;
use workload::fib_seq;

fn fib_sp(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib_sp(n - 1), || fib_sp(n - 2));
    a + b
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let usage = "usage: join_instructions stealpool|rayon-core|chili|sequential N REPS";
    let (pool, n, reps) = match args.as_slice() {
        [pool, n, reps] => (
            pool.as_str(),
            n.parse::<u64>().expect(usage),
            reps.parse::<u32>().expect(usage),
        ),
        // `cargo bench` with no arguments (or `--test`): a small smoke run of each.
        _ => {
            for pool in ["stealpool", "rayon-core", "chili", "sequential"] {
                run(pool, 10, 1);
            }
            return;
        }
    };
    run(pool, n, reps);
}

/// Lets the process's barrier mode settle before counting: the membarrier registration
/// starts when a worker first parks and takes an RCU grace period (milliseconds), so a
/// short run would count the fence pair of the first milliseconds instead of the steady
/// state. Where membarrier is refused (or under `--cfg stealpool_fences`) the mode stays
/// `"fences"`, which is then the steady state: wait at most 200 ms for it.
fn settle_barrier_mode() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    while stealpool::__barrier_mode() == "fences" && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn run(pool: &str, n: u64, reps: u32) {
    let expected = fib_seq(n);
    let mut sum = 0;
    match pool {
        "stealpool" => {
            let p = stealpool::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            settle_barrier_mode();
            for _ in 0..reps {
                sum += p.install(|| fib_sp(black_box(n)));
            }
        }
        "rayon-core" => {
            let p = rayon_core::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            for _ in 0..reps {
                sum += p.install(|| fib_rc(black_box(n)));
            }
        }
        "chili" => {
            let p = chili::ThreadPool::with_config(chili::Config {
                thread_count: NonZero::new(1),
                ..Default::default()
            });
            for _ in 0..reps {
                sum += fib_chili(&mut p.scope(), black_box(n));
            }
        }
        "sequential" => {
            for _ in 0..reps {
                sum += fib_seq(black_box(n));
            }
        }
        other => panic!("unknown pool {other:?}"),
    }
    assert_eq!(sum, expected * u64::from(reps));
    let joins = (fib_seq(n + 1) - 1) * u64::from(reps);
    println!(
        "{pool} fib({n}) x {reps}: {sum}, {joins} joins (stealpool's barrier: {})",
        stealpool::__barrier_mode()
    );
}
