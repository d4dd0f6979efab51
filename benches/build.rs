//! What building a pool costs: stealpool against rayon-core, side by side, in a process
//! that already runs 4 other threads (as a CLI tool, a test binary or a server does).
//!
//! * `first_pool/<lib>`: the first pool of a fresh process: build a 2-thread pool, run a
//!   first `install`, drop the pool. Each iteration forks a child that starts 4 parked
//!   threads, then times those three steps alone and reports the time through a pipe, so
//!   one-time process-wide costs (such as registering for `membarrier(2)`) are counted
//!   every time. The parent never builds a pool itself before this group runs.
//! * `build_drop/<lib>` and `build_install_drop/<lib>`: the same steps repeated in one
//!   process, after the first pool (the steady state).
//!
//! ```text
//! cargo bench --bench build
//! ```

use std::hint::black_box;
#[cfg(target_os = "linux")]
use std::io::{Read, Write};
#[cfg(target_os = "linux")]
use std::os::fd::FromRawFd;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

/// Other threads alive in the process while the pool is built.
const OTHER_THREADS: usize = 4;

/// Starts `OTHER_THREADS` threads that park for the rest of the process.
fn start_other_threads() {
    for _ in 0..OTHER_THREADS {
        std::thread::spawn(|| loop {
            std::thread::park();
        });
    }
}

fn stealpool_first_pool() {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| black_box(1)), 1);
}

fn rayon_first_pool() {
    let pool = rayon_core::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| black_box(1)), 1);
}

#[cfg(target_os = "linux")]
/// Runs `steps` in a forked child that first starts the other threads; returns how
/// long `steps` took there.
fn time_in_fresh_child(steps: fn()) -> Duration {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe failed");
    // SAFETY: the child only starts threads, runs `steps`, writes to the pipe and
    // leaves with `_exit`; this single-threaded bench process holds no lock at the fork.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        start_other_threads();
        let started = Instant::now();
        steps();
        let nanos = started.elapsed().as_nanos() as u64;
        // SAFETY: `fds[1]` is the pipe's write end, owned by this child from here on.
        let mut pipe = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        let code = i32::from(pipe.write_all(&nanos.to_le_bytes()).is_err());
        // SAFETY: leaves the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: `fds[1]` is ours to close in the parent; `fds[0]` becomes the File.
    unsafe { libc::close(fds[1]) };
    // SAFETY: `fds[0]` is the pipe's read end, owned by nobody else.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let mut bytes = [0u8; 8];
    pipe.read_exact(&mut bytes).expect("child reported no time");
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    Duration::from_nanos(u64::from_le_bytes(bytes))
}

#[cfg(target_os = "linux")]
fn first_pool(c: &mut Criterion) {
    let mut group = c.benchmark_group("first_pool");
    // Each iteration is a process: few, short samples.
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(500))
        .sampling_mode(criterion::SamplingMode::Flat);
    for (name, steps) in [
        ("stealpool", stealpool_first_pool as fn()),
        ("rayon-core", rayon_first_pool),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| time_in_fresh_child(steps)).sum())
        });
    }
    group.finish();
}

fn steady_state(c: &mut Criterion) {
    start_other_threads();
    // The first pool of each library is built here, outside the timing.
    stealpool_first_pool();
    rayon_first_pool();

    let mut group = c.benchmark_group("build_drop");
    group.sample_size(20);
    group.bench_function("stealpool", |b| {
        b.iter(|| {
            stealpool::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap()
        })
    });
    group.bench_function("rayon-core", |b| {
        b.iter(|| {
            rayon_core::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("build_install_drop");
    group.sample_size(20);
    group.bench_function("stealpool", |b| b.iter(stealpool_first_pool));
    group.bench_function("rayon-core", |b| b.iter(rayon_first_pool));
    group.finish();
}

// `first_pool` runs first, while this process has built no pool. It needs fork(2).
#[cfg(target_os = "linux")]
criterion_group!(benches, first_pool, steady_state);
#[cfg(not(target_os = "linux"))]
criterion_group!(benches, steady_state);
criterion_main!(benches);
