//! Deliberate panics: the marker and payload types that tell them from real failures, a
//! panic hook that keeps them quiet and counts them, and reading a panic's payload.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, Once, OnceLock};

/// Marker that a panic is deliberate. Panics whose message starts with it are
/// not printed by the hook installed by [`quiet_expected_panics`].
pub const EXPECTED: &str = "EXPECTED-PANIC";

/// Payload type for deliberate `std::panic::panic_any` panics with a
/// non-string payload; also silenced by the hook.
#[derive(Debug, PartialEq, Eq)]
pub struct ExpectedPayload(pub u32);

/// A panic payload whose destructor panics (with an [`EXPECTED`] message); the quiet
/// hook silences both the panic that carries it and the one its drop raises.
pub struct PanickyDrop(pub &'static str);

impl Drop for PanickyDrop {
    fn drop(&mut self) {
        panic!("{EXPECTED} PanickyDrop::drop({})", self.0);
    }
}

/// Runs `f`, which must panic, and returns its payload.
pub fn expect_panic<R>(f: impl FnOnce() -> R) -> Box<dyn Any + Send> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload,
    }
}

/// Text of a panic payload if it is a string.
pub fn payload_str(payload: &(dyn Any + Send)) -> Option<&str> {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        Some(s)
    } else {
        payload.downcast_ref::<String>().map(String::as_str)
    }
}

/// How often the quiet hook saw each deliberate panic, by message.
fn hook_counts() -> &'static Mutex<HashMap<String, usize>> {
    static COUNTS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    COUNTS.get_or_init(Default::default)
}

/// Installs (once per test binary) a panic hook that stays silent for
/// deliberate panics (message starting with [`EXPECTED`], or an
/// [`ExpectedPayload`] payload) and counts how often the hook saw each such
/// message; every other panic (e.g. a failing assertion) goes to the default
/// hook and is printed as usual.
///
/// The hook is process-global, so it affects every test of the binary that
/// calls this, including tests running in parallel; that is intended.
pub fn quiet_expected_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default_hook = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            if let Some(msg) = payload_str(payload).filter(|m| m.starts_with(EXPECTED)) {
                *hook_counts()
                    .lock()
                    .unwrap()
                    .entry(msg.to_owned())
                    .or_insert(0) += 1;
                return;
            }
            if payload.is::<PanickyDrop>() {
                return;
            }
            if let Some(p) = payload.downcast_ref::<ExpectedPayload>() {
                *hook_counts()
                    .lock()
                    .unwrap()
                    .entry(format!("{p:?}"))
                    .or_insert(0) += 1;
                return;
            }
            default_hook(info);
        }));
    });
}

/// How many times the quiet hook saw a deliberate panic with exactly this
/// message (for an [`ExpectedPayload`], its `Debug` text).
pub fn expected_panic_count(message: &str) -> usize {
    hook_counts()
        .lock()
        .unwrap()
        .get(message)
        .copied()
        .unwrap_or(0)
}
