//! The Chrome Trace JSON of a real pool's timeline, read back with serde_json: one named
//! track per worker and one for the injector, every job a `B` with its `E` on its
//! worker's track, timestamps in order on each track, the injections as instant events.

use serde_json::Value;
use std::collections::HashMap;

#[test]
fn a_real_pools_trace_reads_back() {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(3)
        .timeline(true)
        .build()
        .unwrap();
    let timeline = pool.timeline().unwrap();
    fn fib(n: u32) -> u64 {
        if n < 2 {
            return n.into();
        }
        let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    assert_eq!(pool.install(|| fib(20)), 6765);
    pool.scope(|s| (0..100).for_each(|_| s.spawn(|_| ())));
    pool.shutdown().unwrap();

    let mut json = Vec::new();
    timeline.write_chrome_json(&mut json).unwrap();
    let trace: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(trace["displayTimeUnit"], "ns");
    let events = trace["traceEvents"].as_array().unwrap();

    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["worker 0", "worker 1", "worker 2", "injector"]);

    let mut open: HashMap<u64, i64> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    let (mut jobs, mut injections) = (0, 0);
    for event in events.iter().filter(|e| e["ph"] != "M") {
        let tid = event["tid"].as_u64().unwrap();
        let ts = event["ts"].as_f64().unwrap();
        let last = last_ts.entry(tid).or_insert(0.0);
        assert!(ts >= *last, "track {tid}: {ts} after {last}");
        *last = ts;
        match event["ph"].as_str().unwrap() {
            "B" => {
                *open.entry(tid).or_default() += 1;
                if event["cat"] == "job" {
                    jobs += 1;
                    assert!(tid < 3, "a job on the injector's track");
                }
                if let Some(victim) = event["args"].get("victim") {
                    assert!(victim.as_u64().unwrap() < 3);
                    assert!(event["name"] == "steal" || event["name"] == "rescue");
                }
            }
            "E" => {
                let depth = open.entry(tid).or_default();
                *depth -= 1;
                assert!(*depth >= 0, "track {tid}: E without B");
            }
            "i" if event["name"] == "inject" => {
                assert_eq!(tid, 3);
                injections += 1;
            }
            "i" => assert_eq!(event["name"], "promotion"),
            other => panic!("phase {other}"),
        }
    }
    assert!(open.values().all(|&depth| depth == 0), "{open:?}");
    assert_eq!(jobs, timeline.jobs());
    assert_eq!(injections, timeline.injections().len());
    // At least the install, the scope's body and its 100 spawns.
    assert!(jobs >= 102, "{jobs} jobs");
}
