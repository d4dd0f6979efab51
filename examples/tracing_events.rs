//! The `tracing` feature: stealpool's spans and events reaching a `tracing-subscriber`
//! layer. Each event is named by its metadata (`job_injected`, `job_stolen`,
//! `job_rescued`, `thread_idle`, `thread_active`) and carries no message, so this layer
//! counts them by `event.metadata().name()` and keeps the fields of the first of each.
//!
//! ```text
//! cargo run --release --features tracing --example tracing_events
//! ```

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Per span or event name: how many arrived, and the fields of the first one.
type Seen = Arc<Mutex<BTreeMap<&'static str, (u64, String)>>>;

/// A layer that records every span and event under a target that starts with
/// `stealpool` (the targets of all of stealpool's spans and events).
struct CountByName(Seen);

impl CountByName {
    fn note(&self, metadata: &tracing::Metadata<'static>, fields: impl FnOnce() -> String) {
        if !metadata.target().starts_with("stealpool") {
            return;
        }
        let mut seen = self.0.lock().unwrap();
        let entry = seen.entry(metadata.name()).or_insert_with(|| (0, fields()));
        entry.0 += 1;
    }
}

impl<S: Subscriber> Layer<S> for CountByName {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        self.note(attrs.metadata(), || {
            let mut fields = FieldList::default();
            attrs.record(&mut fields);
            fields.0
        });
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        self.note(event.metadata(), || {
            let mut fields = FieldList::default();
            event.record(&mut fields);
            fields.0
        });
    }
}

/// Formats a span's or event's fields as `name=value, ...`.
#[derive(Default)]
struct FieldList(String);

impl Visit for FieldList {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push_str(", ");
        }
        let _ = write!(self.0, "{}={value:?}", field.name());
    }
}

fn main() {
    let seen = Seen::default();
    // The global default, not a scoped one: the events come from the pool's own threads.
    let subscriber = tracing_subscriber::registry().with(CountByName(Arc::clone(&seen)));
    tracing::subscriber::set_global_default(subscriber).expect("a subscriber was already set");

    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("cannot build the pool");

    // A job from outside the pool: `job_injected`.
    pool.install(|| {
        // A job pushed on this worker's own deque while this worker blocks until it ran:
        // only the other worker can take it, so it is stolen (`job_stolen`), after that
        // worker was idle (`thread_idle`, then `thread_active`).
        let (tx, rx) = mpsc::channel();
        stealpool::spawn(move || tx.send(stealpool::current_thread_index()).unwrap());
        let thief = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the other worker never took the job");
        assert_ne!(thief, stealpool::current_thread_index());
    });
    // Every event is in once the workers have exited.
    pool.shutdown().expect("main is not a worker of the pool");

    let seen = seen.lock().unwrap();
    println!("{:<14} {:>5}  fields of the first", "name", "count");
    for (name, (count, fields)) in seen.iter() {
        println!("{name:<14} {count:>5}  {fields}");
    }
    let count = |name: &str| seen.get(name).map_or(0, |(count, _)| *count);
    assert_eq!(count("worker_thread"), 2, "one span per worker");
    assert!(count("job_injected") >= 1);
    assert!(count("job_stolen") >= 1);
    assert!(count("thread_idle") >= 2, "each worker is idle at start-up");
    assert!(count("thread_active") >= 1);
}
