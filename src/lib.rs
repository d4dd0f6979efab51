//! # stealpool
//!
//! A work-stealing thread pool with rayon-core 1.13's API: switching is a crate rename in
//! `Cargo.toml` (`rayon-core = { package = "stealpool", ... }`), and the `rayon` crate runs
//! on it unchanged through the `rayon-core` crate in this repository's `compat/` folder
//! (the README says how).
//!
//! * A **registry** starts one worker thread per logical CPU (`num_cpus::get()`,
//!   overridable with [`ThreadPoolBuilder::num_threads`] or the `STEALPOOL_NUM_THREADS`
//!   environment variable). Each worker owns a crossbeam-deque `Worker` (LIFO); all share
//!   one `Injector` for work arriving from outside the pool.
//! * Each worker runs the **scheduling loop** of crossbeam-deque's docs and rayon-core:
//!   local `pop`, the own broadcast queue, `Injector::steal_batch_and_pop`, then a scan
//!   of the other workers' stealers from a random victim (`steal_batch_and_pop` as
//!   well); the rest of a batch waits in the worker's batch queue, not on its deque. A
//!   round that saw `Steal::Retry` is repeated after a `Backoff` step: `Retry` is never
//!   taken for `Empty`. Between top-level jobs a worker takes one
//!   injected job every 61 local jobs even while its deque never runs dry (fair
//!   injection); inside a job it runs other jobs only where rayon-core does (while
//!   waiting), so a lock or a borrow held across `join` is as safe as on rayon-core.
//! * [`join`](fn@join) is **lazy**: the second half waits on a private per-worker stack
//!   and is promoted to the deque only when another worker is idle, or rescued by an idle
//!   worker when the first half runs long without calling into the pool. A `join` costs a
//!   fraction of rayon-core's, with the same semantics.
//! * A **sleep/wake** protocol parks a worker only after a round confirmed `Empty`
//!   everywhere, and never loses a wake-up.
//! * [`join`](fn@join), [`scope`](fn@scope), [`spawn`](fn@spawn) and [`ThreadPool::install`] behave as in rayon-core,
//!   except that a panicking `spawn` without a panic handler does not abort the process.
//!
//! ```
//! let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let v: Vec<u64> = (0..1000).collect();
//! let (left, right) = v.split_at(500);
//! let (a, b) = pool.join(|| left.iter().sum::<u64>(), || right.iter().sum::<u64>());
//! assert_eq!(a + b, 499_500);
//! ```
//!
//! **Cargo features.** `timeline` (on by default): the worker timeline
//! (`ThreadPoolBuilder::timeline`, `ThreadPool::timeline`, `Timeline`, the
//! `STEALPOOL_TIMELINE` environment variable), from the `stealpool-timeline` crate; with
//! recording off it costs a test of one pointer per job. `tracing` (off): a
//! `worker_thread` span per worker and, at the TRACE level under targets that start with
//! `stealpool`, the events `job_injected` (on the thread that injects), `job_stolen`,
//! `job_rescued`, `thread_idle` and `thread_active` (a worker's idle periods, with the
//! time idle and parked): `docs/rayon-core.md` lists their fields.
//!
//! **Design documents.** The package ships them in its `docs/` folder (on docs.rs: the
//! crate's source view): `architecture.md` (which module does what, and the path a job
//! takes), `join.md` (the lazy `join`, and why no half is lost or run twice), `sleep.md`
//! (parking, and why no wake-up is lost), `isolation.md`, `guarantees.md`,
//! `rayon-core.md` (every difference from rayon-core), `performance.md` (measured figures
//! and known gaps). Where an item's documentation names a `docs/` file, it is one of these.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![warn(clippy::missing_docs_in_private_items)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(unreachable_pub)]
#![deny(missing_debug_implementations)]
#![warn(rust_2018_idioms)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod block_on;
mod broadcast;
mod builder;
mod deprecated;
mod isolate;
mod job;
mod join;
mod join_handle;
mod latch;
mod metrics;
mod pool;
mod scope;
mod sleep;
mod spawn;
mod sync;
mod thread_pool;
#[cfg(feature = "timeline")]
#[path = "timeline_hooks/on.rs"]
mod timeline_hooks;
#[cfg(not(feature = "timeline"))]
#[path = "timeline_hooks/off.rs"]
mod timeline_hooks;
mod unwind;

pub use crate::block_on::block_on;
pub use crate::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use crate::builder::{
    ThreadPoolBuildError, ThreadPoolBuilder, ISOLATE_WAITS_ENV, NUM_THREADS_ENV,
    RAYON_NUM_THREADS_ENV,
};
#[allow(deprecated)]
pub use crate::deprecated::{initialize, Configuration};
pub use crate::isolate::isolate;
pub use crate::join::{join, join_context, FnContext};
pub use crate::join_handle::{spawn_with_handle, JoinHandle};
pub use crate::metrics::{PoolMetrics, WorkerMetrics};
pub use crate::pool::worker::ThreadBuilder;
pub use crate::scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};
pub use crate::spawn::{spawn, spawn_fifo};
#[doc(hidden)]
pub use crate::sync::barrier::current_mode as __barrier_mode;
#[cfg(feature = "timeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "timeline")))]
pub use crate::thread_pool::timeline;
pub use crate::thread_pool::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, max_num_threads,
    metrics, wait_idle, yield_local, yield_now, ThreadPool, WaitError, Yield,
};
#[cfg(feature = "timeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "timeline")))]
#[doc(inline)]
pub use stealpool_timeline::{JobSource, Timeline, TimelineEvent, TimelineEventKind, TIMELINE_ENV};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// The models need loom itself, an optional dependency (so that it stays out of users'
// lock files): the cfg without the feature would fail on every `loom::` path instead.
#[cfg(all(loom, not(feature = "loom")))]
compile_error!("`--cfg loom` needs `--features loom` (the models' dependency on loom)");

/// The pieces of the scheduler's protocols that the loom models drive
/// (`tests/loom_*.rs`); only with `--cfg loom` and `--features loom`. Not an API.
#[cfg(loom)]
mod loom_model;
#[cfg(loom)]
#[doc(hidden)]
pub use loom_model::{
    handle as __loom_handle, isolate as __loom_isolate, join as __loom_join,
    join_steal as __loom_join_steal, latch as __loom_latch, lifecycle as __loom_lifecycle,
    scope as __loom_scope, sleep as __loom,
};
