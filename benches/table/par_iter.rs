//! The `par_iter` row's workloads, through the `rayon` crate. Compiled twice: into the
//! table (rayon on the real rayon-core) and into `compat/rayon-check`'s `par_iter` bench
//! (the same rayon on stealpool through `compat/rayon-core`).

use rayon::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Medians in seconds of `[map-reduce sum of 10M, par_sort_unstable of 4M u64]` on
/// rayon's global pool, built with `threads` workers.
pub fn par_iter_medians(threads: usize, rounds: usize, shrink: u32) -> [f64; 2] {
    // The global pool may already exist (only its first build counts).
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let n: u64 = 10_000_000 >> shrink;
    let len = 4_000_000 >> shrink;
    let mut rng = fastrand::Rng::with_seed(11);
    let input: Vec<u64> = (0..len).map(|_| rng.u64(..)).collect();
    let mut buf = input.clone();
    let expected_sum: u64 = (0..n).map(|x| x ^ (x >> 3)).fold(0, u64::wrapping_add);
    let mut sums = Vec::new();
    let mut sorts = Vec::new();
    for round in 0..=rounds {
        let start = Instant::now();
        let sum = (0..black_box(n))
            .into_par_iter()
            .map(|x| x ^ (x >> 3))
            .reduce(|| 0, u64::wrapping_add);
        let t_sum = start.elapsed();
        assert_eq!(sum, expected_sum);
        buf.copy_from_slice(&input);
        let start = Instant::now();
        black_box(&mut buf).par_sort_unstable();
        let t_sort = start.elapsed();
        assert!(buf.windows(2).all(|w| w[0] <= w[1]));
        if round > 0 {
            // Round 0 is the warm-up.
            sums.push(t_sum);
            sorts.push(t_sort);
        }
    }
    [median(&mut sums), median(&mut sorts)]
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}
