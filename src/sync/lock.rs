//! `Mutex` and `Condvar` without poisoning, over std's types (and, for the sleep protocol
//! under `--cfg loom`, over loom's).
//!
//! std's `Mutex` and `Condvar` are futex words owned by each object (Linux, and the
//! equivalent on the other systems std supports): no process-wide state, so they are
//! safe to create and use in a forked child whatever the parent's threads were doing
//! (`super` explains why parking_lot is not). rayon-core uses the same types.
//!
//! Poisoning is dropped: the scheduler never runs user code while holding one of these
//! locks, and a panic inside the scheduler itself is a bug that aborts or propagates
//! anyway, so a poisoned lock carries no information worth an `unwrap` at every call.
//! The API is std's otherwise: `Condvar::wait` takes the guard by value and returns it.
//!
//! One addition: `Condvar` counts its waiters, and a notify with none is a load, not a
//! syscall. std's futex condvar makes a `FUTEX_WAKE` call on every notify (parking_lot
//! looked at its queue first), and the scheduler notifies far more often than anyone
//! waits: every worker start-up and exit, every completed join handle. Correct because
//! every caller changes the condition under the mutex before it notifies, and a waiter
//! counts itself under that mutex before it sleeps: a notifier that reads zero ran its
//! critical section before any waiter that would need it checked the condition.

/// Defines `Mutex<T>` and `Condvar` over the backend module `$backend` (a path with
/// std's `Mutex`, `MutexGuard` and `Condvar` API) and its atomics module `$atomic`.
/// `$($konst)?` is `const` where the backend's constructors are (std's; `LockLatch::new`
/// is `const`).
macro_rules! unpoisoned_locks {
    ($($backend:ident)::+, $($atomic:ident)::+, $($konst:tt)?) => {
        use std::time::Duration;

        /// The guard of [`Mutex`]: the backend's own.
        pub(crate) type MutexGuard<'a, T> = $($backend)::+::MutexGuard<'a, T>;

        /// A mutex whose `lock` cannot fail.
        #[derive(Debug, Default)]
        pub(crate) struct Mutex<T>($($backend)::+::Mutex<T>);

        impl<T> Mutex<T> {
            /// An unlocked mutex holding `value`.
            pub(crate) $($konst)? fn new(value: T) -> Self {
                Mutex($($backend)::+::Mutex::new(value))
            }

            /// Blocks until the lock is held; a poisoned lock is taken over as it is.
            #[inline]
            pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
                self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
            }
        }

        /// A condition variable for [`Mutex`] that skips notifying when nobody waits.
        #[derive(Debug, Default)]
        pub(crate) struct Condvar {
            inner: $($backend)::+::Condvar,
            /// Threads inside `wait`/`wait_timeout`; changed only under the mutex the
            /// waiter holds.
            waiters: $($atomic)::+::AtomicUsize,
        }

        impl Condvar {
            /// A condvar nobody waits on.
            pub(crate) $($konst)? fn new() -> Self {
                Condvar {
                    inner: $($backend)::+::Condvar::new(),
                    waiters: $($atomic)::+::AtomicUsize::new(0),
                }
            }

            /// Releases `guard`, blocks until notified (or spuriously woken), and
            /// returns the guard re-acquired. Callers loop on their condition.
            pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
                self.waiters.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let guard = self.inner.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner());
                self.waiters.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                guard
            }

            /// As [`wait`](Self::wait), but gives up after `timeout` (loom never
            /// times out: its wait is a plain wait).
            pub(crate) fn wait_timeout<'a, T>(
                &self,
                guard: MutexGuard<'a, T>,
                timeout: Duration,
            ) -> MutexGuard<'a, T> {
                self.waiters.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let (guard, _) = self
                    .inner
                    .wait_timeout(guard, timeout)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                self.waiters.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                guard
            }

            /// Wakes one waiter, if any. The caller changed the condition under the
            /// mutex first (it may notify after unlocking).
            #[inline]
            pub(crate) fn notify_one(&self) {
                if self.waiters.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                    self.inner.notify_one();
                }
            }

            /// Wakes every waiter, if any; as [`notify_one`](Self::notify_one).
            #[inline]
            pub(crate) fn notify_all(&self) {
                if self.waiters.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                    self.inner.notify_all();
                }
            }
        }
    };
}

/// std's futex-based locks: every lock of the scheduler outside loom models. (Under
/// loom the protocols take loom's `Condvar`, so this one goes unused there.)
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod std_locks {
    unpoisoned_locks!(std::sync, std::sync::atomic, const);
}

/// loom's model-checked locks, for the sleep protocol under `--cfg loom`.
#[cfg(loom)]
pub(crate) mod loom_locks {
    unpoisoned_locks!(loom::sync, loom::sync::atomic,);
}
