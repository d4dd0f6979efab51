//! Unit tests of the sleep state that need no worker threads.

use super::Sleep;

/// Every idle worker asks for a spinner place at once: half of them get one, but at
/// least two (both workers of a pool of two), and never more than the pool has.
#[test]
fn spinner_places_are_half_the_workers_but_at_least_two() {
    for (workers, places) in [(1, 1), (2, 2), (3, 2), (4, 2), (5, 2), (16, 8)] {
        let sleep = Sleep::new(workers);
        let spinning = (0..workers)
            .filter(|&index| sleep.start_spinning(&mut sleep.start_looking(index)))
            .count();
        assert_eq!(spinning, places, "{workers} workers");
    }
}
