//! Without the `timeline` feature (`cargo test -p stealpool --no-default-features --test
//! timeline_off`): a program run with `STEALPOOL_TIMELINE` set is told, once, that
//! nothing records, instead of leaving its user waiting for a file.
#![cfg(not(feature = "timeline"))]

mod common;

/// The program is this test binary itself, running the ignored test below with the
/// variable set.
#[test]
fn the_variable_without_the_feature_is_reported_once() {
    if common::child::skip_without_child_processes() {
        return;
    }
    common::watchdog(60, the_variable_is_reported_once);
}

fn the_variable_is_reported_once() {
    let dir = std::env::temp_dir().join(format!("stealpool-off-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.json");
    // Killed before the watchdog fires, so that its output is shown.
    let run = common::child::run_child(
        "child_builds_two_pools",
        50,
        &[("STEALPOOL_TIMELINE", file.as_os_str())],
    )
    .expect_success("the child test failed");
    let stderr = &run.stderr;
    let told = "STEALPOOL_TIMELINE is set, but this build of stealpool has no `timeline` feature";
    assert_eq!(stderr.matches(told).count(), 1, "stderr: {stderr}");
    assert!(!file.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// The child process: two pools, some work on each.
#[test]
#[ignore = "run as a subprocess by the_variable_without_the_feature_is_reported_once"]
fn child_builds_two_pools() {
    for _ in 0..2 {
        let pool = stealpool::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| stealpool::join(|| 1, || 2)), (1, 2));
    }
}
