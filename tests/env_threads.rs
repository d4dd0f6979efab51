//! `STEALPOOL_NUM_THREADS` overrides the default thread count. Environment
//! variables are process-wide, so this binary has a single test and sets the
//! variable itself (no pool exists before it does).

mod common;

use std::env;

use common::watchdog;
use stealpool::ThreadPoolBuilder;

const VAR: &str = "STEALPOOL_NUM_THREADS";
const RAYON: &str = "RAYON_NUM_THREADS";
const RS_NUM_CPUS: &str = "RAYON_RS_NUM_CPUS";

#[test]
fn stealpool_num_threads_sets_the_default() {
    watchdog(60, || {
        env::remove_var(RAYON);
        env::remove_var(RS_NUM_CPUS);
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
        // Parsed as written, as rayon-core parses it: " 3" is not a number there.
        for ignored in ["0", "", "abc", " 3"] {
            env::set_var(RAYON, ignored);
            let pool = ThreadPoolBuilder::new().build().unwrap();
            assert_eq!(
                pool.current_num_threads(),
                num_cpus::get(),
                "{RAYON}={ignored:?}"
            );
        }
        // rayon-core's deprecated RAYON_RS_NUM_CPUS counts when RAYON_NUM_THREADS is unset
        // or not a number, but not when it is 0 (one worker per CPU).
        env::set_var(RS_NUM_CPUS, "4");
        for (rayon, expected) in [(None, 4), (Some("abc"), 4), (Some("0"), num_cpus::get())] {
            match rayon {
                Some(value) => env::set_var(RAYON, value),
                None => env::remove_var(RAYON),
            }
            let pool = ThreadPoolBuilder::new().build().unwrap();
            assert_eq!(pool.current_num_threads(), expected, "{RAYON}={rayon:?}");
        }
        env::remove_var(RS_NUM_CPUS);
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
