//! `STEALPOOL_NUM_THREADS` overrides the default thread count. Environment
//! variables are process-wide, so this binary has a single test and sets the
//! variable itself (no pool exists before it does).

mod common;

use std::env;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

const VAR: &str = "STEALPOOL_NUM_THREADS";
const RAYON: &str = "RAYON_NUM_THREADS";

#[test]
fn stealpool_num_threads_sets_the_default() {
    watchdog(60, || {
        env::remove_var(RAYON);
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
        env::remove_var(RAYON);
        let pool = ThreadPoolBuilder::new()
            .build()
            .expect("build with VAR unset");
        assert_eq!(pool.current_num_threads(), num_cpus::get());

        // RAYON_NUM_THREADS counts when STEALPOOL_NUM_THREADS is unset, with rayon-core's
        // rules: a positive number sets the count, anything else is ignored.
        env::set_var(RAYON, "5");
        assert_eq!(
            ThreadPoolBuilder::new()
                .build()
                .unwrap()
                .current_num_threads(),
            5
        );
        for ignored in ["0", "", "abc"] {
            env::set_var(RAYON, ignored);
            let pool = ThreadPoolBuilder::new().build().unwrap();
            assert_eq!(
                pool.current_num_threads(),
                num_cpus::get(),
                "{RAYON}={ignored:?}"
            );
        }
        // STEALPOOL_NUM_THREADS, when set, wins.
        env::set_var(RAYON, "5");
        env::set_var(VAR, "3");
        assert_eq!(
            ThreadPoolBuilder::new()
                .build()
                .unwrap()
                .current_num_threads(),
            3
        );
        env::remove_var(VAR);
        env::remove_var(RAYON);
    });
}
