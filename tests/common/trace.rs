//! Checks of a timeline's Chrome Trace Event JSON, shared by `tests/timeline.rs` and the
//! check of the main job's file (`tests/timeline_render.rs`).

use std::collections::HashMap;

/// A pool of `threads` workers that records a timeline, and its timeline.
#[cfg(feature = "timeline")]
pub fn recording_pool(threads: usize) -> (stealpool::ThreadPool, stealpool::Timeline) {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(threads)
        .timeline(true)
        .build()
        .unwrap();
    let timeline = pool
        .timeline()
        .expect("a pool built with timeline(true) records");
    (pool, timeline)
}

/// Parses `json` and checks it: a `traceEvents` array; on every track (`tid`) the
/// timestamps never decrease and every `B` has its `E` (none left open, no `E` first);
/// only the phases the exporter writes. Returns the number of jobs (`B` events of
/// category `job`).
pub fn check_chrome_trace(json: &[u8]) -> u64 {
    let trace: serde_json::Value = serde_json::from_slice(json).expect("not JSON");
    let events = trace["traceEvents"]
        .as_array()
        .expect("no traceEvents array");
    let mut depth: HashMap<u64, i64> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    let mut jobs = 0;
    for event in events {
        let tid = event["tid"].as_u64().expect("tid");
        let ph = event["ph"].as_str().expect("ph");
        if ph == "M" {
            continue;
        }
        let ts = event["ts"].as_f64().expect("ts");
        let last = last_ts.entry(tid).or_insert(0.0);
        assert!(ts >= *last, "track {tid}: ts went back from {last} to {ts}");
        *last = ts;
        match ph {
            "B" => {
                *depth.entry(tid).or_default() += 1;
                if event["cat"] == "job" {
                    jobs += 1;
                }
            }
            "E" => {
                let d = depth.entry(tid).or_default();
                *d -= 1;
                assert!(*d >= 0, "track {tid}: E without B");
            }
            "i" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(
        depth.values().all(|&d| d == 0),
        "unclosed slices: {depth:?}"
    );
    jobs
}
