//! `fork()` from a process whose pool is busy: every child builds its own pool, uses it
//! and the global pool, and must exit 0 before its deadline.
//!
//! This is the pattern of rayon issue 708 and of the Python extension modules and CLI
//! tools that fork after using a pool: the parent's pools are unusable in the child (their
//! threads were not copied), but a *new* pool must work. A child that hangs, crashes or
//! computes a wrong result fails the test; a hang shows up as the child's own `alarm`
//! deadline (SIGALRM), so the parent never waits on it for long.
//!
//! Before the blocking primitives moved from parking_lot to std (parking_lot keeps one
//! process-wide table of wait queues whose bucket locks a parent thread may hold at the
//! fork), about one child in 500-2,000 hung here.
//!
//! The parent never touches the global pool, so each child may build and use it.
//! `STEALPOOL_FORKS` sets the number of forks (default 1,000).
#![cfg(target_os = "linux")]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use stealpool::{ThreadPool, ThreadPoolBuilder};

/// A child that has not exited after this many seconds has hung (it gets SIGALRM).
const CHILD_DEADLINE_S: u32 = 20;

/// The parent stops forking after this many failed children (a broken build would
/// otherwise take `CHILD_DEADLINE_S` per fork).
const MAX_FAILURES: usize = 3;

/// `fib(n)` with one `join` per call, on the current worker's pool (else the global one).
fn join_fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| join_fib(n - 1), || join_fib(n - 2));
    a + b
}

/// What a child does: a new pool, then the global pool, each with joins, a scope with
/// spawns, a detached spawn answered through a channel, and a join handle.
fn child_work() -> Result<(), &'static str> {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .map_err(|_| "building the child's pool failed")?;
    exercise(Some(&pool))?;
    exercise(None)?;
    drop(pool);
    Ok(())
}

/// Runs the mix on `pool`, or on the global pool through the free functions.
fn exercise(pool: Option<&ThreadPool>) -> Result<(), &'static str> {
    let fib = match pool {
        Some(pool) => pool.install(|| join_fib(16)),
        None => join_fib(16),
    };
    if fib != 987 {
        return Err("join computed a wrong result");
    }

    let sum = AtomicUsize::new(0);
    match pool {
        Some(pool) => pool.scope(|s| spawn_sum(s, &sum)),
        None => stealpool::scope(|s| spawn_sum(s, &sum)),
    }
    if sum.load(Ordering::Relaxed) != 64 * 63 / 2 {
        return Err("a scope lost a spawn");
    }

    let (tx, rx) = mpsc::channel();
    let job = move || tx.send(stealpool::current_thread_index()).unwrap();
    match pool {
        Some(pool) => pool.spawn(job),
        None => stealpool::spawn(job),
    }
    if rx.recv().map_err(|_| "spawn dropped its job")?.is_none() {
        return Err("a spawned job ran off the pool");
    }

    let handle = match pool {
        Some(pool) => pool.spawn_with_handle(|| 7),
        None => stealpool::spawn_with_handle(|| 7),
    };
    if handle.join().map_err(|_| "join handle panicked")? != 7 {
        return Err("join handle returned a wrong value");
    }
    Ok(())
}

/// Adds 0..64 into `sum`, one spawn per term.
fn spawn_sum<'s>(s: &stealpool::Scope<'s>, sum: &'s AtomicUsize) {
    for i in 0..64 {
        s.spawn(move |_| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
    }
}

/// Exit codes of a child.
const EXIT_OK: i32 = 0;
const EXIT_WRONG: i32 = 1;
const EXIT_PANIC: i32 = 2;

/// Runs in the child: never returns, never unwinds, prints nothing (a parent thread may
/// have held stdout's lock at the fork).
fn run_child() -> ! {
    // SAFETY: alarm only arms a timer for this process.
    unsafe { libc::alarm(CHILD_DEADLINE_S) };
    let code = match std::panic::catch_unwind(child_work) {
        Ok(Ok(())) => EXIT_OK,
        Ok(Err(_)) => EXIT_WRONG,
        Err(_) => EXIT_PANIC,
    };
    // SAFETY: `_exit` ends the process without running the parent's atexit handlers or
    // destructors, which a forked child must not run.
    unsafe { libc::_exit(code) }
}

/// Forks one child and waits for it: `Err` says how it failed.
fn fork_one() -> Result<(), String> {
    // SAFETY: the child only runs `run_child`, which builds new threads and pools and
    // ends with `_exit`; it touches no lock of the parent's except through std and libc,
    // which handle `fork` (glibc's malloc and the futex-based std locks).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed: {}", std::io::Error::last_os_error());
    if pid == 0 {
        run_child();
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid: {}", std::io::Error::last_os_error());
    if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            EXIT_OK => Ok(()),
            EXIT_WRONG => Err("wrong result".into()),
            EXIT_PANIC => Err("panicked".into()),
            code => Err(format!("exited with {code}")),
        }
    } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
        Err(format!("hung (no exit after {CHILD_DEADLINE_S} s)"))
    } else {
        Err(format!("killed by signal {}", libc::WTERMSIG(status)))
    }
}

/// Threads that keep the parent's pool busy in every way a fork can catch it: installs,
/// streams of spawns, nested joins, scopes, join handles, and pauses so that workers park
/// and are woken.
///
/// The parent starts no thread while it forks (so it builds no pool): a `fork()` that
/// lands while a std thread starts or exits leaves std's own thread-start lock (its
/// stack-overflow bookkeeping, Rust 1.95) held in the child, and every std thread the
/// child starts then hangs, whichever pool library made it (`docs/rayon-core.md`, "Forking").
fn start_parent_load(
    pool: &Arc<ThreadPool>,
    stop: &Arc<AtomicBool>,
) -> Vec<thread::JoinHandle<()>> {
    const KINDS: usize = 4;
    let started = Arc::new(Barrier::new(KINDS + 1));
    let mut threads = Vec::new();
    for kind in 0..KINDS {
        let pool = Arc::clone(pool);
        let stop = Arc::clone(stop);
        let started = Arc::clone(&started);
        threads.push(thread::spawn(move || {
            started.wait();
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) {
                match kind {
                    0 => assert_eq!(pool.install(|| join_fib(12)), 144),
                    1 => {
                        let (tx, rx) = mpsc::channel();
                        for _ in 0..32 {
                            let tx = tx.clone();
                            pool.spawn(move || tx.send(()).unwrap());
                        }
                        drop(tx);
                        assert_eq!(rx.iter().count(), 32);
                    }
                    2 => pool.scope(|s| {
                        for _ in 0..8 {
                            s.spawn(|_| {
                                std::hint::black_box(join_fib(8));
                            });
                        }
                    }),
                    _ => assert_eq!(pool.spawn_with_handle(|| 3).join().unwrap(), 3),
                }
                rounds += 1;
                if rounds % 16 == 0 {
                    // Load shaping, not synchronisation: let the workers run dry and park,
                    // so forks also land on parks and wake-ups.
                    thread::sleep(Duration::from_micros(200));
                }
            }
        }));
    }
    // Every load thread is past its start-up, and every worker has run a job, before the
    // first fork.
    started.wait();
    pool.broadcast(|_| ());
    threads
}

#[test]
fn children_of_a_busy_parent_build_and_use_new_pools() {
    if let Some(why) = common::child::cannot_start_child() {
        // qemu-user 7.2 aborts in the child of a multi-threaded process
        // (`cpu_exec: assertion failed: (cpu == current_cpu)`).
        common::skip(&format!(
            "{why}; such an emulator does not fork a multi-threaded process reliably"
        ));
        return;
    }
    let forks: usize = std::env::var("STEALPOOL_FORKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    common::watchdog(
        240 + u64::from(CHILD_DEADLINE_S) * MAX_FAILURES as u64,
        move || {
            let pool = Arc::new(ThreadPoolBuilder::new().num_threads(4).build().unwrap());
            let stop = Arc::new(AtomicBool::new(false));
            let load = start_parent_load(&pool, &stop);

            let started = Instant::now();
            let mut failures = Vec::new();
            for i in 0..forks {
                if let Err(how) = fork_one() {
                    failures.push((i, how));
                    if failures.len() >= MAX_FAILURES {
                        break;
                    }
                }
            }
            stop.store(true, Ordering::Relaxed);
            for thread in load {
                thread.join().expect("a parent load thread panicked");
            }
            assert!(
                failures.is_empty(),
                "{} of the forked children failed (stopped after {MAX_FAILURES}); \
             (fork index, outcome): {failures:?}; {:.1} s",
                failures.len(),
                started.elapsed().as_secs_f64()
            );
            eprintln!(
                "{forks} forked children all exited 0 in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        },
    );
}
