//! `cargo xtask`: the project's own automation (conformance runs, benchmarks, corpus generation).
fn main() {}
