//! A plain `rayon` program whose `seq` gets its type only from the `assert_eq!` below. It
//! compiles only while no crate in the dependency graph of stealpool's default build adds
//! trait impls that make that inference ambiguous (serde_json's `PartialEq<Value>` impls
//! for the integer types do: `i32: PartialEq<?T>` then has more than one answer). rayon's
//! own tests have code like this (scripts/rayon-suite runs them on stealpool). Built and
//! run by `tests/infer_sum.rs`; a bin builds with normal dependencies only, so the
//! dev-dependencies of this package (serde_json among them) do not leak into it, and the
//! stealpool dev-dependency adds no features (Cargo.toml).

use rayon::prelude::*;
fn main() {
    let a: Vec<i32> = (0..100).collect();
    let par: i32 = a.par_iter().sum();
    let seq = a.iter().sum(); // the type comes from the comparison below
    assert_eq!(par, seq);
}
