//! Idle workers must sleep, not spin: after some work, a 2-thread pool may
//! use at most 200 ms of CPU time during one second of idleness.
//!
//! Linux only in practice: the workers' kernel thread ids come from
//! `/proc/thread-self` and their CPU time from `/proc/self/task/<tid>/schedstat`;
//! without those files the test prints why and passes.

mod common;

use std::fs;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::{watchdog, Recorded};
use stealpool::ThreadPoolBuilder;

/// Kernel thread id of the calling thread: `/proc/thread-self` is a link to
/// `/proc/<pid>/task/<tid>`.
fn current_tid() -> Option<u64> {
    let link = fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// Nanoseconds thread `tid` of this process has spent on a CPU (first field
/// of its schedstat).
fn cpu_ns(tid: u64) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[test]
fn idle_workers_do_not_burn_cpu() {
    watchdog(60, || {
        let n = 2;
        let tids = Arc::new(Mutex::new(Vec::new()));
        let started = Recorded::new();
        let pool = {
            let tids = Arc::clone(&tids);
            let started = Arc::clone(&started);
            ThreadPoolBuilder::new()
                .num_threads(n)
                .start_handler(move |i| {
                    tids.lock().unwrap().push(current_tid());
                    started.record(i);
                })
                .build()
                .unwrap()
        };
        assert_eq!(started.wait_for(n, Duration::from_secs(10)), n);
        let tids: Vec<u64> = match tids.lock().unwrap().iter().copied().collect::<Option<_>>() {
            Some(tids) => tids,
            None => {
                println!("skipped: /proc/thread-self is not available");
                return;
            }
        };

        // Some work first, so the workers have been busy and woken up.
        for _ in 0..10_000 {
            assert_eq!(pool.join(|| 1, || 2), (1, 2));
        }
        pool.install(|| {
            for _ in 0..10_000 {
                stealpool::join(|| (), || ());
            }
        });

        let before: Option<Vec<u64>> = tids.iter().map(|&t| cpu_ns(t)).collect();
        let Some(before) = before else {
            println!("skipped: /proc/self/task/<tid>/schedstat is not available");
            return;
        };
        // The measured interval of idleness (not a synchronisation).
        thread::sleep(Duration::from_secs(1));
        let after: Vec<u64> = tids
            .iter()
            .map(|&t| cpu_ns(t).expect("a worker thread disappeared"))
            .collect();

        let used: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        let total: u64 = used.iter().sum();
        println!("worker CPU time during 1 s idle: {used:?} ns (total {total} ns)");
        assert!(
            total < 200_000_000,
            "idle workers used {total} ns of CPU in 1 s ({used:?}): they spin instead of sleeping"
        );
        drop(pool);
    });
}
