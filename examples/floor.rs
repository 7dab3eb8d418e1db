//! The whole-process floor of `cargo xtask bench`: a process that lists a root's skill
//! folders and reads what the index reads of each `SKILL.md`, in parallel, and nothing
//! else (`benches/support/plain_floor.rs`). The bench runs it beside `skillctl list` on the
//! same files, alternated.
//!
//! `cargo run --release --example floor -- DIR [DEPTH] [THREADS] [checked|calls|parse]`
//!
//! With `checked`, it also makes the two calls the index makes around each read so that it
//! never opens a device (a `stat` before the open, an `fstat` after it): the checked floor
//! process, reported beside the floor process. With `calls`, it reads with the index's own
//! calls (relative to a handle on the root); with `parse`, it also parses each frontmatter
//! with this project's parser, and does nothing else (`plain_floor::least`): about the least a
//! `list` keeping promise 20 with this parser does, before it writes anything.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "../benches/support/plain_floor.rs"]
mod plain_floor;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: floor DIR [DEPTH] [THREADS] [checked|calls|parse]");
        std::process::exit(2);
    };
    let depth = args.next().and_then(|d| d.parse().ok()).unwrap_or(1);
    // THREADS is a number, or absent (`0`: rayon's default).
    if let Some(threads) = args.next().and_then(|t| t.parse().ok()).filter(|t| *t > 0) {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
    let root = std::path::Path::new(&root);
    let bytes = match args.next().as_deref() {
        Some("checked") => plain_floor::floor_with(root, depth, plain_floor::Checks::Stat),
        Some("calls") => plain_floor::least(root, depth, plain_floor::Work::Read),
        Some("parse") => plain_floor::least(root, depth, plain_floor::Work::Parse),
        _ => plain_floor::floor(root, depth),
    };
    println!("{bytes}");
}
