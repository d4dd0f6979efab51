//! The pool, in layers that each import only those listed before them:
//!
//! * `env.rs`: the environment variables a pool reads; `build_error.rs`: why a build
//!   fails; `config.rs`: the builder's settings and the handler types;
//! * `region.rs`: isolation regions; `private_stack/`: each worker's private stack of
//!   `join` halves, as rescuers see it;
//! * `registry/`: the shared state of one pool (queues, sleep, handlers, its life). It
//!   never names a worker type;
//! * `worker/`: the worker thread: its body, its scheduling loop and search, its private
//!   stack of halves, and the entry points that find the current worker;
//! * `spawn_handler.rs`: how a builder starts threads; `start.rs`: building a registry
//!   and starting its threads; `global.rs`: the global pool, and the entry points that
//!   fall back to it.
//!
//! Everything above (`join`, scopes, `spawn`, `install`, the builder) reaches the workers
//! through here; nothing here names those modules (`docs/architecture.md`).

pub(crate) mod build_error;
pub(crate) mod config;
pub(crate) mod env;
pub(crate) mod global;
pub(crate) mod private_stack;
pub(crate) mod region;
pub(crate) mod registry;
pub(crate) mod spawn_handler;
pub(crate) mod start;
pub(crate) mod worker;
