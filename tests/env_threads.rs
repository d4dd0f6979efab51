//! `STEALPOOL_NUM_THREADS` overrides the default thread count. Environment
//! variables are process-wide, so this binary has a single test and sets the
//! variable itself (no pool exists before it does).

mod common;

use std::env;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

const VAR: &str = "STEALPOOL_NUM_THREADS";

#[test]
fn stealpool_num_threads_sets_the_default() {
    watchdog(60, || {
        env::set_var(VAR, "3");
        let pool = ThreadPoolBuilder::new().build().expect("build with VAR=3");
        assert_eq!(pool.current_num_threads(), 3);
        assert_eq!(pool.install(stealpool::current_num_threads), 3);
        let pool = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
        assert_eq!(pool.current_num_threads(), 3);
        // An explicit count wins over the variable.
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.current_num_threads(), 2);

        // 0 or empty means "no override": the CPU count.
        for value in ["0", ""] {
            env::set_var(VAR, value);
            let pool = ThreadPoolBuilder::new()
                .build()
                .unwrap_or_else(|e| panic!("build with {VAR}={value:?} failed: {e}"));
            assert_eq!(
                pool.current_num_threads(),
                num_cpus::get(),
                "{VAR}={value:?}"
            );
        }

        // Not a number: build fails with an error naming the variable.
        env::set_var(VAR, "abc");
        match ThreadPoolBuilder::new().build() {
            Ok(pool) => panic!(
                "build succeeded with {VAR}=abc ({} threads)",
                pool.current_num_threads()
            ),
            Err(err) => assert!(
                err.to_string().contains(VAR),
                "error does not name {VAR}: {err}"
            ),
        }

        env::remove_var(VAR);
        let pool = ThreadPoolBuilder::new()
            .build()
            .expect("build with VAR unset");
        assert_eq!(pool.current_num_threads(), num_cpus::get());
    });
}
