//! Measuring: interleaved samples, medians and percentiles, CPU clocks, and the probes
//! that several rows (and `benches/feature-cost`) share: wake-ups, sporadic spawns,
//! injection under load.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
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

/// Which rows to run: `TABLE_ROWS=fib,wake` names them (the caller lists its keys);
/// unset, every row.
pub fn row_filter() -> impl Fn(&str) -> bool {
    let only = std::env::var("TABLE_ROWS").ok();
    move |key| {
        only.as_deref()
            .map_or(true, |o| o.split(',').any(|k| k == key))
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

/// `s` seconds as the table prints times: the unit that keeps 1-3 digits before the
/// point, "—" for NaN (a column that does not apply).
pub fn fmt_time(s: f64) -> String {
    match s {
        s if s.is_nan() => "—".into(),
        s if s >= 1.0 => format!("{s:.2} s"),
        s if s >= 1e-3 => format!("{:.2} ms", s * 1e3),
        s if s >= 1e-6 => format!("{:.1} µs", s * 1e6),
        s => format!("{:.2} ns", s * 1e9),
    }
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
    cpu_time::process()
}

/// CPU time used so far by the calling thread.
pub fn thread_cpu() -> Duration {
    cpu_time::thread()
}

#[cfg(unix)]
mod cpu_time {
    use std::time::Duration;

    pub fn process() -> Duration {
        clock(libc::CLOCK_PROCESS_CPUTIME_ID)
    }

    pub fn thread() -> Duration {
        clock(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    fn clock(id: libc::clockid_t) -> Duration {
        // SAFETY: `clock_gettime` writes a `timespec` into the zeroed struct we own.
        let ts = unsafe {
            let mut ts: libc::timespec = std::mem::zeroed();
            assert_eq!(libc::clock_gettime(id, &mut ts), 0, "clock_gettime failed");
            ts
        };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
}

#[cfg(windows)]
mod cpu_time {
    use std::time::Duration;
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, GetCurrentThread, GetProcessTimes, GetThreadTimes,
    };

    const ZERO: FILETIME = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };

    /// User plus kernel time, each in 100 ns units.
    fn sum(user: FILETIME, kernel: FILETIME) -> Duration {
        let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
        Duration::from_nanos((ticks(user) + ticks(kernel)) * 100)
    }

    pub fn process() -> Duration {
        let (mut c, mut e, mut k, mut u) = (ZERO, ZERO, ZERO, ZERO);
        // SAFETY: the pseudo-handle of the current process, and four valid out-pointers.
        let ok = unsafe { GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u) };
        assert_ne!(ok, 0, "GetProcessTimes failed");
        sum(u, k)
    }

    pub fn thread() -> Duration {
        let (mut c, mut e, mut k, mut u) = (ZERO, ZERO, ZERO, ZERO);
        // SAFETY: the pseudo-handle of the current thread, and four valid out-pointers.
        let ok = unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) };
        assert_ne!(ok, 0, "GetThreadTimes failed");
        sum(u, k)
    }
}

/// Elsewhere no CPU clock: the rows that need one read zero.
#[cfg(not(any(unix, windows)))]
mod cpu_time {
    use std::time::Duration;

    pub fn process() -> Duration {
        Duration::ZERO
    }

    pub fn thread() -> Duration {
        Duration::ZERO
    }
}

/// Busy-waits for `d` (a leaf that never calls into the pool).
pub fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A count-down the outside thread blocks on (std park/unpark; the same for both pools).
pub struct Countdown {
    left: AtomicUsize,
    waiter: thread::Thread,
}

impl Countdown {
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Countdown {
            left: AtomicUsize::new(n),
            waiter: thread::current(),
        })
    }
    pub fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.waiter.unpark();
        }
    }
    pub fn wait(&self) {
        while self.left.load(Ordering::Acquire) != 0 {
            thread::park();
        }
    }
}

/// One wake-up: idle 5 ms (every worker parks), then one outside `spawn`; the time until
/// the job starts, in seconds.
pub fn wake_sample(spawn: &dyn Fn(Box<dyn FnOnce() + Send>)) -> f64 {
    thread::sleep(Duration::from_millis(5));
    let (tx, rx) = mpsc::channel();
    let t0 = Instant::now();
    spawn(Box::new(move || {
        let _ = tx.send(t0.elapsed());
    }));
    rx.recv().expect("the job ran").as_secs_f64()
}

/// CPU per second of wall time, all threads, while the caller hands one empty job per
/// millisecond to `spawn` for `window`.
pub fn sporadic_rate(window: Duration, spawn: &dyn Fn(Box<dyn FnOnce() + Send>)) -> f64 {
    let p0 = process_cpu();
    let start = Instant::now();
    while start.elapsed() < window {
        spawn(Box::new(|| {}));
        thread::sleep(Duration::from_millis(1));
    }
    (process_cpu() - p0).as_secs_f64() / start.elapsed().as_secs_f64()
}

/// Injection under load: while a join tree keeps every worker busy for ~`load` of wall
/// time, the outside thread spawns one empty job at a time and records how long each
/// waited to start (a job still waiting when the tree ends counts the whole wait).
/// Returns (p50, p90) in seconds.
pub fn injection_latencies(
    plan: Plan,
    run_load: &(dyn Fn(&AtomicBool) + Sync),
    spawn: &dyn Fn(Box<dyn FnOnce() + Send>),
) -> (f64, f64) {
    let mut samples = Vec::new();
    for _ in 0..3 {
        let started = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                run_load(&started);
                finished.store(true, Ordering::Release);
            });
            while !started.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            while !finished.load(Ordering::Acquire) {
                let (tx, rx) = mpsc::channel();
                let t0 = Instant::now();
                spawn(Box::new(move || {
                    let _ = tx.send(t0.elapsed());
                }));
                samples.push(rx.recv().expect("the job ran").as_secs_f64());
                thread::sleep(Duration::from_millis(1));
            }
        });
        if plan.shrink > 0 {
            break;
        }
    }
    (percentile(&mut samples, 0.5), percentile(&mut samples, 0.9))
}

/// A thread that spins on one CPU until dropped: the noisy neighbour of the
/// `TABLE_BUSY_CPU` condition. Pinned with `sched_setaffinity` on Linux; elsewhere it
/// spins wherever the OS puts it.
pub struct BusyLoop {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BusyLoop {
    pub fn start(cpu: usize) -> BusyLoop {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            pin_to(cpu);
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        BusyLoop {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BusyLoop {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the busy loop never panics");
        }
    }
}

#[cfg(target_os = "linux")]
fn pin_to(cpu: usize) {
    // SAFETY: `set` is a zeroed `cpu_set_t` that CPU_SET fills; sched_setaffinity(0, ..)
    // reads it for the calling thread only.
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    };
    assert!(ok, "TABLE_BUSY_CPU: cannot pin to CPU {cpu}");
}

#[cfg(not(target_os = "linux"))]
fn pin_to(_cpu: usize) {}
