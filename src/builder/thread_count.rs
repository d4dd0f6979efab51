//! How many workers a builder starts: [`ThreadPoolBuilder::num_threads`] (`0`: the
//! environment decides, `pool::config`).

use super::ThreadPoolBuilder;

impl<S> ThreadPoolBuilder<S> {
    /// Sets the number of worker threads (a count).
    ///
    /// `0` (the default) means: [`NUM_THREADS_ENV`](crate::NUM_THREADS_ENV) if set to a
    /// positive number, else (if it is unset)
    /// [`RAYON_NUM_THREADS_ENV`](crate::RAYON_NUM_THREADS_ENV) if set to a positive number,
    /// else `num_cpus::get()` (logical CPUs, so an 8P+4E machine gets 12 workers). Counts
    /// above [`max_num_threads`](crate::max_num_threads) (65,535) are clamped to it, as in
    /// rayon-core.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    /// ```
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.config.num_threads = num_threads;
        self
    }
}
