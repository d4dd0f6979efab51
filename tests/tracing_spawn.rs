//! A `tracing` subscriber is user code that runs on a worker while the worker still counts
//! as searching: the `job_stolen` event fires after the steal and before the worker leaves
//! the idle state. A subscriber that spawns from it pushes a job on that worker's own
//! deque; when the worker then stops searching as the last searcher while every other
//! worker is parked, its look for work left must see that job and wake a sleeper for it
//! (`docs/sleep.md`, "When P wakes nobody"). Here the stolen job waits for the spawned one,
//! so a skipped look is a lost wake-up: the wait times out.
//!
//! `cargo test --features tracing --test tracing_spawn` (as `.ci/run` does). Its own test
//! binary: the subscriber is the process's global default.
#![cfg(feature = "tracing")]

mod common;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::watchdog;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The sender the next `job_stolen` event hands to the job it spawns.
static SENDER: Mutex<Option<SyncSender<()>>> = Mutex::new(None);
/// Whether a `job_stolen` event took the sender (and spawned).
static SPAWNED: AtomicBool = AtomicBool::new(false);

/// Spawns one job from the first `job_stolen` event after each arming.
struct SpawnOnSteal;

impl Subscriber for SpawnOnSteal {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("stealpool")
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().name() != "job_stolen" {
            return;
        }
        if let Some(tx) = SENDER.lock().unwrap().take() {
            SPAWNED.store(true, SeqCst);
            // A subscriber that works a little before it hands a record to the pool:
            // long enough for the other worker to park.
            std::thread::sleep(Duration::from_millis(1));
            stealpool::spawn(move || {
                let _ = tx.send(());
            });
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_job_spawned_by_a_subscriber_while_its_worker_searches_is_not_lost() {
    tracing::subscriber::set_global_default(SpawnOnSteal).unwrap();
    let (spawned, lost) = watchdog(60, || {
        let pool = stealpool::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let (done_tx, done_rx) = mpsc::channel::<bool>();
        let (mut spawned, mut lost) = (0, 0);
        for _ in 0..20 {
            // Let both workers park.
            std::thread::sleep(Duration::from_millis(3));
            let (tx, rx): (SyncSender<()>, Receiver<()>) = mpsc::sync_channel(1);
            SPAWNED.store(false, SeqCst);
            *SENDER.lock().unwrap() = Some(tx);
            let done = done_tx.clone();
            pool.spawn(move || {
                // K goes on this worker's deque; the other worker steals it (and its
                // `job_stolen` event spawns J on the thief's deque).
                stealpool::spawn(move || {
                    let ok =
                        !SPAWNED.load(SeqCst) || rx.recv_timeout(Duration::from_secs(5)).is_ok();
                    done.send(ok).unwrap();
                });
                let start = Instant::now();
                while !SPAWNED.load(SeqCst) && start.elapsed() < Duration::from_millis(50) {
                    std::hint::spin_loop();
                }
            });
            let ok = done_rx
                .recv_timeout(Duration::from_secs(20))
                .expect("K ran");
            if SPAWNED.load(SeqCst) {
                spawned += 1;
            } else {
                // K was not stolen (its owner ran it): nothing armed this round.
                SENDER.lock().unwrap().take();
            }
            lost += usize::from(!ok);
        }
        (spawned, lost)
    });
    assert_eq!(lost, 0, "a spawned job waited 5 s while its pool slept");
    assert!(
        spawned > 0,
        "no round had K stolen: the interleaving never happened"
    );
}
