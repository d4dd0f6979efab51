//! The default build: the `timeline` feature compiled in, recording off.

use stealpool as sp;

#[path = "candidate.rs"]
pub mod candidate;

/// Panics unless the feature is really compiled in here, and recording off in `build`'s
/// pools (`STEALPOOL_TIMELINE` would turn it on).
pub fn check_not_recording(build: &candidate::Build) {
    let probe = sp::ThreadPoolBuilder::new()
        .num_threads(1)
        .timeline(true)
        .build()
        .expect("build a pool");
    assert!(probe.timeline().is_some(), "the feature records when asked");
    assert!(
        build.all.timeline().is_none() && build.one.timeline().is_none(),
        "recording must be off (is {} set?)",
        sp::TIMELINE_ENV
    );
}
