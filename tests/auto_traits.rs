//! Compile-time checks of the auto traits (and a few derived traits) of the
//! public types. Everything here is checked by the compiler; the `#[test]`
//! functions only make the checks show up in the test list.
//!
//! Positive checks assert only what rayon-core 1.13 guarantees for its types
//! (plus stealpool's own extras, marked as such). `ThreadPoolBuilder` is not
//! checked: in rayon-core it is neither `Send` nor `Sync` (it boxes the
//! `thread_name` closure as `dyn FnMut(usize) -> String` without `Send`,
//! rayon-core lib.rs 184), and stealpool mirrors that.
//!
//! Negative checks (`FnContext` and `BroadcastContext` are neither `Send` nor
//! `Sync`, as rayon-core makes them on purpose with a `PhantomData` marker,
//! lib.rs 844 and broadcast/mod.rs 49) use the ambiguity trick of
//! `static_assertions::assert_not_impl_any!`, written out here: if the type
//! implemented the trait, the method call below would be ambiguous and the
//! file would not compile.

use std::cell::Cell;
use std::fmt::Debug;
use std::marker::PhantomData;

use stealpool::{
    BroadcastContext, FnContext, JoinHandle, PoolMetrics, Scope, ScopeFifo, ThreadBuilder,
    ThreadPool, ThreadPoolBuildError, WorkerMetrics, Yield,
};

fn assert_send<T: ?Sized + Send>() {}
fn assert_sync<T: ?Sized + Sync>() {}
fn assert_copy<T: Copy>() {}
fn assert_clone<T: Clone>() {}
fn assert_debug<T: ?Sized + Debug>() {}
fn assert_static<T: ?Sized + 'static>() {}
fn assert_error<T: std::error::Error>() {}

/// Fails to compile if `$ty` implements `$trait`.
macro_rules! assert_not_impl {
    ($ty:ty: $trait:path) => {{
        trait AmbiguousIfImpl<A> {
            fn some_item() {}
        }
        impl<T: ?Sized> AmbiguousIfImpl<()> for T {}
        #[allow(dead_code)]
        struct Invalid;
        impl<T: ?Sized + $trait> AmbiguousIfImpl<Invalid> for T {}
        let _ = <$ty as AmbiguousIfImpl<_>>::some_item;
    }};
}

#[test]
fn thread_pool_is_send_and_sync() {
    assert_send::<ThreadPool>();
    assert_sync::<ThreadPool>();
    assert_debug::<ThreadPool>();
}

#[test]
fn thread_pool_build_error_is_send_sync_static_error() {
    assert_send::<ThreadPoolBuildError>();
    assert_sync::<ThreadPoolBuildError>();
    assert_static::<ThreadPoolBuildError>();
    assert_error::<ThreadPoolBuildError>();
    // So it converts into the usual boxed error.
    let _: fn(ThreadPoolBuildError) -> Box<dyn std::error::Error + Send + Sync> = |e| Box::new(e);
}

#[test]
fn scopes_are_send_and_sync() {
    // For every lifetime, not just 'static.
    fn check<'a>(_: PhantomData<&'a ()>) {
        assert_send::<Scope<'a>>();
        assert_sync::<Scope<'a>>();
        assert_send::<ScopeFifo<'a>>();
        assert_sync::<ScopeFifo<'a>>();
        assert_debug::<Scope<'a>>();
        assert_debug::<ScopeFifo<'a>>();
    }
    check(PhantomData);
}

#[test]
fn thread_builder_is_send() {
    // It is moved into the thread that calls `run` (rayon-core's
    // `spawn_handler` examples do exactly that).
    assert_send::<ThreadBuilder>();
    assert_debug::<ThreadBuilder>();
}

#[test]
fn yield_is_send_sync_copy() {
    assert_send::<Yield>();
    assert_sync::<Yield>();
    assert_copy::<Yield>();
    assert_clone::<Yield>();
    assert_debug::<Yield>();
}

#[test]
fn contexts_are_not_send_or_sync() {
    assert_not_impl!(FnContext: Send);
    assert_not_impl!(FnContext: Sync);
    assert_not_impl!(BroadcastContext<'static>: Send);
    assert_not_impl!(BroadcastContext<'static>: Sync);
    assert_debug::<FnContext>();
    assert_debug::<BroadcastContext<'static>>();
}

#[test]
fn the_negative_check_detects_an_impl() {
    // Sanity check of `assert_not_impl!` itself on types whose answer is
    // known. The other direction (`assert_not_impl!(u8: Send)` must not
    // compile: error E0283, "type annotations needed") cannot be written in a
    // test that compiles; it was checked by hand in a scratch crate.
    assert_not_impl!(Cell<u8>: Sync);
    assert_not_impl!(std::rc::Rc<u8>: Send);
}

// --- stealpool extras (not in rayon-core) ----------------------------------

#[test]
fn join_handle_is_send_and_sync_for_any_send_value() {
    fn check<T: Send>() {
        assert_send::<JoinHandle<T>>();
        assert_sync::<JoinHandle<T>>();
        assert_debug::<JoinHandle<T>>();
    }
    check::<u32>();
    // Send but not Sync values still give a Sync handle.
    check::<Cell<u32>>();
}

#[test]
fn metrics_are_send_sync_clone() {
    assert_send::<PoolMetrics>();
    assert_sync::<PoolMetrics>();
    assert_clone::<PoolMetrics>();
    assert_debug::<PoolMetrics>();
    assert_send::<WorkerMetrics>();
    assert_sync::<WorkerMetrics>();
    assert_clone::<WorkerMetrics>();
}
