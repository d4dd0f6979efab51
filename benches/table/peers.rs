//! The peers' fib (rayon-core's and chili's `join`s differ in shape: chili's closures take
//! its `Scope`), shared by the table (`forkjoin.rs`) and `benches/join_instructions.rs`.
//! stealpool's is in `sp_work.rs`, the sequential one in `workload.rs`.

// ---- fib(n): one join per call, no cutoff ----

pub fn fib_rc(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon_core::join(|| fib_rc(n - 1), || fib_rc(n - 2));
    a + b
}

pub fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}
