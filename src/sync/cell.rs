//! `UnsafeCell` with loom's API, so that the cells a job hands from thread to thread are
//! loom's under `--cfg loom` and the models see every access to them (tokio's
//! `loom::std::unsafe_cell` does the same).
//!
//! Access goes through closures that receive the raw pointer: [`UnsafeCell::with`] for
//! reads, [`UnsafeCell::with_mut`] for writes. Under loom each call is a tracked access,
//! and an access that does not happen after a conflicting one (no happens-before edge
//! through the atomics and locks of the `checked` tier) fails the model as a data race,
//! even where the real memory would hold the right value. Without loom both are the
//! pointer of std's `UnsafeCell`, inlined away.

/// std's `UnsafeCell`, with loom's access API.
#[repr(transparent)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Reads through the cell's pointer: `f` gets it for the duration of the access.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Writes through the cell's pointer: `f` gets it for the duration of the access.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
