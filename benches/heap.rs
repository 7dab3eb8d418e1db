//! The heap rows of `cargo xtask bench`: what the index and its search index hold, counted
//! by a counting global allocator (`stats_alloc`), not estimated. Apart from
//! `benches/gates.rs`, whose timings run on the system allocator: counting every
//! allocation in shared counters slowed a 10,000-skill index build by about 6% (the
//! threads contend on the counters' cache line), which no host pays (decision 0052).
//!
//! Run through `cargo xtask bench`; by hand: `cargo bench --bench heap -- --corpus N=DIR ...`.

// A benchmark binary: printing its report is its job.
#![allow(clippy::print_stdout)]

use std::alloc::System;
use std::path::Path;

use serde_json::{json, Value};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/row.rs"]
#[allow(dead_code)] // The order of alternated runs is the timing bench's.
mod row;
use corpus::{args, build, depth_of};
use row::metric;

fn main() {
    let args = args();
    let mut metrics = Vec::new();
    // The heap rows are of no `--only` group: asked for one, this binary has none.
    let corpora = if args.only.is_some() {
        &[][..]
    } else {
        &args.corpora[..]
    };
    for (label, root) in corpora {
        let depth = depth_of(root);
        if label == "1000" || label == "10000" || label == "100000" {
            heap(label, root, depth, &mut metrics);
        }
        if label == "1000" || label == "10000" {
            search_heap(label, root, depth, &mut metrics);
        }
    }
    println!("{}", json!({ "quick": args.quick, "metrics": metrics }));
}

/// Heap held by the index over `root`: per skill beyond description text, in all, and its
/// live allocations per skill.
fn heap(label: &str, root: &Path, depth: usize, metrics: &mut Vec<Value>) {
    drop(build(root, depth));
    let region = Region::new(GLOBAL);
    let index = build(root, depth);
    let stats = region.change();
    let held = stats.bytes_allocated as f64 - stats.bytes_deallocated as f64;
    let snap = index.snapshot();
    let descriptions: usize = snap.records().iter().map(|r| r.description.len()).sum();
    let per_skill = (held - descriptions as f64) / snap.records().len().max(1) as f64;
    metrics.push(metric(
        &format!("heap per skill beyond description, {label} skills"),
        "bytes",
        per_skill,
        None,
        &format!("{held:.0} bytes held by the index, {descriptions} of them description text"),
    ));
    // All of it: what `skillctl list`'s peak RSS is held against.
    metrics.push(metric(
        &format!("index heap, {label} skills"),
        "bytes",
        held,
        None,
        "every byte the index holds, descriptions included",
    ));
    // Each live allocation costs the system allocator a header and padding (about
    // 16 bytes with glibc) that the bytes above do not count but RSS does.
    let live = stats.allocations as f64 - stats.deallocations as f64;
    metrics.push(metric(
        &format!("live allocations per skill, {label} skills"),
        "allocations",
        live / snap.records().len().max(1) as f64,
        None,
        "what the index holds, in allocations",
    ));
}

/// Heap held by the search index of the index over `root`, per skill.
fn search_heap(label: &str, root: &Path, depth: usize, metrics: &mut Vec<Value>) {
    let index = build(root, depth);
    let snap = index.snapshot();
    let region = Region::new(GLOBAL);
    let search = snap.search_index();
    let stats = region.change();
    let held = stats.bytes_allocated as f64 - stats.bytes_deallocated as f64;
    metrics.push(metric(
        &format!("search index heap per skill, {label} skills"),
        "bytes",
        held / search.len().max(1) as f64,
        None,
        "terms and postings; outside the index's own per-skill gate",
    ));
}
