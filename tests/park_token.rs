//! An outside thread that waits for the pool (`install`, a blocking scope, a broadcast)
//! must not use up a `Thread::unpark` meant for its own later `std::thread::park()`:
//! code that hands a thread a token before calling into the pool and parks after (it
//! works with rayon-core, whose outside callers block on a condvar) would hang.
//! (Found by a breaker run: the token was eaten 5 times out of 5.)

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

/// Gives the calling thread a park token from another thread, runs `call`, then parks:
/// the park must return (the token was there before the call).
fn token_survives(call: impl FnOnce()) {
    let me = thread::current();
    thread::spawn(move || me.unpark()).join().unwrap();
    call();
    // With the token kept this returns at once; a lost token hangs until the watchdog.
    thread::park();
}

#[test]
fn a_pending_unpark_survives_install_scope_and_broadcast() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        // The job outlasts the caller's first park, so the caller parks while waiting.
        let slow = || thread::sleep(Duration::from_millis(20));
        token_survives(|| pool.install(slow));
        token_survives(|| {
            stealpool::in_place_scope(|s| {
                s.spawn(|_| slow());
            })
        });
        token_survives(|| {
            pool.broadcast(|_| slow());
        });
        let (tx, rx) = mpsc::channel();
        token_survives(|| {
            pool.spawn_with_handle(move || {
                slow();
                tx.send(()).unwrap();
            })
            .join()
            .unwrap()
        });
        rx.recv().unwrap();
    });
}
