//! An outside thread that waits for the pool (`install`, a blocking scope, a broadcast)
//! must not use up a `Thread::unpark` meant for its own later `std::thread::park()`:
//! code that hands a thread a token before calling into the pool and parks after (it
//! works with rayon-core, whose outside callers block on a condvar) would hang.
//!
//! The interleaving each case needs, the caller blocked in its wait before the job
//! finishes, is forced where the caller's state is observable (Linux, `/proc`): the job
//! waits until the caller's thread sleeps, and the test asserts that the caller blocked
//! inside the call (its voluntary context switches grew). Elsewhere the job sleeps 20 ms
//! instead, which makes the wait likely but asserts nothing.

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

/// The calling thread's id in `/proc` (Linux), if there is one.
fn my_tid() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str().map(str::to_owned)
}

/// The state letter of this process's thread `tid` (`S`: sleeping), from `/proc`.
fn thread_state(tid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "tid (comm) S ...": the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// How often this process's thread `tid` gave up the CPU to wait.
fn voluntary_switches(tid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.starts_with("voluntary_ctxt_switches"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A job body that returns only once the thread `caller` is blocked (with `/proc`), or
/// after 20 ms (without).
fn until_blocked(caller: Option<String>) -> impl Fn() + Send + Sync + Clone {
    move || match &caller {
        Some(tid) => {
            while thread_state(tid) != Some('S') {
                thread::yield_now();
            }
        }
        None => thread::sleep(Duration::from_millis(20)),
    }
}

/// Gives the calling thread a park token from another thread, runs `call` with a job
/// body that outlasts the caller's first block, then parks: the park must return (the
/// token was there before the call).
fn token_survives(call: impl FnOnce(&(dyn Fn() + Send + Sync))) {
    let me = thread::current();
    let tid = my_tid();
    let body = until_blocked(tid.clone());
    thread::spawn(move || me.unpark()).join().unwrap();
    let before = tid.as_deref().and_then(voluntary_switches);
    call(&body);
    if let (Some(tid), Some(before)) = (tid.as_deref(), before) {
        let after = voluntary_switches(tid).expect("/proc/self/task/<tid>/status");
        assert!(after > before, "the caller never blocked inside the call");
    }
    // With the token kept this returns at once; a lost token hangs until the watchdog.
    thread::park();
}

#[test]
fn a_pending_unpark_survives_install_scope_and_broadcast() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        token_survives(|slow| pool.install(slow));
        token_survives(|slow| {
            stealpool::in_place_scope(|s| {
                s.spawn(|_| slow());
            })
        });
        token_survives(|slow| {
            pool.broadcast(|_| slow());
        });
        let (tx, rx) = mpsc::channel();
        // The handle's job must be `'static`: its own body, for the same caller.
        token_survives(|_| {
            let body = until_blocked(my_tid());
            pool.spawn_with_handle(move || {
                body();
                tx.send(()).unwrap();
            })
            .join()
            .unwrap()
        });
        rx.recv().unwrap();
    });
}
