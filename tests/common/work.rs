//! The work tests hand a pool: a fork-join load, seeded random data (the same on every
//! run), and a busy delay.

use std::time::Instant;

/// fib with one `join` per call and no cutoff: the finest-grained fork-join load.
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// A seeded RNG so that every run of a test sees the same data.
pub fn rng(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

/// `n` pseudo-random `u64`s from `seed`.
pub fn random_u64s(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = rng(seed);
    (0..n).map(|_| rng.u64(..)).collect()
}

/// Busy-waits for `nanos` nanoseconds (a delay that keeps the thread running).
pub fn spin_for(nanos: u64) {
    let start = Instant::now();
    while (start.elapsed().as_nanos() as u64) < nanos {
        std::hint::spin_loop();
    }
}
