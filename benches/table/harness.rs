//! Measuring: interleaved samples, medians and percentiles, CPU clocks.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How big and how often: the full table, or `--test`'s quick check that every row runs.
#[derive(Clone, Copy)]
pub struct Plan {
    /// Samples per candidate for the throughput rows.
    pub rounds: usize,
    /// Wall time of each CPU-measuring window.
    pub window: Duration,
    /// Samples of each latency row.
    pub latency_samples: usize,
    /// Divides the problem sizes (1 for the real table).
    pub shrink: u32,
}

impl Plan {
    pub fn full() -> Self {
        Plan {
            rounds: 31,
            window: Duration::from_millis(500),
            latency_samples: 200,
            shrink: 0,
        }
    }

    pub fn quick() -> Self {
        Plan {
            rounds: 1,
            window: Duration::from_millis(20),
            latency_samples: 3,
            shrink: 4,
        }
    }
}

/// Wall time of one call; the result goes through `black_box`.
pub fn time<R>(f: impl FnOnce() -> R) -> Duration {
    let start = Instant::now();
    black_box(f());
    start.elapsed()
}

/// Runs every candidate `rounds` times, interleaved (one sample of each in turn, so slow
/// drifts of the machine hit all of them alike), after one warm-up call each. Returns
/// the median per candidate, in seconds.
pub fn interleaved(rounds: usize, candidates: &mut [&mut dyn FnMut() -> Duration]) -> Vec<f64> {
    for c in candidates.iter_mut() {
        c();
    }
    let mut samples = vec![Vec::with_capacity(rounds); candidates.len()];
    for _ in 0..rounds {
        for (c, s) in candidates.iter_mut().zip(samples.iter_mut()) {
            s.push(c().as_secs_f64());
        }
    }
    samples.iter_mut().map(|s| percentile(s, 0.5)).collect()
}

/// The `p` quantile (0.0..=1.0) of `samples`, nearest rank.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    assert!(!samples.is_empty());
    samples.sort_by(f64::total_cmp);
    let rank = ((samples.len() - 1) as f64 * p).round() as usize;
    samples[rank]
}

/// CPU time used so far by the whole process (all threads, dead ones included).
pub fn process_cpu() -> Duration {
    rusage(libc::RUSAGE_SELF)
}

/// CPU time used so far by the calling thread.
pub fn thread_cpu() -> Duration {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: `getrusage` writes a `rusage` into the zeroed struct we own; nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(who, &mut usage), 0, "getrusage failed");
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Busy-waits for `d` (a leaf that never calls into the pool).
pub fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}
