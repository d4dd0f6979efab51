//! The worker timeline: recorded events match what the pool did (the metrics' job count,
//! every start has its end, timestamps in order), and both exports are well formed.
#![cfg(feature = "timeline")]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::trace::recording_pool;
use common::{fib, watchdog};
use stealpool::{JobSource, ThreadPool, ThreadPoolBuilder, TimelineEventKind};

/// Every kind of work: a join tree, outside spawns, scope spawns, a broadcast.
fn mixed_load(pool: &ThreadPool) {
    assert_eq!(pool.install(|| fib(22)), 17711);
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let done = Arc::clone(&done);
        pool.spawn(move || {
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    pool.scope(|s| {
        for _ in 0..100 {
            let done = &done;
            s.spawn(move |_| {
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    pool.broadcast(|_| ());
    pool.wait_idle().unwrap();
    assert_eq!(done.load(Ordering::SeqCst), 200);
}

#[test]
fn the_events_match_the_metrics_and_nest() {
    watchdog(60, || {
        let (pool, timeline) = recording_pool(3);
        mixed_load(&pool);
        let metrics = pool.metrics();
        pool.shutdown().unwrap();
        let events = timeline.events();
        assert_eq!(events.len(), 3);
        assert_eq!(timeline.jobs(), metrics.total().jobs_executed);
        let mut sources = HashMap::new();
        for (index, worker) in events.iter().enumerate() {
            let mut depth = 0i64;
            let mut last = 0;
            for event in worker {
                assert!(event.at_ns >= last, "worker {index}: time went back");
                last = event.at_ns;
                match event.kind {
                    TimelineEventKind::JobStart(source) => {
                        *sources.entry(source.name()).or_insert(0u64) += 1;
                        if let JobSource::Steal { victim } | JobSource::Rescue { victim } = source {
                            assert!(victim < 3 && victim != index);
                        }
                        depth += 1;
                    }
                    TimelineEventKind::Park => depth += 1,
                    TimelineEventKind::JobEnd | TimelineEventKind::Unpark => {
                        depth -= 1;
                        assert!(depth >= 0, "worker {index}: an end without a start");
                    }
                    _ => {}
                }
            }
            // The pool was shut down: nothing runs, nobody is parked.
            assert_eq!(depth, 0, "worker {index}: unbalanced");
        }
        assert_eq!(sources.get("broadcast"), Some(&3));
        assert!(sources.get("injector").copied().unwrap_or(0) >= 1);
        // Work from outside (the install, the spawns, the scope's body) came in through
        // the injector, each push recorded once.
        assert_eq!(timeline.injections().len() as u64, metrics.injected_jobs);
    });
}

#[test]
fn the_chrome_json_parses_and_balances() {
    watchdog(60, || {
        let (pool, timeline) = recording_pool(2);
        mixed_load(&pool);
        // Not shut down: a snapshot while the workers are alive (parked or about to);
        // the export closes whatever is open.
        let mut json = Vec::new();
        timeline.write_chrome_json(&mut json).unwrap();
        let begins = common::trace::check_chrome_trace(&json);
        assert!(begins >= 200);
        drop(pool);
    });
}

/// A run of about 10^5 jobs: the SVG stays small (sub-pixel slices are merged) and has
/// a lane per worker and the legend.
#[test]
fn the_svg_of_a_long_run_stays_small() {
    watchdog(120, || {
        let (pool, timeline) = recording_pool(2);
        pool.scope(|s| {
            for _ in 0..100_000 {
                s.spawn(|_| {
                    std::hint::black_box(0);
                });
            }
        });
        pool.shutdown().unwrap();
        assert!(timeline.jobs() >= 100_000);
        let mut svg = Vec::new();
        timeline.write_svg(&mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("worker 0") && svg.contains("worker 1"));
        assert!(svg.contains("local (") && svg.contains("parked"));
        let rects = svg.matches("<rect").count();
        assert!(rects < 3 * 1200 + 50, "{rects} rectangles");
        assert!(svg.len() < 400_000, "{} bytes", svg.len());
    });
}

#[test]
fn save_picks_the_format_from_the_extension() {
    let (pool, timeline) = recording_pool(1);
    pool.install(|| ());
    let dir = std::env::temp_dir().join(format!("stealpool-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    timeline.save(dir.join("t.json")).unwrap();
    timeline.save(dir.join("t.svg")).unwrap();
    let json = std::fs::read_to_string(dir.join("t.json")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert!(std::fs::read_to_string(dir.join("t.svg"))
        .unwrap()
        .starts_with("<svg"));
    let err = timeline.save(dir.join("t.txt")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_pool_without_the_option_does_not_record() {
    if std::env::var_os(stealpool::TIMELINE_ENV).is_some() {
        return; // the variable turns recording on for every pool
    }
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    assert!(pool.timeline().is_none());
}

/// `STEALPOOL_TIMELINE` on a program that drops a pool and returns from `main` at once:
/// the pool's threads may not have ended by then, so the file is written by the exit
/// handler (found by a breaker: the file used to be lost every time). The program is this
/// test binary itself, running the ignored test below.
#[test]
fn a_dropped_pool_saves_its_timeline_at_exit() {
    if common::skip_without_child_processes() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("stealpool-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    common::run_child_test("child_drops_a_recording_pool", &dir.join("run.json"));
    let json = std::fs::read(dir.join("run-pool1.json")).expect("no timeline saved at exit");
    assert!(common::trace::check_chrome_trace(&json) >= 1);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The child process of `a_dropped_pool_saves_its_timeline_at_exit`.
#[test]
#[ignore = "run as a subprocess by a_dropped_pool_saves_its_timeline_at_exit"]
fn child_drops_a_recording_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| stealpool::join(|| (), || ()));
    drop(pool);
}

/// A pool dropped just before `main` returns: the worker that ends the pool starts
/// writing its file, and the exit handler must wait for that write, not skip the pool
/// as saved and let the process end mid-write (found by a breaker: 18 of 20 runs left
/// an empty or cut file). Five runs; every file must be a whole trace.
#[test]
fn an_exit_during_a_save_waits_for_the_whole_file() {
    if common::skip_without_child_processes() {
        return;
    }
    common::watchdog(120, || {
        let dir = std::env::temp_dir().join(format!("stealpool-mid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for run in 0..5 {
            let base = dir.join(format!("run{run}.json"));
            common::run_child_test("child_exits_while_its_pool_saves", &base);
            let json = std::fs::read(dir.join(format!("run{run}-pool1.json"))).unwrap();
            assert!(
                common::trace::check_chrome_trace(&json) >= 10_000,
                "run {run}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    });
}

/// The child process of `an_exit_during_a_save_waits_for_the_whole_file`: enough jobs
/// that the file takes a while to write, then the pool is dropped and `main` returns
/// about when the last worker starts writing (the pause only makes that likely).
#[test]
#[ignore = "run as a subprocess by an_exit_during_a_save_waits_for_the_whole_file"]
fn child_exits_while_its_pool_saves() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        stealpool::scope(|s| {
            for _ in 0..10_000 {
                s.spawn(|_| ());
            }
        })
    });
    drop(pool);
    std::thread::sleep(std::time::Duration::from_micros(200));
}

/// `STEALPOOL_TIMELINE` across a fork: a child that builds its own pool and calls `exit`
/// saves that pool's file, and leaves its parent's pool (inherited, worker-less) alone;
/// the parent saves its own (found by a breaker: with the parent's pool built first, the
/// child saved nothing, since the exit handler checked the pid of the process that had
/// registered it).
#[test]
#[cfg(unix)]
fn a_forked_child_saves_its_own_pool_not_its_parents() {
    if common::skip_without_child_processes() {
        return;
    }
    common::watchdog(120, || {
        let dir = std::env::temp_dir().join(format!("stealpool-fork-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        common::run_child_test("child_forks_with_a_pool", &dir.join("f.json"));
        // The parent's pool is pool 1 (one job, an install); the child's, pool 2 (the
        // child numbers its pools after those it inherited; two installs).
        let parent = std::fs::read(dir.join("f-pool1.json")).expect("the parent's file");
        let child = std::fs::read(dir.join("f-pool2.json")).expect("the child's file");
        assert_eq!(common::trace::check_chrome_trace(&parent), 1);
        assert_eq!(common::trace::check_chrome_trace(&child), 2);
        std::fs::remove_dir_all(dir).unwrap();
    });
}

/// The process of `a_forked_child_saves_its_own_pool_not_its_parents`: a pool, a fork, a
/// pool in the child, which calls `exit` with that pool alive (running the exit handlers,
/// as a returning `main` does).
#[test]
#[cfg(unix)]
#[ignore = "run as a subprocess by a_forked_child_saves_its_own_pool_not_its_parents"]
fn child_forks_with_a_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| ());
    // SAFETY: the child builds a new pool and leaves through `exit`; it uses no lock of
    // the parent's but through std and libc, which handle `fork` (tests/fork.rs does the
    // same a thousand times).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let child = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        child.install(|| ());
        child.install(|| ());
        // The pool is alive at `exit`: only the exit handler can save its file.
        // SAFETY: `exit` runs the atexit handlers and ends the child; `child` is never
        // used again.
        unsafe { libc::exit(0) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    drop(pool);
}
