//! The whole-process floor of `cargo xtask bench`: a process that lists a root's skill
//! folders and reads what the index reads of each `SKILL.md`, in parallel, and nothing
//! else (`benches/support/plain_floor.rs`). The bench runs it beside `skillctl list` on the
//! same files, alternated.
//!
//! `cargo run --release --example floor -- DIR [DEPTH] [THREADS]`

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "../benches/support/plain_floor.rs"]
mod plain_floor;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: floor DIR [DEPTH] [THREADS]");
        std::process::exit(2);
    };
    let depth = args.next().and_then(|d| d.parse().ok()).unwrap_or(1);
    if let Some(threads) = args.next().and_then(|t| t.parse().ok()) {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
    let bytes = plain_floor::floor(std::path::Path::new(&root), depth);
    println!("{bytes}");
}
