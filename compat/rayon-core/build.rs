// Needed only for `links = "rayon-core"` in Cargo.toml (as in the original rayon-core):
// nothing is linked; the key just makes Cargo reject a second rayon-core in one build.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
