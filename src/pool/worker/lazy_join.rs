//! The worker's side of the lazy `join` (`docs/join.md`): the rest of the per-`join`
//! poll, promotion of its own halves, and rescue of another worker's halves. (The `join`
//! fast path reaches the private stack through `current.rs`, [`PrivateStackRef`].)
//!
//! [`PrivateStackRef`]: super::PrivateStackRef
//!
//! Nothing here runs a job: a `join` whose second half nobody took runs `a`, then `b`,
//! and nothing in between, as on rayon-core (`docs/guarantees.md`, "Where a worker runs
//! other jobs").

use super::isolate::{place_half, stub};
use super::WorkerThread;
use crate::job::JobRef;
use crate::pool::private_stack::Regions;
use crate::pool::region::Region;
use crate::sync::unchecked::Arc;
use crate::timeline_hooks::JobSource;

impl WorkerThread {
    /// Whether nothing this worker offered still waits for a thief: its deque is empty
    /// (the owner's view: two loads, inlined into the `join` frame); else, inside a
    /// region, whether the queue of the region its last half went to is empty (its stubs
    /// on the deque may be spent: a waiter of the region took their jobs).
    #[inline(always)]
    pub(crate) fn nothing_offered(&self) -> bool {
        self.deque.is_empty() || self.nothing_offered_in_region()
    }

    /// The rest of [`nothing_offered`](Self::nothing_offered), out of line: `false`
    /// outside every region. In a pool that isolates every job the last half offered went
    /// to a region of its own ([`place_half`]).
    #[cold]
    #[inline(never)]
    fn nothing_offered_in_region(&self) -> bool {
        if !self.isolate_waits {
            return self.region().is_some_and(|region| region.has_no_jobs());
        }
        self.private_stack
            .with_regions(|regions| match (regions.split.last(), &regions.current) {
                (Some(split), _) => split.half.has_no_jobs(),
                (None, Some(region)) => region.has_no_jobs(),
                (None, None) => false,
            })
    }

    /// [`promote_oldest`](Self::promote_oldest) out of line, for the `join` frame (a
    /// full private stack, or the poll's promotion).
    #[cold]
    #[inline(never)]
    pub(crate) fn promote_oldest_cold(&self) -> bool {
        self.promote_oldest()
    }

    /// Moves the oldest private half to the deque, where thieves can take it; inside an
    /// isolation region, to the queue of its region ([`place_half`]) with a stub on the
    /// deque (`isolate.rs`). Returns whether there was one.
    fn promote_oldest(&self) -> bool {
        let sleep = self.sleep();
        let placed = self.private_stack.promote_oldest_to(|job, regions| {
            match place_half(sleep, self.isolate_waits, &job, regions) {
                None => {
                    self.deque.push(job);
                    None
                }
                Some(region) => Some((job, region)),
            }
        });
        let promoted = match placed {
            None => false,
            Some(None) => true,
            Some(Some((job, region))) => {
                // Handed out after the stack's lock is released: the push wakes the
                // region's parked waiters, whose last look may take that lock while
                // holding their parking spot's (`Sleep::park_isolated`). Meanwhile the
                // half is on no queue, and no rescuer of this stack may order itself
                // against the deque: inside a region a rescue does not (`rescue`).
                region.push(job);
                self.deque.push(stub(&region));
                true
            }
        };
        if promoted {
            // A pool that shares `join` halves pays the light barrier twice per `join`:
            // make sure the membarrier registration that turns it into a compiler fence
            // has started, even if no worker ever parks (one relaxed load once started).
            crate::sync::barrier::prepare();
            self.counters.promotion();
            self.timeline.promotion();
            // As for any push: tell the sleep module (after the push, docs/sleep.md).
            self.registry.sleep.new_jobs(1, true);
        }
        promoted
    }

    /// Moves every private half to the deque, oldest first: before this worker waits,
    /// searches or parks, so that no half stays hidden from the other workers.
    #[inline]
    pub(super) fn promote_all(&self) {
        if self.private_stack.has_private_halves() {
            while self.promote_oldest() {}
        }
    }

    /// Takes the oldest private half of another worker whose deque is empty: the first
    /// half it runs has not called into the pool for a while (a long leaf, or one that
    /// blocks until the second half runs), so it cannot promote (`docs/join.md`,
    /// "Rescue"). Scans from a random victim.
    ///
    /// A victim inside an isolation region may have stubs of its region on its deque that
    /// a waiter emptied, and its `join`s there take a half back from the region's queue,
    /// not from the deque: its deque need not be empty. Its half is handed out on its
    /// region's queue, and the stub that runs it in the region is returned instead.
    pub(super) fn rescue(&self) -> Option<JobRef> {
        self.victims().find_map(|victim| {
            let stealer = self.registry.stealer(victim);
            let (job, region) = self.registry.private_stack_of(victim).rescue_from(
                |regions| regions.current.is_some() || stealer.is_empty(),
                |job, regions| place_half(self.sleep(), self.isolate_waits, job, regions),
            )?;
            self.note_source(JobSource::Rescue { victim });
            Some(match region {
                None => job,
                Some(region) => {
                    region.push(job);
                    stub(&region)
                }
            })
        })
    }

    /// For a waiter of `region`: takes the oldest private half of another worker whose
    /// current region is `region` or nested in it, and runs it in its region. Returns
    /// whether it ran one.
    pub(super) fn rescue_in_region(&self, region: &Arc<Region>) -> bool {
        let found = self.victims().find_map(|victim| {
            let (job, of) = self.registry.private_stack_of(victim).rescue_from(
                |regions| is_within(regions, region),
                |job, regions| place_half(self.sleep(), self.isolate_waits, job, regions),
            )?;
            self.note_source(JobSource::Rescue { victim });
            Some((job, of.expect("a half rescued for a region has its region")))
        });
        match found {
            Some((job, of)) => {
                self.counters.rescue();
                self.run_in_region(&of, job);
                true
            }
            None => false,
        }
    }

    /// Whether another worker whose current region is `region` or nested in it holds a
    /// private half (racy, as `Registry::has_queued_jobs`): the isolated waiter's last
    /// look before it parks.
    pub(super) fn region_has_private_halves(&self, region: &Arc<Region>) -> bool {
        (0..self.registry.num_threads())
            .filter(|&i| i != self.index())
            .any(|i| {
                self.registry
                    .private_stack_of(i)
                    .has_private_in(|regions| is_within(regions, region))
            })
    }
}

/// Whether the current region of a private stack's owner (`regions`) is `region` or nested
/// in it: the private halves are then the region's.
fn is_within(regions: &Regions, region: &Region) -> bool {
    regions
        .current
        .as_ref()
        .is_some_and(|of| of.is_within(region))
}
