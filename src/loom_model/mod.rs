//! The pieces of the scheduler that the loom models (`tests/loom_*.rs`) drive, each
//! wrapping the real code (never a copy of it); re-exported by `lib.rs` as
//! `__loom_<name>`. Only with `--cfg loom`. Not an API.

pub mod handle;
pub mod isolate;
pub mod join;
pub mod join_steal;
pub mod latch;
pub mod lifecycle;
pub mod scope;
pub mod sleep;
