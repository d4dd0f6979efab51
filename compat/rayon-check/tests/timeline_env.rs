//! An unchanged `rayon` program (`src/bin/par_iter_sum.rs`) run with
//! `STEALPOOL_TIMELINE=FILE.json` writes its global pool's worker timeline when it exits.

use std::process::Command;

#[test]
fn a_rayon_program_writes_a_timeline_with_no_source_change() {
    let dir = std::env::temp_dir().join(format!("rayon-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rayon.json");
    let status = Command::new(env!("CARGO_BIN_EXE_par_iter_sum"))
        .env("STEALPOOL_TIMELINE", &path)
        .env("STEALPOOL_NUM_THREADS", "2")
        .status()
        .unwrap();
    assert!(status.success());
    let json = std::fs::read(&path).expect("no timeline written at exit");
    let trace: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let jobs = events
        .iter()
        .filter(|e| e["ph"] == "B" && e["cat"] == "job")
        .count();
    let workers = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["args"]["name"].as_str().unwrap().starts_with("worker"))
        .count();
    assert_eq!(workers, 2);
    // At least the par_iter's and the par_sort's way into the pool.
    assert!(jobs >= 2, "{jobs} jobs");
    std::fs::remove_dir_all(dir).unwrap();
}
