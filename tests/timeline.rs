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
#[cfg(target_os = "linux")]
fn a_dropped_pool_saves_its_timeline_at_exit() {
    let dir = std::env::temp_dir().join(format!("stealpool-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_drops_a_recording_pool",
            "--quiet",
        ])
        .env(stealpool::TIMELINE_ENV, dir.join("run.json"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
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
