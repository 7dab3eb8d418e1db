//! The performance gates: one run measures every metric of `cargo xtask bench`, each beside
//! the floor measured in the same run where one applies, and prints one JSON document.
//!
//! Run through `cargo xtask bench [--quick]`, which generates the corpora, formats the table
//! and enforces the gates. By hand: `cargo bench --bench gates -- --corpus N=DIR ...`.
//! Heap is counted apart, by `benches/heap.rs`: this binary keeps the system allocator, so
//! what it times is what a host's process does (decision 0052).

// A benchmark binary: printing its report is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{json, Value};
use skills_executor::{Executor, JsonlFileSink, LoadMode, OtlpExporter, SessionContext};
use skills_index::SkillIndex;
use skills_model::{Layer, SkillRecord};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::{args, build, depth_of};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[path = "support/plain_floor.rs"]
mod plain_floor;

/// The floor: list the skill folders and read the bytes the index reads of every
/// `SKILL.md`, in parallel, with the standard library and nothing else.
fn floor(root: &Path, depth: usize) -> usize {
    plain_floor::floor(root, depth)
}

#[path = "support/row.rs"]
mod row;
#[path = "support/url_cache.rs"]
mod url_cache;
use row::metric;

fn main() {
    let args = args();
    let runs = if args.quick { 5 } else { 21 };
    let mut metrics = Vec::new();
    // Warm the rayon pool and the page cache before anything is measured.
    rayon::broadcast(|_| ());
    let only = args.only.as_deref();
    match only {
        None => audit_export(runs, &mut metrics),
        Some("url-cache" | "search") => {}
        Some(alone) => {
            match alone {
                "otlp" => audit_export(runs, &mut metrics),
                "requirements" => requirement_checks(runs, &mut metrics),
                other => panic!("--only {other:?}: otlp, requirements, url-cache or search"),
            }
            println!("{}", json!({ "quick": args.quick, "metrics": metrics }));
            return;
        }
    }

    let mut index_1000: Option<(PathBuf, SkillIndex)> = None;
    for (label, root) in &args.corpora {
        if label == "1000" && only.is_none_or(|o| o == "url-cache") {
            url_cache::row(root, runs, &mut metrics);
        }
        if only == Some("search") && (label == "1000" || label == "10000") {
            search_index_build(label, root, depth_of(root), runs, &mut metrics);
        }
        if only.is_some() {
            continue;
        }
        // The real-world corpus nests skills as owner/repo/.../name: search it to the cap.
        let depth = if label == "real" { 6 } else { depth_of(root) };
        // A ratio of medians moves with the noise of a shared machine: nine rounds gave the
        // real-world row 1.17x and 1.25x in two runs of nearly the same code. Its builds
        // are as short as the 1,000-skill ones: it gets twice the rounds; the 10,000-skill
        // rows (and the requirement checks) the full count, as the 1,000-skill ones.
        let n_runs = match label.as_str() {
            "100000" => runs.min(5),
            "real" => runs * 2,
            _ => runs,
        };
        let times = build_times(root, depth, n_runs);
        if label == "1000" || label == "10000" {
            search(label, root, depth, runs, &mut metrics);
        }
        if label == "10000" {
            burst(root, depth, runs.min(5), &mut metrics);
            requirement_checks(runs, &mut metrics);
        }
        build_metrics(label, times, &mut metrics);
        if label == "1000" {
            index_1000 = Some((root.clone(), build(root, depth)));
        }
    }

    if let Some((root, index)) = index_1000 {
        at_1000(&root, index, args.quick, runs, &mut metrics);
    }

    let doc = json!({ "quick": args.quick, "metrics": metrics });
    println!("{doc}");
}

/// What checking skills' needs (`requires:`: programs looked up on `PATH`, variables, the
/// system) adds to an index build of 10,000 skills that each declare them: the build beside
/// the build of the same files with the field renamed (`x-requires:`, kept as data, the same
/// bytes parsed), interleaved. Each skill names `sh` and one of 100 programs no machine has.
fn requirement_checks(runs: usize, metrics: &mut Vec<Value>) {
    const SKILLS: usize = 10_000;
    let with = tempfile::tempdir().expect("tempdir");
    let without = tempfile::tempdir().expect("tempdir");
    for i in 0..SKILLS {
        for (root, key) in [(with.path(), "requires"), (without.path(), "x-requires")] {
            let dir = root.join(format!("skill-{i:05}"));
            std::fs::create_dir_all(&dir).expect("skill folder");
            let text = format!(
                "---\nname: skill-{i:05}\ndescription: Does task {i} with the programs it needs. Use it when a request is about task {i} or its reports.\n{key}:\n  bins: [sh, bench-missing-tool-{}]\n  env: [HOME]\n  os: [linux, macos, windows]\n---\n# Skill {i}\n\nInstructions.\n",
                i % 100
            );
            std::fs::write(dir.join("SKILL.md"), text).expect("SKILL.md");
        }
    }
    drop(build(with.path(), 1));
    drop(build(without.path(), 1));
    let (mut checked, mut unchecked) = (Vec::new(), Vec::new());
    for run in 0..runs {
        for step in row::order(run, 2) {
            let (root, times) = if step == 0 {
                (with.path(), &mut checked)
            } else {
                (without.path(), &mut unchecked)
            };
            let started = Instant::now();
            let index = build(root, 1);
            times.push(ms(started.elapsed()));
            assert_eq!(index.snapshot().len(), SKILLS);
        }
    }
    metrics.push(metric(
        "index build with requirement checks, 10000 skills",
        "ms",
        median(checked),
        Some(median(unchecked)),
        "every skill declares requires: (2 programs, 1 variable, 3 systems; 101 distinct programs); floor = the same files with the field renamed x-requires: (kept as data, not checked)",
    ));
}

/// One corpus's index builds beside the floors, in milliseconds per run, and the skills
/// the build resolved.
struct BuildTimes {
    floors: Vec<f64>,
    checked_floors: Vec<f64>,
    calls_floors: Vec<f64>,
    parsing_floors: Vec<f64>,
    builds: Vec<f64>,
    skills: usize,
}

/// Times the floor, its checked variant, the floor with the index's calls (reading, then
/// parsing) and the index build over `root`, interleaved, `n_runs` rounds (after a warm-up).
fn build_times(root: &Path, depth: usize, n_runs: usize) -> BuildTimes {
    const STEPS: usize = 5;
    let _ = floor(root, depth);
    drop(build(root, depth));
    let mut t = BuildTimes {
        floors: Vec::new(),
        checked_floors: Vec::new(),
        calls_floors: Vec::new(),
        parsing_floors: Vec::new(),
        builds: Vec::new(),
        skills: 0,
    };
    for run in 0..n_runs {
        // Interleaved, so all see the same noise, in an order that changes run by run.
        for step in row::order(run, STEPS) {
            let started = Instant::now();
            match step {
                0 => {
                    std::hint::black_box(floor(root, depth));
                    t.floors.push(ms(started.elapsed()));
                }
                1 => {
                    std::hint::black_box(plain_floor::floor_with(
                        root,
                        depth,
                        plain_floor::Checks::Stat,
                    ));
                    t.checked_floors.push(ms(started.elapsed()));
                }
                2 | 3 => {
                    let (work, times) = if step == 2 {
                        (plain_floor::Work::Read, &mut t.calls_floors)
                    } else {
                        (plain_floor::Work::Parse, &mut t.parsing_floors)
                    };
                    std::hint::black_box(plain_floor::least(root, depth, work));
                    times.push(ms(started.elapsed()));
                    plain_floor::release();
                }
                _ => {
                    let index = build(root, depth);
                    t.builds.push(ms(started.elapsed()));
                    t.skills = index.snapshot().len();
                }
            }
        }
    }
    t
}

/// The index build's metrics for one corpus, against each floor.
fn build_metrics(label: &str, t: BuildTimes, metrics: &mut Vec<Value>) {
    let skills = t.skills;
    let (floor_ms, checked_ms) = (median(t.floors), median(t.checked_floors));
    // What SECURITY.md promise 20's two calls cost a plain program.
    metrics.push(metric(
        &format!("checked floor, {label} skills"),
        "ms",
        checked_ms,
        Some(floor_ms),
        "the floor with a stat before each open and an fstat after it (promise 20: no device is opened), both by whole path; the index stats and opens relative to a handle on the root, and in a nested layout reads each skill where its walk finds it (one stat, no second pass); reported, not gated",
    ));
    metrics.push(metric(
        &format!("index build against the checked floor, {label} skills"),
        "ms",
        median(t.builds.clone()),
        Some(checked_ms),
        "checked floor = the floor with a stat before each open and an fstat after it (the index never opens a device); reported, not gated",
    ));
    let (calls_ms, parsing_ms) = (median(t.calls_floors), median(t.parsing_floors));
    metrics.push(metric(
        &format!("floor with the index's calls, {label} skills"),
        "ms",
        calls_ms,
        Some(floor_ms),
        "the floor's reads made with the index's calls: relative to a handle on the root, a stat before each open, an fstat after it, one read of the size it gives (benches/support/plain_floor.rs, least); reported, not gated",
    ));
    metrics.push(metric(
        &format!("floor with the index's calls and its parser, {label} skills"),
        "ms",
        parsing_ms,
        Some(floor_ms),
        "the row above with each frontmatter parsed by this project's parser as the index parses it, and nothing else (no records, no map, no precedence): an estimate from above of the least an index build keeping promise 20 with this parser does; reported, not gated",
    ));
    metrics.push(metric(
        &format!("index build against the floor with the index's calls and its parser, {label} skills"),
        "ms",
        median(t.builds.clone()),
        Some(parsing_ms),
        "what the index's own work (records, map, precedence, its reading threads) adds to the least an index build with this parser does; reported, not gated",
    ));
    metrics.push(metric(
        &format!("index build, {label} skills"),
        "ms",
        median(t.builds),
        Some(floor_ms),
        &format!(
            "{skills} skills resolved; floor = list the root + read the same 8 KiB prefix of every SKILL.md in parallel, standard library only"
        ),
    ));
}

/// The measures over the 1,000-skill index: reloads, reads, activation, rendering
/// `<available_skills>`, a watched edit.
fn at_1000(root: &Path, index: SkillIndex, quick: bool, runs: usize, metrics: &mut Vec<Value>) {
    let index = Arc::new(index);
    let snap = index.snapshot();
    let names: Vec<String> = snap.skills().map(|r| r.name.to_string()).collect();
    reload(
        "1000",
        root,
        &index,
        &names,
        if quick { 20 } else { 100 },
        metrics,
    );
    reads(&index, &names, metrics);
    activation(&index, &names, metrics);
    let records: Vec<&SkillRecord> = snap.skills().map(|r| &**r).collect();
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(skills_executor::available_skills(&records));
        times.push(ms(t.elapsed()));
    }
    metrics.push(metric(
        "render <available_skills>, 1000 skills",
        "ms",
        median(times),
        None,
        "",
    ));
    watched_edit(root, &names, if quick { 5 } else { 15 }, metrics);
}

/// `skills_search` at this size: the search index's build beside the index build (its
/// floor here: the search index is built on top of it), and the
/// latency of queries made from the skills' own descriptions (median and p99), a session's
/// first searches, and edits published with the search index followed.
fn search(label: &str, root: &Path, depth: usize, runs: usize, metrics: &mut Vec<Value>) {
    search_index_build(label, root, depth, runs, metrics);
    let index = build(root, depth);
    let snap = index.snapshot();
    let search = snap.search_index();
    // Queries: the first three words of every 10th skill's description.
    let queries: Vec<String> = snap
        .skills()
        .step_by(10)
        .map(|r| {
            r.description
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    search_latency(label, &search, &queries, metrics);
    first_searches(label, root, depth, &snap, &queries, metrics);
    // Searched once, the index keeps its search index current: each edit's publication
    // builds the next one by following this one (it reads only the edited record).
    let names: Vec<String> = snap
        .skills()
        .step_by(997)
        .map(|r| r.name.to_string())
        .collect();
    if label != "1000" {
        // The same edits without a search index, beside it (1,000 skills: in `main`).
        let plain = build(root, depth);
        reload(label, root, &plain, &names, runs, metrics);
    }
    let times = edits(root, &index, &names, runs);
    metrics.push(metric(
        &format!("edit published with its search index followed, {label} skills"),
        "ms",
        median(times),
        None,
        "as the edit row, once the index has been searched: the next search index shares the \
         last one's postings and reads the edited record",
    ));
}

/// The search index's build, each set against the index build just before it.
fn search_index_build(
    label: &str,
    root: &Path,
    depth: usize,
    runs: usize,
    metrics: &mut Vec<Value>,
) {
    let mut times = Vec::new();
    let mut builds = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..runs.min(15) {
        // A new index each time (its snapshot has no search index until searched), timed:
        // each search index build is set against the index build just before it, so a
        // pair sees the same moment of a noisy machine.
        let t = Instant::now();
        let index = build(root, depth);
        let built = ms(t.elapsed());
        let snap = index.snapshot();
        let t = Instant::now();
        std::hint::black_box(snap.search_index());
        let searched = ms(t.elapsed());
        times.push(searched);
        builds.push(built);
        ratios.push(searched / built);
    }
    let mut row = metric(
        &format!("search index build, {label} skills"),
        "ms",
        median(times),
        Some(median(builds)),
        "built on a snapshot's first search; floor = the index build just before it; \
         ratio = the median of the pairs' ratios",
    );
    row["ratio"] = json!(median(ratios));
    metrics.push(row);
}

/// The search index's own latency over `queries`, median and p99.
fn search_latency(
    label: &str,
    search: &skills_index::SearchIndex,
    queries: &[String],
    metrics: &mut Vec<Value>,
) {
    // Five rounds over the queries; the p99 is each round's, and the median of those: a
    // burst of noise from another process spoils one round, not the figure.
    let mut latencies = Vec::new();
    let mut p99s = Vec::new();
    for _ in 0..5 {
        let mut round: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                std::hint::black_box(search.search(q, 10, |_| true));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        latencies.extend_from_slice(&round);
        round.sort_by(f64::total_cmp);
        p99s.push(round[(round.len() * 99 / 100).min(round.len() - 1)]);
    }
    metrics.push(metric(
        &format!("search latency p99, {label} skills"),
        "us",
        median(p99s),
        None,
        &format!(
            "median of 5 rounds' p99, {} queries of three description words each",
            queries.len()
        ),
    ));
    metrics.push(metric(
        &format!("search latency, {label} skills"),
        "us",
        median(latencies),
        None,
        &format!("{} queries of three description words", queries.len() * 5),
    ));
}

/// A session's search is for what it may see: worked out once per search index and
/// remembered by the session. The worst case, each query a fresh session's first (as the
/// first after a publication is), through `Session::search`, over the corpus and a personal
/// root holding another tenant's skill of the first skill's name, ranked above it: the
/// session resolves that name to the corpus's skill.
fn first_searches(
    label: &str,
    root: &Path,
    depth: usize,
    snap: &skills_index::Snapshot,
    queries: &[String],
    metrics: &mut Vec<Value>,
) {
    let other = tempfile::tempdir().expect("a temporary folder");
    let first = snap.skills().next().expect("a skill").name.to_string();
    let folder = other.path().join("theirs");
    std::fs::create_dir_all(&folder).expect("a skill folder");
    std::fs::write(
        folder.join("SKILL.md"),
        format!(
            "---\nname: {first}\ndescription: Another tenant's.\nscope:\n  tenants: [acme]\n---\n"
        ),
    )
    .expect("a skill");
    let shadowed = SkillIndex::builder()
        .root(Layer::Project, root)
        .depth(depth)
        .root(Layer::Personal, other.path())
        .build()
        .expect("index builds");
    let executor = Executor::builder(Arc::new(shadowed)).build();
    let mut firsts = Vec::new();
    for _ in 0..5 {
        for q in queries {
            let session = executor.session(
                SessionContext::builder()
                    .id("bench")
                    .tenant("globex")
                    .build(),
            );
            let query = skills_executor::SearchQuery {
                query: q.clone(),
                limit: Some(10),
                layer: None,
                tag: None,
                explain: false,
            };
            let t = Instant::now();
            std::hint::black_box(session.search(&query).expect("a search"));
            firsts.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    metrics.push(metric(
        &format!("search latency, a session's first after a publication, {label} skills"),
        "us",
        median(firsts),
        None,
        &format!(
            "{} queries as above through Session::search, each a fresh session's first (what \
             it sees worked out afresh), with one name also held by another tenant's skill",
            queries.len() * 5
        ),
    ));
}

/// One SKILL.md edited at a time in the index of the corpus `label`: the reload step
/// alone, from the debounced event to the published snapshot.
fn reload(
    label: &str,
    root: &Path,
    index: &SkillIndex,
    names: &[String],
    runs: usize,
    metrics: &mut Vec<Value>,
) {
    let times = edits(root, index, names, runs);
    metrics.push(metric(
        &format!("edit published after its debounced event, {label} skills"),
        "ms",
        median(times),
        None,
        "re-read one skill folder, rebuild and publish the snapshot",
    ));
}

/// `runs` edits of one skill each (the names in turn), each timed from the changed path
/// to the published snapshot; each edit is undone (and published) after it, untimed.
fn edits(root: &Path, index: &SkillIndex, names: &[String], runs: usize) -> Vec<f64> {
    let mut times = Vec::new();
    for i in 0..runs {
        let name = &names[i % names.len()];
        let file = root.join(name).join("SKILL.md");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        std::fs::write(
            &file,
            text.replacen("description: ", "description: Edited. ", 1),
        )
        .expect("write");
        let t = Instant::now();
        index.apply_changed_paths(std::slice::from_ref(&file));
        times.push(ms(t.elapsed()));
        std::fs::write(&file, text).expect("restore");
        index.apply_changed_paths(std::slice::from_ref(&file));
    }
    times
}

/// 1,000 skill files changed at once over a 10,000-skill index with a subscriber attached:
/// from the debounced batch to the published snapshot and its events sent.
fn burst(root: &Path, depth: usize, runs: usize, metrics: &mut Vec<Value>) {
    let index = build(root, depth);
    let events = index.subscribe_batches();
    let files: Vec<PathBuf> = index
        .snapshot()
        .skills()
        .take(1000)
        .map(|r| r.path.clone())
        .collect();
    let originals: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect();
    let mut times = Vec::new();
    for run in 0..runs {
        for (file, text) in files.iter().zip(&originals) {
            let edited = text.replacen("description: ", &format!("description: Run {run}. "), 1);
            std::fs::write(file, edited).expect("write");
        }
        let t = Instant::now();
        index.apply_changed_paths(&files);
        times.push(ms(t.elapsed()));
        let batch = events.try_recv().expect("a batch of events");
        assert!(batch.len() >= files.len(), "{} events", batch.len());
    }
    for (file, text) in files.iter().zip(&originals) {
        std::fs::write(file, text).expect("restore");
    }
    metrics.push(metric(
        "1000 changes published with a subscriber, 10000 skills",
        "ms",
        median(times),
        None,
        "re-read 1,000 folders, rebuild, publish, diff and send the events",
    ));
}

/// Lookups and snapshot loads, with 1 and 2 reader threads.
fn reads(index: &Arc<SkillIndex>, names: &[String], metrics: &mut Vec<Value>) {
    const N: usize = 1_000_000;
    for threads in [1usize, 2] {
        let per_lookup: Vec<f64> = (0..threads)
            .into_par_iter()
            .map(|_| {
                let snap = index.snapshot();
                let t = Instant::now();
                let mut hits = 0usize;
                for i in 0..N {
                    hits += usize::from(snap.get(&names[i % names.len()]).is_some());
                }
                std::hint::black_box(hits);
                t.elapsed().as_nanos() as f64 / N as f64
            })
            .collect();
        metrics.push(metric(
            &format!("lookup by name, {threads} reader thread(s)"),
            "ns",
            median(per_lookup),
            None,
            "",
        ));
        let per_snapshot: Vec<f64> = (0..threads)
            .into_par_iter()
            .map(|_| {
                let t = Instant::now();
                for _ in 0..N {
                    std::hint::black_box(index.snapshot());
                }
                t.elapsed().as_nanos() as f64 / N as f64
            })
            .collect();
        metrics.push(metric(
            &format!("take a snapshot, {threads} reader thread(s)"),
            "ns",
            median(per_snapshot),
            None,
            "",
        ));
    }
}

/// `skills_load` of one skill and the first `check_tool` after it; a decision alone.
fn activation(index: &Arc<SkillIndex>, names: &[String], metrics: &mut Vec<Value>) {
    // A private index handle shares the snapshot; the executor needs an Arc.
    let executor = Executor::builder(Arc::clone(index)).build();
    let mut loads = Vec::new();
    for name in names.iter().take(200) {
        let session = executor.session(SessionContext::builder().build());
        let t = Instant::now();
        if session
            .load(std::slice::from_ref(name), LoadMode::Replace)
            .is_err()
        {
            continue;
        }
        std::hint::black_box(session.check_tool("Bash", &json!({"command": "git log --oneline"})));
        loads.push(t.elapsed().as_secs_f64() * 1e6);
    }
    metrics.push(metric(
        "skills_load of one skill + first check_tool",
        "us",
        median(loads),
        None,
        "body read, digest, rules compiled",
    ));

    let restricted = names.iter().find(|n| {
        index
            .snapshot()
            .get(n)
            .is_some_and(|r| r.frontmatter.allowed_tools.is_some())
    });
    let session = executor.session(SessionContext::builder().build());
    if let Some(name) = restricted {
        let _ = session.load(std::slice::from_ref(name), LoadMode::Replace);
    }
    const N: usize = 2_000_000;
    let mut samples = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for i in 0..N {
            let cmd = if i % 2 == 0 {
                "git log --oneline"
            } else {
                "rm -rf /"
            };
            std::hint::black_box(session.decide("Bash", Some(cmd)));
        }
        samples.push(t.elapsed().as_nanos() as f64 / N as f64);
    }
    metrics.push(metric(
        "check_tool decision (compiled rules, one restricting skill)",
        "ns",
        median(samples),
        None,
        "allowed and denied calls alternately; audit not included",
    ));
}

/// `check_tool` throughput with the audit file, and with an unreachable OTLP exporter
/// beside it (a loopback port nothing listens on): the export never holds up a decision.
fn audit_export(runs: usize, metrics: &mut Vec<Value>) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let index = Arc::new(
        SkillIndex::builder()
            .watch(false)
            .build()
            .expect("an empty index"),
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    let session = |file: &str, export: bool| {
        let sink = JsonlFileSink::open(&dir.path().join(file)).expect("the audit file");
        let mut builder = Executor::builder(Arc::clone(&index)).audit_sink(Arc::new(sink));
        if export {
            let exporter = OtlpExporter::builder(&format!("http://127.0.0.1:{port}"))
                .drain(Duration::ZERO)
                .build()
                .expect("an exporter");
            builder = builder.audit_export(exporter);
        }
        let executor = builder.build();
        (
            executor.session(SessionContext::builder().build()),
            executor,
        )
    };
    let (plain, _) = session("plain.jsonl", false);
    let (exported, executor) = session("exported.jsonl", true);
    let input = json!({"command": "git log --oneline"});
    const N: usize = 20_000;
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for run in 0..runs {
        for step in row::order(run, 2) {
            let (s, out) = if step == 0 {
                (&plain, &mut without)
            } else {
                (&exported, &mut with)
            };
            let t = Instant::now();
            for _ in 0..N {
                std::hint::black_box(s.check_tool("Bash", &input));
            }
            out.push(t.elapsed().as_nanos() as f64 / N as f64);
        }
    }
    let stats = executor
        .audit_export()
        .map(|e| e.stats())
        .unwrap_or_default();
    metrics.push(metric(
        "check_tool with the audit file, an unreachable OTLP exporter beside it",
        "ns",
        median(with),
        Some(median(without)),
        &format!(
            "floor: the same calls with the audit file alone; each call audited; the exporter's requests failed for {} events and its queue dropped {}",
            stats.failed, stats.dropped
        ),
    ));
}

/// From the write on disk to the change being visible to a reader, through the watcher
/// (includes its 50 ms debounce window).
fn watched_edit(root: &Path, names: &[String], runs: usize, metrics: &mut Vec<Value>) {
    let index = SkillIndex::builder()
        .root(Layer::Project, root)
        .watch(true)
        .build()
        .expect("index builds");
    let events = index.subscribe();
    let mut times = Vec::new();
    for i in 0..runs {
        let file = root.join(&names[(i * 7) % names.len()]).join("SKILL.md");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let t = Instant::now();
        std::fs::write(
            &file,
            text.replacen("description: ", "description: Watched. ", 1),
        )
        .expect("write");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if events.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
        }
        times.push(ms(t.elapsed()));
        std::fs::write(&file, text).expect("restore");
        let _ = events.recv_timeout(Duration::from_secs(10));
        while events.try_recv().is_ok() {}
    }
    metrics.push(metric(
        "write on disk to change visible (watcher), 1000 skills",
        "ms",
        median(times),
        None,
        "includes the 50 ms debounce window",
    ));
}
