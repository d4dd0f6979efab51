//! The `tracing` feature: a `worker_thread` span per worker, and events for injections,
//! steals, rescues and idle periods, with the fields `docs/rayon-core.md` lists, seen by a
//! subscriber installed as the global default (workers are other threads). One test: the
//! default is global.
//!
//! `cargo test --features tracing --test tracing` (as `.ci/run` does).
#![cfg(feature = "tracing")]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use common::{fib, wait_parked, watchdog};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Counts events and spans by name, and keeps the field names each one carried.
#[derive(Default)]
struct Counter {
    names: Mutex<HashMap<&'static str, u64>>,
    fields: Mutex<HashMap<&'static str, Vec<&'static str>>>,
    next_id: AtomicU64,
}

impl Counter {
    fn count(&self, name: &'static str) -> u64 {
        self.names.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    fn note(&self, metadata: &'static Metadata<'static>) {
        *self
            .names
            .lock()
            .unwrap()
            .entry(metadata.name())
            .or_default() += 1;
        self.fields.lock().unwrap().insert(
            metadata.name(),
            metadata.fields().iter().map(|f| f.name()).collect(),
        );
    }

    fn fields(&self, name: &'static str) -> Vec<&'static str> {
        self.fields
            .lock()
            .unwrap()
            .get(name)
            .cloned()
            .unwrap_or_default()
    }
}

impl Subscriber for &'static Counter {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("stealpool")
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.note(span.metadata());
        Id::from_u64(self.next_id.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.note(event.metadata());
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn spans_and_events_reach_a_global_subscriber() {
    let counter: &'static Counter = Box::leak(Box::default());
    tracing::subscriber::set_global_default(counter).unwrap();
    watchdog(60, move || {
        let pool = stealpool::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        wait_parked(&pool, 2);
        assert_eq!(counter.count("worker_thread"), 2);
        assert!(counter.count("thread_idle") >= 2);
        for _ in 0..20 {
            pool.install(|| fib(20));
        }
        assert!(counter.count("job_injected") >= 20);
        assert!(counter.count("thread_active") >= 1);
        // fib's halves are promoted to an idle worker's view and stolen.
        assert!(
            counter.count("job_stolen") + counter.count("job_rescued") >= 1,
            "{:?}",
            counter.names.lock().unwrap()
        );
        // The fields `docs/rayon-core.md` lists.
        assert_eq!(counter.fields("worker_thread"), ["worker"]);
        assert_eq!(counter.fields("job_injected"), ["queue_was_empty"]);
        assert_eq!(counter.fields("thread_idle"), ["worker"]);
        assert_eq!(
            counter.fields("thread_active"),
            ["worker", "idle_ns", "parked_ns"]
        );
        for stolen in ["job_stolen", "job_rescued"] {
            if counter.count(stolen) > 0 {
                assert_eq!(counter.fields(stolen), ["worker", "victim"]);
            }
        }
    });
}
