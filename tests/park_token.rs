//! An outside thread that waits for the pool (`install`, a blocking scope, a broadcast)
//! must not use up a `Thread::unpark` meant for its own later `std::thread::park()`:
//! code that hands a thread a token before calling into the pool and parks after (it
//! works with rayon-core, whose outside callers block on a condvar) would hang.
//!
//! The interleaving each case needs, the caller blocked in its wait before the job
//! finishes, is forced where the caller's state is observable (Linux, `/proc`): the job
//! waits until the caller's thread sleeps, and the test asserts that the caller blocked
//! inside the call (its voluntary context switches grew). Elsewhere the test skips.

mod common;

use std::sync::mpsc;
use std::thread;

use common::blocked::{my_tid, voluntary_switches, wait_blocked};
use common::watchdog;
use stealpool::ThreadPoolBuilder;

/// A job body that returns only once the thread `caller` is blocked.
fn until_blocked(caller: String) -> impl Fn() + Send + Sync + Clone {
    move || wait_blocked(&caller)
}

/// Gives the calling thread a park token from another thread, runs `call` with a job
/// body that outlasts the caller's first block, then parks: the park must return (the
/// token was there before the call).
fn token_survives(call: impl FnOnce(&(dyn Fn() + Send + Sync))) {
    let me = thread::current();
    let tid = my_tid().expect("/proc/thread-self");
    let body = until_blocked(tid.clone());
    thread::spawn(move || me.unpark()).join().unwrap();
    let before = voluntary_switches(&tid).expect("/proc/self/task/<tid>/status");
    call(&body);
    let after = voluntary_switches(&tid).expect("/proc/self/task/<tid>/status");
    assert!(after > before, "the caller never blocked inside the call");
    // With the token kept this returns at once; a lost token hangs until the watchdog.
    thread::park();
}

#[test]
fn a_pending_unpark_survives_install_scope_and_broadcast() {
    if my_tid().is_none() {
        common::skip("no /proc: a caller blocked inside the call cannot be waited for");
        return;
    }
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
            let body = until_blocked(my_tid().unwrap());
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
