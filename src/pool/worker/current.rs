//! The current worker: the thread-locals that find the worker running on this thread
//! ([`WorkerThread::with_current`]) and, for the `join` fast path, its private stack
//! ([`WorkerThread::with_private_stack`], a [`PrivateStackRef`]); making a worker the
//! current thread's (`set_current`, `adopt`) and unregistering it when it is dropped.

use super::WorkerThread;
use crate::pool::private_stack::PrivateStack;
use crate::sync::barrier::FixedLight;
use crate::sync::unchecked::Cell;
use std::ptr::{self, NonNull};

thread_local! {
    /// The worker running on this thread, if any. Points into the thread body's frame
    /// (`thread.rs`), or to the boxed worker in `ADOPTED`.
    static WORKER_THREAD_STATE: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };

    /// The worker of a thread adopted by a `use_current_thread` pool, owned here so that it
    /// is dropped (unregistering itself, releasing its registry) when the thread exits.
    /// rayon-core leaks it.
    static ADOPTED: std::cell::RefCell<Option<Box<WorkerThread>>> =
        const { std::cell::RefCell::new(None) };

    /// Set while this thread builds a `use_current_thread` pool, whose worker 0 it becomes
    /// once the build is over (`Adopting`): until then it must not become a worker of
    /// another pool (user code runs during the build: the spawn handler, `thread_name`).
    static ADOPTING: Cell<bool> = const { Cell::new(false) };

    /// The current worker's [`PrivateStackRef`], once its light barrier is fixed
    /// ([`WorkerThread::fix_current_private_stack`]); `None` on any other thread. Cleared
    /// with `WORKER_THREAD_STATE` when the worker is dropped.
    static PRIVATE_STACK: Cell<Option<RawPrivateStackRef>> = const { Cell::new(None) };
}

/// [`PrivateStackRef`] as the thread-local keeps it.
#[derive(Clone, Copy)]
struct RawPrivateStackRef {
    /// The current worker's private stack (its `private_stack`).
    stack: NonNull<PrivateStack>,
    /// The proof that this thread's light barrier is fixed.
    light: FixedLight,
}

/// The current worker's private stack of `join` halves, as the `join` fast path reaches
/// it: straight from a thread-local, one load, with the owner's light barrier already
/// fixed ([`FixedLight`]: the compiler fence once the asymmetric barrier is published,
/// else the full fence), so that the fast path neither loads the stack through the
/// worker nor tests the barrier mode. A worker without one yet (the asymmetric barrier not
/// published) takes the checked path, on the [`WorkerThread`] itself.
#[derive(Clone, Copy)]
pub(crate) struct PrivateStackRef<'a> {
    /// The private stack.
    stack: &'a PrivateStack,
    /// The pop's side of the barrier pair.
    light: FixedLight,
}

impl<'a> PrivateStackRef<'a> {
    /// The private stack.
    #[inline(always)]
    pub(crate) fn stack(&self) -> &'a PrivateStack {
        self.stack
    }

    /// The owner's light barrier, fixed for this thread.
    #[inline(always)]
    pub(crate) fn light(&self) -> FixedLight {
        self.light
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        // Unregister, so the thread-local never points at a dead frame. A worker whose
        // registration failed (`set_current` found another) leaves that one registered.
        WORKER_THREAD_STATE.with(|t| {
            if ptr::eq(t.get(), self) {
                WorkerThread::clear_private_stack();
                t.set(ptr::null());
            }
        });
    }
}

/// While alive: the current thread is building a `use_current_thread` pool
/// ([`WorkerThread::adopting`]).
pub(crate) struct Adopting(());

impl Drop for Adopting {
    fn drop(&mut self) {
        ADOPTING.with(|a| a.set(false));
    }
}

impl WorkerThread {
    /// Runs `f` with the worker running on the current thread, if the current thread is
    /// one. The borrow cannot leave `f`: the worker lives on its thread's body's
    /// frame (or in the thread's `ADOPTED` slot), not for `'static`.
    #[inline(always)]
    pub(crate) fn with_current<R>(f: impl FnOnce(Option<&WorkerThread>) -> R) -> R {
        let ptr = WORKER_THREAD_STATE.with(Cell::get);
        // SAFETY: a non-null pointer was stored by `set_current` and points to a
        // `WorkerThread` that stays alive and in place until its `Drop` clears the slot:
        // when its thread body returns, or for an adopted worker when the thread's
        // `ADOPTED` slot is destroyed. Both happen on this thread, never while `f` (which
        // runs on this thread, to completion) is running, and the borrow given to `f`
        // cannot outlive the call.
        f(unsafe { ptr.as_ref() })
    }

    /// Whether the current thread is a worker of any pool.
    #[inline]
    pub(crate) fn is_worker_thread() -> bool {
        !WORKER_THREAD_STATE.with(Cell::get).is_null()
    }

    /// Whether the current thread is a worker of any pool, or is building a
    /// `use_current_thread` pool (whose worker 0 it is about to become).
    pub(crate) fn is_or_becomes_worker() -> bool {
        WorkerThread::is_worker_thread() || ADOPTING.with(Cell::get)
    }

    /// Marks the current thread as building a `use_current_thread` pool until the returned
    /// guard drops: meanwhile [`is_or_becomes_worker`](Self::is_or_becomes_worker) is
    /// `true`, so that user code run by the build (the spawn handler, `thread_name`)
    /// cannot make it a worker of another pool first (as on rayon-core, which adopts the
    /// thread before it starts the other workers). `None` if the thread already is a
    /// worker, or is building such a pool.
    pub(crate) fn adopting() -> Option<Adopting> {
        if WorkerThread::is_or_becomes_worker() {
            return None;
        }
        ADOPTING.with(|a| a.set(true));
        Some(Adopting(()))
    }

    /// Makes `thread` the current thread's worker for the rest of the thread's life (the
    /// building thread of a `use_current_thread` pool, which never runs the main loop).
    /// It is dropped when the thread exits; from a thread-local destructor that runs after
    /// that slot's own, it is leaked instead.
    ///
    /// # Panics
    /// If the current thread is already a worker.
    pub(crate) fn adopt(thread: WorkerThread) {
        let boxed = Box::new(thread);
        // SAFETY: a box's contents do not move; the box goes into `ADOPTED` right below
        // (or is leaked) and stays there until the thread-local is destroyed, when its
        // `Drop` unregisters it before it is freed.
        unsafe { WorkerThread::set_current(&*boxed) };
        let mut boxed = Some(boxed);
        if ADOPTED
            .try_with(|slot| *slot.borrow_mut() = boxed.take())
            .is_err()
        {
            // The slot is gone (we run in a late thread-local destructor): keep the
            // worker for ever instead.
            if let Some(boxed) = boxed {
                Box::leak(boxed);
            }
        }
    }

    /// Registers `thread` as the current thread's worker.
    ///
    /// # Safety
    /// `thread` must stay alive and in place until it is dropped (which unregisters it).
    pub(crate) unsafe fn set_current(thread: *const WorkerThread) {
        WORKER_THREAD_STATE.with(|t| {
            assert!(t.get().is_null(), "thread is already a stealpool worker");
            t.set(thread);
        });
        WorkerThread::fix_current_private_stack();
    }

    /// Runs `f` with the current worker's [`PrivateStackRef`], if the current thread is a
    /// worker whose light barrier is fixed.
    #[inline(always)]
    pub(crate) fn with_private_stack<R>(f: impl FnOnce(Option<PrivateStackRef<'_>>) -> R) -> R {
        let raw = PRIVATE_STACK.get();
        f(raw.map(|raw| PrivateStackRef {
            // SAFETY: `fix_current_private_stack` stored a pointer to the current worker's
            // stack, which the worker keeps alive (its `Arc`) until its `Drop` clears the
            // thread-local, on this thread; that never happens while `f` runs, and the
            // borrow cannot outlive the call.
            stack: unsafe { raw.stack.as_ref() },
            light: raw.light,
        }))
    }

    /// Makes the `join` fast path ([`PrivateStackRef`]) available to the current thread's
    /// worker, if it has one and the light barrier can be fixed now ([`FixedLight::get`]):
    /// always in the fence builds, once the asymmetric barrier is published in the
    /// others. Called when a worker becomes the current thread's, and by every `join` on
    /// the checked path. It reads the current worker itself, so the stack it stores is
    /// always the one `Drop` clears.
    pub(crate) fn fix_current_private_stack() {
        let Some(light) = FixedLight::get() else {
            return;
        };
        WorkerThread::with_current(|worker| {
            if let Some(worker) = worker {
                let stack = NonNull::from(&**worker.private_stack);
                PRIVATE_STACK.with(|slot| slot.set(Some(RawPrivateStackRef { stack, light })));
            }
        });
    }

    /// Takes the fast path away again: the worker is about to be dropped.
    pub(super) fn clear_private_stack() {
        PRIVATE_STACK.with(|slot| slot.set(None));
    }
}
