//! The environment variables a pool reads when it is built: the thread count when the
//! builder leaves it at `0` ([`NUM_THREADS_ENV`], [`RAYON_NUM_THREADS_ENV`]) and isolated
//! waits when the builder did not choose ([`ISOLATE_WAITS_ENV`]). Only their names and
//! meaning live here; `config.rs` reads them.

/// The environment variable that sets the default number of worker threads.
///
/// Read when a builder has `num_threads(0)` (the default). Unset, empty or `0` means one
/// worker per logical CPU (`num_cpus::get()`); surrounding whitespace is ignored; any other
/// value that is not a non-negative integer makes
/// [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) fail (and the lazily built
/// global pool panic with that error). It plays the role of rayon-core's
/// `RAYON_NUM_THREADS`; when it is *unset*, [`RAYON_NUM_THREADS_ENV`] is read instead, so a
/// deployment configured for rayon keeps its thread count after switching.
///
/// ```
/// use stealpool::{ThreadPoolBuilder, NUM_THREADS_ENV};
/// std::env::set_var(NUM_THREADS_ENV, "three");
/// assert!(ThreadPoolBuilder::new().build().is_err()); // not a thread count
/// std::env::set_var(NUM_THREADS_ENV, "3");
/// assert_eq!(ThreadPoolBuilder::new().build().unwrap().current_num_threads(), 3);
/// // An explicit `num_threads` wins over the variable.
/// assert_eq!(ThreadPoolBuilder::new().num_threads(2).build().unwrap().current_num_threads(), 2);
/// ```
pub const NUM_THREADS_ENV: &str = "STEALPOOL_NUM_THREADS";

/// rayon-core's thread-count variable, `RAYON_NUM_THREADS`: read only when
/// [`NUM_THREADS_ENV`] is unset, with rayon-core 1.13's rules: a positive integer, as
/// written (no whitespace), sets the count; `0` means one worker per logical CPU; anything
/// else is ignored, and then rayon-core's deprecated `RAYON_RS_NUM_CPUS` is read (a
/// positive integer sets the count).
///
/// ```
/// use stealpool::{ThreadPoolBuilder, NUM_THREADS_ENV, RAYON_NUM_THREADS_ENV};
/// std::env::remove_var(NUM_THREADS_ENV); // the rayon variable counts only when this is unset
/// std::env::set_var(RAYON_NUM_THREADS_ENV, "2");
/// assert_eq!(ThreadPoolBuilder::new().build().unwrap().current_num_threads(), 2);
/// ```
pub const RAYON_NUM_THREADS_ENV: &str = "RAYON_NUM_THREADS";

/// rayon-core's deprecated thread-count variable, read after [`RAYON_NUM_THREADS_ENV`]
/// as rayon-core reads it.
pub(crate) const RAYON_RS_NUM_CPUS_ENV: &str = "RAYON_RS_NUM_CPUS";

/// The environment variable that isolates the waits of every job of every pool whose
/// builder did not call [`isolate_waits`](crate::ThreadPoolBuilder::isolate_waits), the
/// global pool included: `1` runs each of their jobs (and each half of every `join`) as if
/// inside its own [`isolate`](fn@crate::isolate), as `isolate_waits(true)` does, so that a
/// program using rayon through `compat/rayon-core` gets it without a code change
/// (`docs/isolation.md`).
///
/// Unset, empty or `0`: off. `1`: on. Surrounding whitespace is ignored; any other value
/// makes [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) fail (and the
/// lazily built global pool panic with that error), so a typo does not silently leave the
/// waits unisolated. Read when a pool is built.
///
/// ```
/// use stealpool::{ThreadPoolBuilder, ISOLATE_WAITS_ENV};
/// std::env::set_var(ISOLATE_WAITS_ENV, "yes");
/// assert!(ThreadPoolBuilder::new().num_threads(1).build().is_err()); // not 0 or 1
/// std::env::set_var(ISOLATE_WAITS_ENV, "1");
/// let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.install(|| stealpool::join(|| 1, || 2)), (1, 2));
/// // The builder's choice wins over the variable.
/// std::env::set_var(ISOLATE_WAITS_ENV, "oops");
/// assert!(ThreadPoolBuilder::new().isolate_waits(false).build().is_ok());
/// ```
pub const ISOLATE_WAITS_ENV: &str = "STEALPOOL_ISOLATE_WAITS";
