//! What a section holds across parallel work, for the re-entry scenarios of rayon-rs/rayon
//! #592, #1205 and #1253 (`tests/rayon_parity_waits.rs`, `tests/isolate.rs`): a job that runs
//! inside the section on the section's own thread, and takes what it holds, waits on
//! itself. The scenarios count such jobs ([`Held::is_held_here`]) instead of hanging.

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, RwLock, TryLockError};

thread_local! {
    /// The thread-local a [`Held::ThreadLocal`] section borrows.
    static CELL: RefCell<u32> = const { RefCell::new(0) };
    /// Whether this thread is inside a section ([`Held::hold`]).
    static IN_SECTION: Cell<bool> = const { Cell::new(false) };
}

/// The locks a section may hold, shared by the section and the jobs that try them.
#[derive(Debug, Default)]
pub struct Locks {
    /// Held by a [`Held::Mutex`] section.
    mutex: Mutex<()>,
    /// Written by a [`Held::RwLock`] section.
    rwlock: RwLock<()>,
}

/// What a section holds.
#[derive(Clone, Copy, Debug)]
pub enum Held {
    /// A `Mutex` (rayon-rs/rayon#592).
    Mutex,
    /// An `RwLock`'s write guard (rayon-rs/rayon#1205); a job tries to read it.
    RwLock,
    /// A mutable borrow of a thread-local `RefCell` (rayon-rs/rayon#1253).
    ThreadLocal,
}

impl Held {
    /// Runs `section` holding one of `locks` or the thread-local's borrow, marked as
    /// inside the section on this thread.
    pub fn hold<R>(self, locks: &Locks, section: impl FnOnce() -> R) -> R {
        let marked = || {
            IN_SECTION.with(|inside| inside.set(true));
            let value = section();
            IN_SECTION.with(|inside| inside.set(false));
            value
        };
        match self {
            Held::Mutex => {
                let _guard = locks.mutex.lock().unwrap();
                marked()
            }
            Held::RwLock => {
                let _guard = locks.rwlock.write().unwrap();
                marked()
            }
            Held::ThreadLocal => CELL.with(|cell| {
                let _borrow = cell.borrow_mut();
                marked()
            }),
        }
    }

    /// Whether the current thread is inside the section and finds it held: a job run
    /// there that took it would wait on itself. (The lock alone would also count a job
    /// that runs on another worker while the section holds it, which waits only for the
    /// section to end.)
    pub fn is_held_here(self, locks: &Locks) -> bool {
        IN_SECTION.with(|inside| inside.get())
            && match self {
                Held::Mutex => matches!(locks.mutex.try_lock(), Err(TryLockError::WouldBlock)),
                Held::RwLock => matches!(locks.rwlock.try_read(), Err(TryLockError::WouldBlock)),
                Held::ThreadLocal => CELL.with(|cell| cell.try_borrow_mut().is_err()),
            }
    }
}
