//! The `par_iter` sweep's child: `v.par_iter().map(..).sum()` over `n` elements built in
//! this process, on rayon's global pool. Compiled twice: into `benches/sweep` (the
//! `rayon` crate on the real rayon-core) and into `compat/rayon-check`'s `par_iter_sweep`
//! bench (the same `rayon` on stealpool through `compat/rayon-core`).

use rayon::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The per-pass wall times, in seconds, of `passes` calls (after one warm-up call) on the
/// global pool of `threads` workers (`threads == 0`: the sequential loop, no pool), with
/// `gap` of sleep before each call (the workers park in between when `gap` is long).
pub fn par_iter_passes(threads: usize, n: usize, passes: usize, gap: Duration) -> Vec<f64> {
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .expect("the global pool is built once, here");
    }
    let v: Vec<u64> = (0..n as u64).collect();
    let expected: u64 = v.iter().map(|x| x ^ (x >> 3)).fold(0, u64::wrapping_add);
    let call = |v: &[u64]| -> u64 {
        if threads == 0 {
            v.iter().map(|x| x ^ (x >> 3)).fold(0, u64::wrapping_add)
        } else {
            v.par_iter()
                .map(|x| x ^ (x >> 3))
                .reduce(|| 0, u64::wrapping_add)
        }
    };
    assert_eq!(call(black_box(&v)), expected);
    let mut times = Vec::with_capacity(passes);
    for _ in 0..passes {
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let start = Instant::now();
        let sum = call(black_box(&v));
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(sum, expected);
    }
    times
}
