//! # rayon-core over stealpool
//!
//! This crate is named `rayon-core` (version 1.13.0) and re-exports the whole public API of
//! [`stealpool`], a work-stealing thread pool with rayon-core 1.13's API. Patched in place
//! of the registry's rayon-core, it makes the `rayon` crate (parallel iterators, `par_sort`,
//! `par_bridge`, ...) run on stealpool's workers, without any change to the code that uses
//! `rayon`.
//!
//! ## The two-line switch
//!
//! In the `Cargo.toml` of the application (the workspace root) that depends on `rayon`:
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { path = "path/to/stealpool/compat/rayon-core" }
//! ```
//!
//! `cargo tree -i rayon-core` then shows rayon-core coming from that path (with an existing
//! `Cargo.lock` that pins an older rayon-core, run `cargo update -p rayon-core` first).
//! This crate keeps the original's `links = "rayon-core"`, so one build never holds two
//! rayon-cores: if another dependency pins a registry rayon-core that this version cannot
//! replace (for example `=1.12.1`), Cargo picks an older `rayon` that fits it and only
//! warns that the patch "was not used". Hence the `cargo tree` check.
//!
//! Everything `rayon` 1.x uses from rayon-core is here with rayon-core's signatures; the
//! behaviour differs from rayon-core only where stealpool's `docs/rayon-core.md` says so (for
//! example, the thread-count variable is `STEALPOOL_NUM_THREADS`, and a panicking `spawn`
//! without a panic handler does not abort). stealpool's extras (pool metrics,
//! `spawn_with_handle`, ...) are re-exported too.
//!
//! ## Features
//!
//! stealpool's features are this crate's, with the same defaults: `timeline` (on) and
//! `tracing` (off). To turn `tracing` on in a program that uses `rayon`, name this crate
//! among the program's own dependencies with the feature; the `[patch]` redirects it here:
//!
//! ```toml
//! [dependencies]
//! rayon = "1"
//! rayon-core = { version = "1.13", features = ["tracing"] }
//! ```
//!
//! `rayon` itself asks for the default features, so `timeline` stays compiled in (with
//! recording off unless `STEALPOOL_TIMELINE` is set).
//!
//! The original's `web_spin_lock` feature exists so that `rayon` always resolves, but it
//! changes nothing: stealpool keeps std's blocking primitives, also on wasm32 in a browser
//! (where the original would switch to spin locks).

#![deny(missing_docs)]

pub use stealpool::*;
