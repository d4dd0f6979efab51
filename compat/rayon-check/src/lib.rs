//! Nothing here: the checks are the integration tests in `tests/`, which use the `rayon`
//! crate from crates.io, unchanged, with rayon-core patched to `compat/rayon-core`
//! (stealpool).
