//! `src/bin/infer_sum.rs`, a rayon program that relies on type inference through
//! `assert_eq!`, builds and runs on stealpool. The check is mostly that it compiles: Cargo
//! builds the bin before this test, so an ambiguity brought in by stealpool's default
//! dependency graph fails the build here.

use std::process::Command;

#[test]
fn type_inference_is_not_broken_by_stealpools_dependencies() {
    let status = Command::new(env!("CARGO_BIN_EXE_infer_sum"))
        .status()
        .unwrap();
    assert!(status.success());
}
