//! A `tracing` subscriber is user code that runs on a worker. The `job_stolen` event fires
//! after the steal, once the worker counts as running again. A subscriber that spawns from
//! it pushes a job on that worker's own deque, which must wake a sleeper (or be run by
//! the worker) although every other worker is parked. Here the stolen job waits for the
//! spawned one, so a lost wake-up shows as a timed-out wait. A subscriber that waits for
//! another pool from `job_stolen` parks the worker inside the event: the worker must not
//! still count as searching then, or an injection into its pool would count on it and
//! wake nobody.
//!
//! The `thread_idle` and `thread_active` events fire as a worker parks and wakes; a
//! subscriber that spawns from them wakes a parked worker, possibly the one emitting, so
//! the events must fire outside the worker's parking lock.
//!
//! `cargo test --features tracing --test tracing_spawn` (as `.ci/run` does). Its own test
//! binary: the subscriber is the process's global default, and the tests take `SERIAL` so
//! each arms it alone.
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

/// The sender the next `thread_idle` event hands to the job it spawns.
static IDLE_SENDER: Mutex<Option<SyncSender<usize>>> = Mutex::new(None);
/// What the next `job_injected` event on the given thread runs, once.
#[allow(clippy::type_complexity)]
static ON_INJECTED: Mutex<Option<(std::thread::ThreadId, Box<dyn FnOnce() + Send>)>> =
    Mutex::new(None);
/// What the next `thread_idle` event of a thread named `idle-hook` runs, once.
static ON_IDLE: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);
/// `thread_idle`/`thread_active` of threads named `idle-hook`, and what their jobs note,
/// in order, while `LOGGING` is set.
static LOG: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
/// Whether `LOG` records.
static LOGGING: AtomicBool = AtomicBool::new(false);
/// Whether every `thread_idle` event of a thread named `idle-work` runs a small parallel
/// computation (`idle_work`).
static IDLE_WORK: AtomicBool = AtomicBool::new(false);
/// What the next `thread_active` event of a thread named `term-hook` runs, once.
static ON_ACTIVE: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);
/// What the next `job_stolen` event runs (on the thief), once.
static ON_STOLEN: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);
/// One test at a time arms the subscriber.
static SERIAL: Mutex<()> = Mutex::new(());

/// Spawns one job from the first `job_stolen` event after each arming of `SENDER`, and
/// one from the first `thread_idle` event after each arming of `IDLE_SENDER`.
struct SpawnOnSteal;

impl Subscriber for SpawnOnSteal {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("stealpool")
    }
    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        if attributes.metadata().name() == "worker_thread"
            && std::thread::current().name() == Some("span-hook")
        {
            panic!("subscriber");
        }
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let name = event.metadata().name();
        let thread = std::thread::current();
        if LOGGING.load(SeqCst)
            && thread.name() == Some("idle-hook")
            && (name == "thread_idle" || name == "thread_active")
        {
            LOG.lock().unwrap().push(name);
        }
        if name == "thread_idle" && thread.name() == Some("idle-work") && IDLE_WORK.load(SeqCst) {
            idle_work();
            return;
        }
        if name == "thread_active" && thread.name() == Some("term-hook") {
            let on_active = ON_ACTIVE.lock().unwrap().take();
            if let Some(on_active) = on_active {
                on_active();
            }
            return;
        }
        if event.metadata().name() == "job_injected" {
            let mut armed = ON_INJECTED.lock().unwrap();
            if armed.as_ref().map(|(thread, _)| *thread) == Some(std::thread::current().id()) {
                let (_, on_injected) = armed.take().unwrap();
                drop(armed);
                on_injected();
            }
            return;
        }
        if event.metadata().name() == "thread_idle"
            && std::thread::current().name() == Some("idle-hook")
        {
            let on_idle = ON_IDLE.lock().unwrap().take();
            if let Some(on_idle) = on_idle {
                on_idle();
                return;
            }
        }
        if event.metadata().name() == "thread_idle" {
            if let Some(tx) = IDLE_SENDER.lock().unwrap().take() {
                // The parking worker spawns onto its own pool and so wakes a parked
                // worker: with one worker, itself.
                stealpool::spawn(move || {
                    let _ = tx.send(stealpool::current_thread_index().unwrap_or(usize::MAX));
                });
            }
            return;
        }
        if event.metadata().name() != "job_stolen" {
            return;
        }
        let on_stolen = ON_STOLEN.lock().unwrap().take();
        if let Some(on_stolen) = on_stolen {
            on_stolen();
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

/// A builder for `threads` workers, each named `name` if given.
fn builder(threads: usize, name: Option<&'static str>) -> stealpool::ThreadPoolBuilder {
    let builder = stealpool::ThreadPoolBuilder::new().num_threads(threads);
    match name {
        Some(name) => builder.thread_name(move |_| name.into()),
        None => builder,
    }
}

/// A pool of `threads` workers, each named `name` if given.
fn pool(threads: usize, name: Option<&'static str>) -> stealpool::ThreadPool {
    builder(threads, name).build().unwrap()
}

/// A pool of one worker, named `name` if given, whose panic handler reports each panic it
/// gets on the returned receiver.
fn pool_reporting_panics(
    name: Option<&'static str>,
) -> (stealpool::ThreadPool, mpsc::Receiver<()>) {
    let (handled_tx, handled_rx) = mpsc::channel();
    let handled_tx = Mutex::new(handled_tx);
    let pool = builder(1, name)
        .panic_handler(move |_| handled_tx.lock().unwrap().send(()).unwrap())
        .build()
        .unwrap();
    (pool, handled_rx)
}

/// Installs the subscriber once for the whole binary.
fn subscriber() -> std::sync::MutexGuard<'static, ()> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| tracing::subscriber::set_global_default(SpawnOnSteal).unwrap());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_subscriber_that_spawns_as_a_worker_parks_does_not_hang_it() {
    let _serial = subscriber();
    let ran_on = watchdog(60, || {
        let mut ran_on = Vec::new();
        for threads in [1, 2] {
            let pool = pool(threads, None);
            for _ in 0..5 {
                let (tx, rx) = mpsc::sync_channel(1);
                *IDLE_SENDER.lock().unwrap() = Some(tx);
                // A job makes sure a worker of this pool runs and later parks again.
                pool.install(|| ());
                // Nothing else of this pool runs: the job that sends was spawned by a
                // worker of `pool` from its `thread_idle` event.
                let index = rx
                    .recv_timeout(Duration::from_secs(20))
                    .expect("the job spawned from thread_idle ran (its worker parked and woke)");
                ran_on.push(index);
            }
        }
        ran_on
    });
    assert_eq!(ran_on.len(), 10);
    assert!(ran_on.iter().all(|&i| i < 2), "ran on a worker: {ran_on:?}");
}

#[test]
fn a_job_spawned_by_a_job_stolen_subscriber_is_not_lost() {
    let _serial = subscriber();
    let (spawned, lost) = watchdog(60, || {
        let pool = pool(2, None);
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

/// The thief's `job_stolen` event waits for a job of another pool, which itself waits for
/// a job injected into the thief's pool once both of that pool's workers are parked (the
/// thief inside the event, the owner in its scope): the injection must wake one of them.
#[test]
fn a_subscriber_that_waits_for_another_pool_from_job_stolen_is_woken() {
    let _serial = subscriber();
    watchdog(60, || {
        let p = std::sync::Arc::new(pool(2, None));
        let q = pool(1, None);
        let q = std::sync::Arc::new(q);
        // The injection below then takes the path that counts on an awake searcher, which
        // a thief still counted as searching would fake.
        wait_for_the_barrier();
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        for _ in 0..100 {
            let (p2, q2, ran_tx) = (
                std::sync::Arc::clone(&p),
                std::sync::Arc::clone(&q),
                ran_tx.clone(),
            );
            *ON_STOLEN.lock().unwrap() = Some(Box::new(move || {
                q2.install(move || {
                    // The thief waits for this job by running its own pool's jobs; with
                    // none to run it parks, and so does the owner, which waits in the
                    // scope for the job the thief took.
                    common::wait_parked(&p2, 2);
                    p2.install(|| ());
                    ran_tx.send(()).unwrap();
                });
            }));
            // A scope's spawns go on the installing worker's deque; the other worker steals.
            p.install(|| {
                stealpool::scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|_| std::thread::sleep(Duration::from_millis(1)));
                    }
                })
            });
            if ON_STOLEN.lock().unwrap().take().is_none() {
                // The hook ran (and `install` returned only after the thief's event did).
                ran_rx
                    .recv_timeout(Duration::from_secs(20))
                    .expect("the injection into the thief's pool ran");
                return;
            }
            // Nothing was stolen this time: the owner ran all four.
        }
        panic!("no steal in 100 rounds: the interleaving never happened");
    });
}

/// A `thread_idle` subscriber that waits for another pool (its worker waits inside the
/// event, running its own pool's jobs meanwhile): afterwards the pool must still wake for
/// new work. The event once fired inside the parking protocol, where that wait counted the
/// worker as a sleeper twice and one wake-up left a sleeper counted for ever.
#[test]
fn a_thread_idle_subscriber_that_waits_for_another_pool_leaves_the_pool_wakeable() {
    let _serial = subscriber();
    watchdog(60, || {
        let q = pool(1, None);
        let (waited_tx, waited_rx) = mpsc::channel::<()>();
        *ON_IDLE.lock().unwrap() = Some(Box::new(move || {
            q.install(|| ());
            waited_tx.send(()).unwrap();
        }));
        let p = pool(1, Some("idle-hook"));
        // The worker goes idle once started, with nothing to run: the event fires.
        waited_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the thread_idle event fired and its wait returned");
        common::wait_parked(&p, 1);
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        p.spawn(move || ran_tx.send(()).unwrap());
        ran_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a job spawned after the event ran");
    });
}

/// Where the asymmetric barrier exists, waits (up to 5 s) until its registration, started
/// by the first build, is done: sleepers then park until woken, with no recheck.
fn wait_for_the_barrier() {
    let start = Instant::now();
    while stealpool::__barrier_mode() == "fences" && start.elapsed() < Duration::from_secs(5) {
        std::thread::yield_now();
    }
}

/// Arms `ON_INJECTED` for the calling thread.
fn on_injected(f: impl FnOnce() + Send + 'static) {
    *ON_INJECTED.lock().unwrap() = Some((std::thread::current().id(), Box::new(f)));
}

/// A `job_injected` subscriber that calls into the same pool from outside runs between the
/// outer call's push and its wait, on the same thread: each call waits on a latch of its
/// own and gets its own value.
#[test]
fn a_job_injected_subscriber_may_call_the_pool_again() {
    let _serial = subscriber();
    watchdog(60, || {
        let pool = std::sync::Arc::new(pool(1, None));
        for round in 0..20u32 {
            let (inner_tx, inner_rx) = mpsc::channel();
            let inner_pool = std::sync::Arc::clone(&pool);
            on_injected(move || {
                inner_tx
                    .send(inner_pool.install(move || round * 2))
                    .unwrap()
            });
            assert_eq!(pool.install(move || round), round);
            assert_eq!(
                inner_rx.try_recv(),
                Ok(round * 2),
                "the subscriber ran its call"
            );
        }
    });
}

/// A `job_injected` subscriber that panics while an `install` from outside waits: the
/// caller's job is already queued on its frame, so the panic goes to the pool's panic
/// handler and the call completes.
#[test]
fn a_panicking_job_injected_subscriber_reaches_the_panic_handler() {
    let _serial = subscriber();
    watchdog(60, || {
        let (pool, handled_rx) = pool_reporting_panics(None);
        on_injected(|| panic!("subscriber"));
        assert_eq!(pool.install(|| 5), 5);
        // The subscriber ran on this thread, inside `install`: the handler ran already.
        assert_eq!(
            handled_rx.try_recv(),
            Ok(()),
            "the subscriber's panic reached the handler"
        );
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv_timeout(Duration::from_secs(20))
            .expect("the pool still runs jobs");
    });
}

/// A `job_injected` subscriber that blocks until the job just injected has run (it takes a
/// lock that a running job holds until then): the job must already be queued and a
/// worker woken when the subscriber runs.
#[test]
fn a_job_injected_subscriber_may_wait_for_the_injected_job() {
    let _serial = subscriber();
    watchdog(60, || {
        let pool = pool(2, None);
        let lock = std::sync::Arc::new(Mutex::new(()));
        let (held_tx, held_rx) = mpsc::channel::<()>();
        let (j_tx, j_rx) = mpsc::channel::<()>();
        let (k_tx, k_rx) = mpsc::channel::<bool>();
        let k_lock = std::sync::Arc::clone(&lock);
        pool.spawn(move || {
            let _held = k_lock.lock().unwrap();
            held_tx.send(()).unwrap();
            k_tx.send(j_rx.recv_timeout(Duration::from_secs(20)).is_ok())
                .unwrap();
        });
        held_rx.recv().unwrap();
        // The other worker has nothing to do: it parks, and only the injection wakes it
        // (once the barrier's registration is done: before, a sleeper rechecks after a
        // millisecond on its own).
        wait_for_the_barrier();
        common::wait_parked(&pool, 1);
        let hook_lock = std::sync::Arc::clone(&lock);
        on_injected(move || drop(hook_lock.lock().unwrap()));
        pool.spawn(move || j_tx.send(()).unwrap());
        assert!(
            k_rx.recv().unwrap(),
            "the injected job ran while the subscriber waited"
        );
    });
}

/// A worker's event subscriber that panics (`thread_idle` here): the panic goes to the
/// pool's panic handler, and the worker goes on.
#[test]
fn a_panicking_worker_event_subscriber_reaches_the_panic_handler() {
    let _serial = subscriber();
    watchdog(60, || {
        *ON_IDLE.lock().unwrap() = Some(Box::new(|| panic!("subscriber")));
        let (pool, handled_rx) = pool_reporting_panics(Some("idle-hook"));
        handled_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the subscriber's panic reached the handler");
        assert_eq!(pool.install(|| 3), 3);
    });
}

/// A subscriber that panics when a worker opens its `worker_thread` span: the panic goes
/// to the pool's panic handler, and the worker runs jobs all the same.
#[test]
fn a_subscriber_that_panics_on_the_worker_span_reaches_the_panic_handler() {
    let _serial = subscriber();
    watchdog(60, || {
        let (pool, handled_rx) = pool_reporting_panics(Some("span-hook"));
        assert_eq!(pool.install(|| 4), 4);
        handled_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the subscriber's panic reached the handler");
    });
}

/// `thread_idle` and `thread_active` bracket each idle period, also when a `thread_idle`
/// subscriber pushes the work that ends it (the worker runs the job it finds on its own
/// deque only after `thread_active`).
#[test]
fn thread_idle_and_thread_active_alternate_when_a_subscriber_spawns() {
    let _serial = subscriber();
    let log = watchdog(60, || {
        LOG.lock().unwrap().clear();
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        *ON_IDLE.lock().unwrap() = Some(Box::new(move || {
            stealpool::spawn(move || {
                LOG.lock().unwrap().push("job");
                ran_tx.send(()).unwrap();
            })
        }));
        LOGGING.store(true, SeqCst);
        let pool = pool(1, Some("idle-hook"));
        ran_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the subscriber's job ran");
        // After the job the worker goes idle again: a second `thread_idle`.
        common::wait_parked(&pool, 1);
        LOGGING.store(false, SeqCst);
        std::mem::take(&mut *LOG.lock().unwrap())
    });
    assert_eq!(
        &log[..4],
        ["thread_idle", "thread_active", "job", "thread_idle"],
        "{log:?}"
    );
    let events: Vec<_> = log.iter().filter(|e| **e != "job").collect();
    assert!(
        events.windows(2).all(|w| w[0] != w[1]),
        "idle and active alternate: {log:?}"
    );
}

/// A `thread_active` subscriber that waits for the pool (a `join` whose first half waits
/// for its second) never runs on a pool that has terminated, where no worker is left to
/// run the second half: `shutdown` returns.
#[test]
fn no_worker_event_fires_once_the_pool_has_terminated() {
    let _serial = subscriber();
    watchdog(60, || {
        let pool = pool(2, Some("term-hook"));
        common::wait_parked(&pool, 2);
        *ON_ACTIVE.lock().unwrap() = Some(Box::new(|| {
            let (tx, rx) = mpsc::channel::<()>();
            stealpool::join(move || rx.recv().unwrap(), move || tx.send(()).unwrap());
        }));
        pool.shutdown().unwrap();
        // If the hook ran (the pool alive, or not), it completed: `shutdown` returned.
        ON_ACTIVE.lock().unwrap().take();
    });
}

/// A subscriber's parallel computation on its own worker's pool: a scope of two spawns
/// (not again from a wait inside it).
fn idle_work() {
    thread_local!(static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if INSIDE.with(|inside| inside.replace(true)) {
        return;
    }
    let count = std::sync::atomic::AtomicUsize::new(0);
    stealpool::scope(|s| {
        for _ in 0..2 {
            s.spawn(|_| {
                count.fetch_add(1, SeqCst);
            });
        }
    });
    assert_eq!(count.load(SeqCst), 2);
    INSIDE.with(|inside| inside.set(false));
}

/// A `thread_idle` subscriber that runs parallel work on its pool each time: the idle
/// period it was told of stays one period (a wait inside the subscriber neither ends it
/// nor opens another), so the pool still falls asleep.
#[test]
fn a_thread_idle_subscriber_that_runs_parallel_work_lets_the_pool_sleep() {
    let _serial = subscriber();
    for threads in [2, 8] {
        watchdog(60, move || {
            IDLE_WORK.store(true, SeqCst);
            let pool = pool(threads, Some("idle-work"));
            pool.install(|| stealpool::join(|| (), || ()));
            common::wait_parked(&pool, threads);
            IDLE_WORK.store(false, SeqCst);
        });
    }
}
