//! When a process gets the asymmetric barrier (`sync/barrier`, "Start-up"): a pool built
//! by the process's only thread has it published before its workers exist, so every
//! worker runs its first `join` on it; a pool built in a process that already runs other
//! threads gets it published without any worker parking or promoting a half (a 1-worker
//! pool kept busy does neither). Without either, a short program or a busy 1-worker pool
//! could stay on the fence pair for its whole life.
//!
//! No test harness (`harness = false` in Cargo.toml): libtest runs each test on a thread
//! of its own, so its processes are never single-threaded. The second case runs in a
//! child process (this binary again), which starts a thread before it builds its pool.
//! Linux builds with the asymmetric barrier only; elsewhere it checks nothing and says so.

mod common;

#[cfg(all(target_os = "linux", not(stealpool_fences)))]
mod linux {
    use crate::common::child::cannot_start_child;
    use crate::common::{fib, pool, watchdog};
    use std::process::Command;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// Set in the child process that checks the second case.
    const CHILD_ENV: &str = "STEALPOOL_BARRIER_START_CHILD";
    /// How long the busy worker waits for the registration; each case's watchdog is
    /// longer.
    const LIMIT: Duration = Duration::from_secs(60);

    /// Whether the kernel offers `MEMBARRIER_CMD_PRIVATE_EXPEDITED` and its registration
    /// (not under every emulator or sandbox).
    fn membarrier_supported() -> bool {
        let wanted = (1 << 3) | (1 << 4);
        // SAFETY: MEMBARRIER_CMD_QUERY takes and touches no memory.
        let supported = unsafe { libc::syscall(libc::SYS_membarrier, 0, 0, 0) };
        supported >= 0 && supported & wanted == wanted
    }

    /// `num_threads` of `/proc/self/stat` (the library reads the same field; its reader
    /// is private).
    fn threads() -> Option<usize> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(17)?
            .parse()
            .ok()
    }

    /// The child: another thread first, then a 1-worker pool whose worker stays busy (it
    /// neither parks nor promotes) until the barrier is published.
    fn busy_worker_in_a_threaded_process() -> Result<(), String> {
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let other = std::thread::spawn(move || stop_rx.recv());
        assert!(
            threads().is_some_and(|n| n >= 2),
            "the child runs a second thread"
        );
        let pool = pool(1);
        let published = pool.install(|| {
            let start = Instant::now();
            while stealpool::__barrier_mode() != "expedited" && start.elapsed() < LIMIT {
                std::hint::black_box(fib(10));
            }
            stealpool::__barrier_mode()
        });
        drop(stop_tx);
        let _ = other.join();
        if published == "expedited" {
            Ok(())
        } else {
            Err(format!(
                "still {published:?} after {LIMIT:?} of joins on a busy worker"
            ))
        }
    }

    pub fn main() {
        if std::env::var_os(CHILD_ENV).is_some() {
            if let Err(err) = busy_worker_in_a_threaded_process() {
                panic!("{err}");
            }
            return;
        }
        if !membarrier_supported() {
            println!(
                "barrier_start: skipped: this kernel (or emulator) has no expedited membarrier"
            );
            return;
        }
        // Case 1: this process's only thread builds the pool. (An emulator may run
        // threads of its own in the process: qemu-user's RCU thread.) The build happens
        // here, before the watchdog's thread exists.
        if threads() == Some(1) {
            assert_eq!(
                stealpool::__barrier_mode(),
                "fences",
                "nothing registered before the first build"
            );
            let p = pool(2);
            assert_eq!(
                stealpool::__barrier_mode(),
                "expedited",
                "a single-threaded process registers while it builds its first pool"
            );
            assert_eq!(watchdog(60, move || p.install(|| fib(20))), 6765);
            println!(
                "barrier_start: a pool built by the only thread: expedited before its first join"
            );
        } else {
            println!(
                "barrier_start: skipped the single-threaded case: the process starts with {:?} threads",
                threads()
            );
        }

        // Case 2: in a child process that already runs a thread.
        if let Some(reason) = cannot_start_child() {
            println!("barrier_start: skipped the threaded case: {reason}");
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let status = watchdog(LIMIT.as_secs() + 30, move || {
            Command::new(exe).env(CHILD_ENV, "1").status().unwrap()
        });
        assert!(status.success(), "the child failed: {status}");
        println!(
            "barrier_start: a busy 1-worker pool in a threaded process: expedited without a park"
        );
    }
}

fn main() {
    // `--list` (`common::child::cannot_start_child`'s probe, and test runners listing tests):
    // there is nothing to list.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    #[cfg(all(target_os = "linux", not(stealpool_fences)))]
    linux::main();
    #[cfg(not(all(target_os = "linux", not(stealpool_fences))))]
    println!("barrier_start: nothing to check (no membarrier in this build)");
}
