//! The pool: its registry (workers, queues, sleep state, lifecycle), each worker's
//! scheduling loop and search, and the private stack of `join` halves each worker keeps.
//! Everything above (`join`, scopes, `spawn`, `install`, the builder) reaches the workers
//! through here; nothing here names those modules.

pub(crate) mod build_error;
pub(crate) mod config;
pub(crate) mod pending;
pub(crate) mod region;
pub(crate) mod registry;
pub(crate) mod spawn_handler;
pub(crate) mod worker;
