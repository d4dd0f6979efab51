//! A worker's arena for the jobs it spawns into scopes.
//!
//! A million tiny `Scope::spawn`s cost one `malloc` and one `free` each, and the `free`
//! often runs on another worker than the `malloc`: with glibc that was half the cycles of
//! the scope-spawn benchmark on one worker and more on two (`docs/performance.md`). The
//! jobs of a scope cannot outlive it and are small, so a worker carves them out of 64 KiB
//! chunks of its own with a bump pointer instead.
//!
//! A chunk is freed when its last job has run. Its `live` count starts at [`OWNER_REF`]
//! for the owner, which does not count allocations atomically: when the chunk is full
//! the owner *retires* it, subtracting `OWNER_REF - allocated`; every job, once it ran,
//! subtracts one. The subtractions sum to `OWNER_REF`, and whoever brings the count to
//! zero frees the chunk (the pattern of `Arc`'s last reference). A worker that runs jobs
//! subtracts their ones together, per chunk (the worker's deferred work,
//! `pool::worker::deferred`), so the count's cache line does not move between workers
//! for every job.
//!
//! Jobs larger than [`MAX_JOB_BYTES`], over-aligned ones, and jobs spawned from threads
//! that are not workers are boxed as before.
//!
//! The counts are plain `std` atomics: the arena is not part of the loom models (it holds
//! memory, not scheduling state); its argument is the one of `Arc`.

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::ptr::{self, NonNull};
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// Bytes per chunk, header included.
const CHUNK_BYTES: usize = 64 * 1024;
/// Chunk alignment; also the largest job alignment the arena serves.
const CHUNK_ALIGN: usize = 64;
/// Jobs start one cache line into the chunk: the line of `live` is written by the
/// workers that run the jobs, the rest by the one that spawns them.
const HEADER_BYTES: usize = 64;
/// Larger jobs are boxed: a chunk should hold many.
pub(crate) const MAX_JOB_BYTES: usize = 512;
/// The owner's share of a fresh chunk's count: more than any number of jobs it can hold.
const OWNER_REF: usize = usize::MAX / 2;

/// The header of a chunk; the jobs follow it.
pub(crate) struct Chunk {
    /// `OWNER_REF` until retired, minus one per job that ran (`docs` above).
    live: AtomicUsize,
}

impl Chunk {
    /// The layout of a whole chunk: `CHUNK_BYTES` aligned to `CHUNK_ALIGN`.
    fn layout() -> Layout {
        // Both constants are powers of two and the size a multiple of the alignment.
        Layout::from_size_align(CHUNK_BYTES, CHUNK_ALIGN).expect("chunk layout")
    }

    /// A fresh chunk with its header written (`live` at `OWNER_REF`); aborts through
    /// `handle_alloc_error` if the allocation fails.
    fn allocate() -> NonNull<Chunk> {
        let layout = Self::layout();
        // SAFETY: the layout has a non-zero size.
        let memory = unsafe { alloc::alloc(layout) };
        let Some(chunk) = NonNull::new(memory.cast::<Chunk>()) else {
            alloc::handle_alloc_error(layout)
        };
        // SAFETY: fresh memory, aligned for `Chunk` (64 bytes) and large enough.
        unsafe {
            chunk.as_ptr().write(Chunk {
                live: AtomicUsize::new(OWNER_REF),
            })
        };
        chunk
    }

    /// Gives up `n` of the chunk's references (jobs that ran, or the owner's share) and
    /// frees the chunk if they were the last.
    ///
    /// # Safety
    /// `chunk` came from [`JobArena::allocate`] and the caller holds `n` references.
    pub(crate) unsafe fn release(chunk: *const Chunk, n: usize) {
        // Release: everything this thread did with the chunk's jobs happens before the
        // free, which the last releaser's Acquire fence orders after every release.
        // SAFETY: the caller's references keep the chunk alive until this subtraction.
        if unsafe { (*chunk).live.fetch_sub(n, Ordering::Release) } != n {
            return;
        }
        fence(Ordering::Acquire);
        // SAFETY: the count is zero: no job and no owner refers to the chunk any more.
        unsafe { alloc::dealloc(chunk.cast_mut().cast::<u8>(), Self::layout()) };
    }
}

/// A worker's current chunk. Only the owning worker allocates from it.
pub(crate) struct JobArena {
    /// The chunk jobs are carved from; null before the first job and after `retire`.
    chunk: Cell<*const Chunk>,
    /// Offset of the first free byte in `chunk`.
    next: Cell<usize>,
    /// Jobs allocated from `chunk`.
    allocated: Cell<usize>,
}

impl JobArena {
    /// An arena without a chunk: the first `allocate` allocates one.
    pub(crate) fn new() -> Self {
        JobArena {
            chunk: Cell::new(ptr::null()),
            next: Cell::new(0),
            allocated: Cell::new(0),
        }
    }

    /// Room for one job of `layout`, and the chunk it is in (one reference of which the
    /// job holds until it ran), or `None` if the job is too large or too aligned for the
    /// arena (the caller boxes it).
    pub(crate) fn allocate(&self, layout: Layout) -> Option<(NonNull<u8>, *const Chunk)> {
        if layout.size() > MAX_JOB_BYTES || layout.align() > CHUNK_ALIGN {
            return None;
        }
        let mut offset = self.next.get().next_multiple_of(layout.align());
        if self.chunk.get().is_null() || offset + layout.size() > CHUNK_BYTES {
            self.retire();
            self.chunk.set(Chunk::allocate().as_ptr());
            offset = HEADER_BYTES.next_multiple_of(layout.align());
        }
        let chunk = self.chunk.get();
        self.next.set(offset + layout.size());
        self.allocated.set(self.allocated.get() + 1);
        // SAFETY: `offset + size <= CHUNK_BYTES`, so the place is inside the chunk, past
        // the header, aligned, and handed out once.
        let place = unsafe { NonNull::new_unchecked(chunk.cast_mut().cast::<u8>().add(offset)) };
        Some((place, chunk))
    }

    /// Gives up the current chunk, if any: it is freed once all its jobs ran.
    pub(crate) fn retire(&self) {
        let chunk = self.chunk.replace(ptr::null());
        if !chunk.is_null() {
            let allocated = self.allocated.replace(0);
            self.next.set(0);
            // SAFETY: the owner's share is `OWNER_REF` less the references it handed to
            // the `allocated` jobs, and is given up once, here.
            unsafe { Chunk::release(chunk, OWNER_REF - allocated) };
        }
    }
}

impl Drop for JobArena {
    fn drop(&mut self) {
        self.retire();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_is_freed_by_the_last_of_owner_and_jobs() {
        let arena = JobArena::new();
        let layout = Layout::new::<[u64; 3]>();
        let (_, first) = arena.allocate(layout).unwrap();
        let (_, same) = arena.allocate(layout).unwrap();
        assert!(ptr::eq(first, same));
        // SAFETY: each allocated job's reference, given back once.
        unsafe { Chunk::release(first, 1) };
        arena.retire();
        // The second job still holds the chunk: its count is one.
        // SAFETY: the chunk is alive (one reference left).
        assert_eq!(unsafe { (*first).live.load(Ordering::Relaxed) }, 1);
        // SAFETY: the second job's reference: the last one, which frees the chunk.
        unsafe { Chunk::release(same, 1) };
    }

    #[test]
    fn full_chunks_are_replaced_and_big_jobs_refused() {
        let arena = JobArena::new();
        let layout = Layout::new::<[u8; MAX_JOB_BYTES]>();
        let mut switches = 0;
        let mut last = ptr::null();
        // The jobs' references are given back at the end: a chunk freed earlier could be
        // handed out again at the same address, and its replacement not be seen.
        let mut held = Vec::new();
        for _ in 0..(3 * CHUNK_BYTES / MAX_JOB_BYTES) {
            let (place, chunk) = arena.allocate(layout).unwrap();
            let start = chunk as usize;
            let at = place.as_ptr() as usize;
            assert!(at >= start + HEADER_BYTES && at + MAX_JOB_BYTES <= start + CHUNK_BYTES);
            if !ptr::eq(chunk, last) {
                switches += 1;
                last = chunk;
            }
            held.push(chunk);
        }
        assert!(switches >= 3);
        for chunk in held {
            // SAFETY: each job's reference, given back once.
            unsafe { Chunk::release(chunk, 1) };
        }
        assert!(arena
            .allocate(Layout::new::<[u8; MAX_JOB_BYTES + 1]>())
            .is_none());
        assert!(arena
            .allocate(Layout::from_size_align(64, 128).unwrap())
            .is_none());
    }
}
