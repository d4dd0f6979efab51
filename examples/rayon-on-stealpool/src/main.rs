//! The `rayon` crate from crates.io, unchanged, running on stealpool: this workspace's
//! `Cargo.toml` patches rayon-core to `compat/rayon-core`, which re-exports stealpool. The
//! program uses rayon's parallel iterators as any rayon program does, then asks stealpool
//! where the work ran.
//!
//! ```text
//! cargo run --release --manifest-path examples/rayon-on-stealpool/Cargo.toml
//! cargo tree --manifest-path examples/rayon-on-stealpool/Cargo.toml -i rayon-core
//! ```

use rayon::prelude::*;
use std::collections::BTreeSet;
use std::sync::Mutex;

fn main() {
    // A pool built with rayon's builder is a `stealpool::ThreadPool`: the type annotation
    // compiles only because rayon's `ThreadPool` is stealpool's through the patch.
    let pool: stealpool::ThreadPool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("cannot build the pool");

    let v: Vec<u64> = (0..1_000_000).collect();
    let workers = Mutex::new(BTreeSet::new());
    let (sum, sorted) = pool.install(|| {
        // Plain rayon: a map/sum, and a parallel sort.
        let sum: u64 = v
            .par_iter()
            .map(|&x| {
                // stealpool's own view of the thread that runs this item.
                let index = stealpool::current_thread_index();
                workers.lock().unwrap().insert(index);
                x * 2
            })
            .sum();
        let mut sorted: Vec<u64> = v.iter().rev().copied().collect();
        sorted.par_sort_unstable();
        (sum, sorted)
    });
    assert_eq!(sum, 999_999_000_000);
    assert_eq!(sorted, v);

    // Every item ran on one of stealpool's two workers, never outside the pool.
    let workers = workers.into_inner().unwrap();
    println!("par_iter items ran on stealpool workers {workers:?}");
    assert!(!workers.is_empty());
    assert!(workers.iter().all(|w| matches!(w, Some(0 | 1))));

    // The pool's counters saw the work: the `install` came in through its injector.
    let metrics = pool.metrics();
    println!("{metrics}");
    assert!(metrics.injected_jobs >= 1);
    assert!(metrics.total().jobs_executed >= 1);

    // Outside `install`, rayon uses its global pool: stealpool's global pool.
    let before = stealpool::metrics().total().jobs_executed;
    let evens = v.par_iter().filter(|&&x| x % 2 == 0).count();
    assert_eq!(evens, 500_000);
    let after = stealpool::metrics().total().jobs_executed;
    println!("global pool: {} jobs for one par_iter", after - before);
    assert!(after > before);
}
