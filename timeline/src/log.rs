//! A worker's event log: append-only, written by its owner only, readable by anyone at
//! any time.
//!
//! Events go into fixed-size chunks. The owner writes the slot at the chunk's length and
//! then publishes the new length with a Release store; a reader loads the length
//! (Acquire) and copies the slots below it, which are never written again. A full chunk
//! is followed by a new one, added to the list under a mutex (once every
//! `CHUNK_EVENTS` events); readers take the same mutex to walk the list. So recording
//! costs the owner two plain stores and a timestamp per event, and a snapshot sees every
//! event up to the moment it reads, without stopping the workers. (The single-writer
//! publication is the one a Chase-Lev deque's owner uses for `bottom`.)

use super::TimelineEvent;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};

/// Events per chunk: 4096 × 24 bytes = 96 KiB.
const CHUNK_EVENTS: usize = 4096;

/// `CHUNK_EVENTS` event slots of a log, filled in order by the log's owner.
struct Chunk {
    /// Slots `0..len` are written and final.
    len: AtomicUsize,
    /// The events: `CHUNK_EVENTS` slots, written once each.
    slots: Box<[UnsafeCell<MaybeUninit<TimelineEvent>>]>,
}

// SAFETY: slots below `len` are only read (after the Acquire load of `len` that follows
// their Release publication), slots at and above `len` only written, and only by the
// log's single writer (`EventLog`'s contract).
unsafe impl Sync for Chunk {}

impl Chunk {
    /// An empty chunk.
    fn new() -> Box<Chunk> {
        Box::new(Chunk {
            len: AtomicUsize::new(0),
            slots: (0..CHUNK_EVENTS)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
        })
    }
}

/// One worker's log: the chunks (readers walk them under the mutex) and the owner's
/// current chunk.
///
/// The chunks are held as raw pointers from `Box::into_raw`, not as `Box`es: the owner
/// keeps a pointer to the last chunk, and moving a `Box` (into the vector, or as the
/// vector grows) asserts that it is the only way to its chunk, which would invalidate
/// that pointer (Miri reported it under Stacked and Tree Borrows, found by a breaker).
pub(crate) struct EventLog {
    /// Every chunk, oldest first; each from `Box::into_raw`, freed in `drop`.
    chunks: Mutex<Vec<*mut Chunk>>,
    /// The chunk the owner writes to: the last of `chunks`. Owner only.
    current: Cell<*const Chunk>,
}

// SAFETY: `current` is read and written only by the log's owner (the worker thread that
// records, `push`'s contract); the chunk pointers are behind the mutex, and the chunks
// are shared through their own publication protocol (`Chunk`'s `Sync`).
unsafe impl Sync for EventLog {}
// SAFETY: as `Sync`; the chunks are heap data owned by the log.
unsafe impl Send for EventLog {}

impl Drop for EventLog {
    fn drop(&mut self) {
        let chunks = self
            .chunks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for &chunk in chunks.iter() {
            // SAFETY: each pointer came from `Box::into_raw` and is freed once, here,
            // when no reader or writer is left (`&mut self`).
            drop(unsafe { Box::from_raw(chunk) });
        }
    }
}

impl EventLog {
    /// An empty log, with its first chunk.
    pub(crate) fn new() -> EventLog {
        let first = Box::into_raw(Chunk::new());
        EventLog {
            chunks: Mutex::new(vec![first]),
            current: Cell::new(first),
        }
    }

    /// Appends `event`.
    ///
    /// # Safety
    /// Only one thread, the log's owner, ever calls `push` (the worker the log belongs
    /// to), and never reentrantly.
    #[inline]
    pub(crate) unsafe fn push(&self, event: TimelineEvent) {
        // SAFETY: `current` is the last chunk of `chunks`, allocated by `Box::into_raw`
        // and only freed when the log is dropped.
        let mut chunk = unsafe { &*self.current.get() };
        // Relaxed: only this thread writes `len`.
        let mut len = chunk.len.load(Ordering::Relaxed);
        if len == CHUNK_EVENTS {
            let next = Box::into_raw(Chunk::new());
            self.chunks
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(next);
            self.current.set(next);
            // SAFETY: just allocated and added to `chunks`; freed only with the log.
            chunk = unsafe { &*next };
            len = 0;
        }
        // SAFETY: slot `len` is not yet published, so no reader touches it, and only
        // this thread writes (the contract).
        unsafe { (*chunk.slots[len].get()).write(event) };
        // Release: publishes the slot to readers that Acquire-load `len`.
        chunk.len.store(len + 1, Ordering::Release);
    }

    /// Every event published so far, in order.
    pub(crate) fn snapshot(&self) -> Vec<TimelineEvent> {
        let chunks = self.chunks.lock().unwrap_or_else(PoisonError::into_inner);
        let mut events = Vec::with_capacity(chunks.len() * CHUNK_EVENTS);
        for &chunk in chunks.iter() {
            // SAFETY: every pointer in `chunks` is a live chunk (freed only with the log).
            let chunk = unsafe { &*chunk };
            let len = chunk.len.load(Ordering::Acquire);
            events.extend(chunk.slots[..len].iter().map(|slot| {
                // SAFETY: slots below a published `len` are initialised and final.
                unsafe { (*slot.get()).assume_init() }
            }));
        }
        events
    }
}
