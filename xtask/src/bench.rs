//! `cargo xtask bench [--quick] [--shared DIR]` runs the gate benchmarks in release, prints
//! one table (metric, median, floor, ratio, target, verdict), saves the results as JSON
//! (with the core count and the commit) and fails when a gate fails.
//! `cargo xtask bench --compare A.json B.json` prints the change per metric.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::gen_corpus::{generate, Options};
use crate::whole::Corpus;

/// A gate: the metric it reads, what is compared, and the limit.
struct Gate {
    metric: &'static str,
    /// Compare the ratio to the floor instead of the median.
    on_ratio: bool,
    limit: f64,
    /// Machine-independent gates are enforced as they are even in `--quick`.
    absolute: bool,
    target: &'static str,
    /// A target the code does not meet yet: measured and printed, its verdict marked
    /// "open" with the issue that holds it, and not failing the run. The regression guard
    /// beside it (a gate of its own) is enforced meanwhile.
    open: Option<&'static str>,
}

const GATES: &[Gate] = &[
    // Regression guards where a target is still open: where the code stands, with room for
    // noise; enforced as they are, even in --quick.
    Gate {
        metric: "index build, 10000 skills",
        on_ratio: true,
        limit: 3.5,
        absolute: true,
        target: "guard <= 3.5x floor",
        open: None,
    },
    Gate {
        metric: "whole-process list, 10000 skills",
        on_ratio: true,
        limit: 4.5,
        absolute: true,
        target: "guard <= 4.5x floor process",
        open: None,
    },
    Gate {
        metric: "whole-process list, real skills",
        on_ratio: true,
        limit: 5.5,
        absolute: true,
        target: "guard <= 5.5x floor process",
        open: None,
    },
    Gate {
        metric: "index build, 1000 skills",
        on_ratio: false,
        limit: 100.0,
        absolute: true,
        target: "< 100 ms (design card)",
        open: None,
    },
    Gate {
        metric: "index build, 1000 skills",
        on_ratio: true,
        limit: 1.2,
        absolute: false,
        target: "<= 1.2x floor",
        open: Some("#15"),
    },
    Gate {
        metric: "index build, 10000 skills",
        on_ratio: true,
        limit: 1.2,
        absolute: false,
        target: "<= 1.2x floor",
        open: Some("#15"),
    },
    Gate {
        metric: "whole-process list, 1000 skills",
        on_ratio: true,
        limit: 1.5,
        absolute: false,
        target: "<= 1.5x floor process",
        open: Some("#15"),
    },
    Gate {
        metric: "whole-process list, 10000 skills",
        on_ratio: true,
        limit: 1.5,
        absolute: false,
        target: "<= 1.5x floor process",
        open: Some("#15"),
    },
    Gate {
        metric: "whole-process list, 100000 skills",
        on_ratio: true,
        limit: 1.5,
        absolute: false,
        target: "<= 1.5x floor process",
        open: Some("#15"),
    },
    Gate {
        metric: "whole-process list, real skills",
        on_ratio: true,
        limit: 1.5,
        absolute: false,
        target: "<= 1.5x floor process",
        open: Some("#15"),
    },
    Gate {
        metric: "pipelined check_tool through skillctl session, no audit file",
        on_ratio: false,
        limit: 2.0,
        absolute: false,
        target: "<= 2 us/request (500,000/s)",
        open: None,
    },
    Gate {
        metric: "pipelined check_tool through skillctl session, audit file",
        on_ratio: false,
        limit: 4.0,
        absolute: false,
        target: "<= 4 us/request (250,000/s)",
        open: None,
    },
    Gate {
        metric: "peak RSS of list beyond the index heap, 10000 skills",
        on_ratio: false,
        limit: 32.0,
        absolute: false,
        target: "<= 32 MiB",
        open: None,
    },
    Gate {
        metric: "peak RSS of list beyond the index heap, 100000 skills",
        on_ratio: false,
        limit: 32.0,
        absolute: false,
        target: "<= 32 MiB",
        open: Some("#15"),
    },
    Gate {
        metric: "peak RSS of list beyond the index heap, 100000 skills",
        on_ratio: false,
        limit: 64.0,
        absolute: true,
        target: "guard <= 64 MiB",
        open: None,
    },
    Gate {
        metric: "edit published after its debounced event, 1000 skills",
        on_ratio: false,
        limit: 5.0,
        absolute: false,
        target: "<= 5 ms",
        open: None,
    },
    Gate {
        metric: "check_tool decision (compiled rules, one restricting skill)",
        on_ratio: false,
        limit: 1000.0,
        absolute: false,
        target: "< 1 us",
        open: None,
    },
    Gate {
        metric: "render <available_skills>, 1000 skills",
        on_ratio: false,
        limit: 1.0,
        absolute: false,
        target: "< 1 ms",
        open: None,
    },
    Gate {
        metric: "1000 changes published with a subscriber, 10000 skills",
        on_ratio: false,
        limit: 100.0,
        absolute: false,
        target: "<= 100 ms",
        open: None,
    },
    Gate {
        metric: "search latency, 10000 skills",
        on_ratio: false,
        limit: 1000.0,
        absolute: false,
        target: "< 1 ms",
        open: None,
    },
    Gate {
        metric: "search latency, a session's first after a publication, 10000 skills",
        on_ratio: false,
        limit: 1000.0,
        absolute: false,
        target: "< 1 ms",
        open: None,
    },
    Gate {
        metric: "search latency p99, 10000 skills",
        on_ratio: false,
        limit: 1000.0,
        absolute: false,
        target: "< 1 ms",
        open: None,
    },
    Gate {
        metric: "search index build, 10000 skills",
        on_ratio: true,
        limit: 0.10,
        absolute: false,
        target: "<= 10% of the index build",
        open: None,
    },
    Gate {
        metric: "search index heap per skill, 10000 skills",
        on_ratio: false,
        limit: 2048.0,
        absolute: false,
        target: "<= 2 KiB",
        open: None,
    },
    Gate {
        metric: "heap per skill beyond description, 1000 skills",
        on_ratio: false,
        limit: 1024.0,
        absolute: false,
        target: "<= 1 KiB",
        open: None,
    },
    Gate {
        metric: "heap per skill beyond description, 10000 skills",
        on_ratio: false,
        limit: 1024.0,
        absolute: false,
        target: "<= 1 KiB",
        open: None,
    },
];

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    if let Some(i) = args.iter().position(|a| a == "--compare") {
        let (Some(a), Some(b)) = (args.get(i + 1), args.get(i + 2)) else {
            bail!("--compare needs two result files");
        };
        return compare(Path::new(a), Path::new(b));
    }
    let quick = args.iter().any(|a| a == "--quick");
    let root = crate::workspace_root();
    let target = crate::target_dir();
    let corpus_dir = target.join("bench-corpus");
    let mut corpora = Vec::new();
    // 100,000 skills only in a full run: generating them takes minutes and 500 MB.
    let counts: &[usize] = if quick {
        &[100, 1000, 10_000]
    } else {
        &[100, 1000, 10_000, 100_000]
    };
    for &count in counts {
        let dir = corpus_dir.join(count.to_string());
        let marker = dir.join(".complete");
        if !marker.exists() {
            let _ = std::fs::remove_dir_all(&dir);
            eprintln!("bench: generating {count} skills in {}", dir.display());
            generate(
                &dir,
                &Options {
                    count,
                    seed: 1,
                    invalid_share: 0.0,
                },
            )?;
            std::fs::write(&marker, "seed 1\n")?;
        }
        corpora.push((count.to_string(), dir));
    }
    let shared = crate::shared_dir(crate::flag(args, "--shared"));
    let real = shared.join("corpus/real-world/skills");
    if real.is_dir() {
        corpora.push(("real".to_owned(), real));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["bench", "--quiet", "--bench", "gates", "--"]);
    if quick {
        cmd.arg("--quick");
    }
    for (label, dir) in &corpora {
        cmd.arg("--corpus")
            .arg(format!("{label}={}", dir.display()));
    }
    let output = cmd.output().context("running cargo bench")?;
    if !output.status.success() {
        bail!(
            "the gates benchmark failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .context("no JSON from the benchmark")?;
    let doc: Value = serde_json::from_str(line)?;
    let mut metrics = doc["metrics"].as_array().cloned().unwrap_or_default();
    // The round trip a host meets, through the release binary: MCP beside JSON lines.
    let skillctl = crate::build_skillctl(true)?;
    let (mcp, lines) = crate::mcp_interop::round_trips(&skillctl)?;
    for (metric, median) in [
        ("round trip, tools/call skills_read over MCP stdio", mcp),
        ("round trip, skills_read over the JSON-lines session", lines),
    ] {
        metrics.push(crate::whole::metric(
            metric,
            "us",
            median.as_secs_f64() * 1e6,
            None,
            "",
        ));
    }
    // Whole process, as a user meets it: skillctl list beside the floor process.
    let floor = crate::whole::build_floor()?;
    let whole: Vec<Corpus> = corpora
        .iter()
        .filter(|(label, _)| label != "100")
        .map(|(label, dir)| Corpus {
            label: label.clone(),
            dir: dir.clone(),
            depth: if label == "real" { 6 } else { 1 },
        })
        .collect();
    for corpus in &whole {
        let runs = match (quick, corpus.label.as_str()) {
            (_, "100000") => 5,
            (true, _) => 7,
            (false, _) => 15,
        };
        metrics.extend(crate::whole::list_vs_floor(
            &skillctl,
            &floor,
            std::slice::from_ref(corpus),
            runs,
        )?);
    }
    // Peak RSS of list at the largest generated size, beyond the index's own heap.
    if let Some(largest) = whole.iter().rev().find(|c| c.label != "real") {
        let rss = crate::whole::list_peak_rss(&skillctl, largest, if quick { 3 } else { 5 })?;
        let heap_metric = format!("index heap, {} skills", largest.label);
        let heap = metrics
            .iter()
            .find(|m| m["metric"].as_str() == Some(heap_metric.as_str()))
            .and_then(|m| m["median"].as_f64());
        if let Some(heap) = heap {
            metrics.push(crate::whole::metric(
                &format!(
                    "peak RSS of list beyond the index heap, {} skills",
                    largest.label
                ),
                "MiB",
                (rss - heap) / 1_048_576.0,
                None,
                &format!(
                    "peak RSS {:.1} MiB, index heap {:.1} MiB",
                    rss / 1_048_576.0,
                    heap / 1_048_576.0
                ),
            ));
        }
    }
    // The session's throughput, as a host that pipelines meets it.
    metrics.extend(crate::whole::check_tool_throughput(
        &skillctl,
        if quick { 3 } else { 7 },
    )?);
    // Cold page cache at 1,000 skills: reported, not gated.
    if let Some(corpus) = whole.iter().find(|c| c.label == "1000") {
        metrics.extend(crate::whole::cold(
            &skillctl,
            &floor,
            corpus,
            if quick { 3 } else { 7 },
        )?);
    }
    let (table, failed) = table(&metrics, quick);
    print!("{table}");
    let commit = Command::new("git")
        .current_dir(&root)
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let results = json!({"commit": commit, "cores": cores, "quick": quick, "timestamp": stamp, "metrics": metrics});
    let out_dir = target.join("bench-results");
    std::fs::create_dir_all(&out_dir)?;
    let out = out_dir.join(format!("{stamp}-{commit}.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    println!(
        "results: {} ({cores} cores, commit {commit})",
        out.display()
    );
    if failed > 0 {
        println!("bench: {failed} gate(s) failed");
        return Ok(ExitCode::FAILURE);
    }
    println!("bench: every gate passed");
    Ok(ExitCode::SUCCESS)
}

fn fmt_num(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
        None => "-".into(),
    }
}

/// The table, and how many gates failed. In `--quick`, gates that depend on the machine
/// fail only when missed by more than a factor of two.
fn table(metrics: &[Value], quick: bool) -> (String, usize) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| metric | median | floor | ratio | target | verdict |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let mut failed = 0;
    for m in metrics {
        let name = m["metric"].as_str().unwrap_or("");
        let unit = m["unit"].as_str().unwrap_or("");
        let gates: Vec<&Gate> = GATES.iter().filter(|g| g.metric == name).collect();
        let floor = if m["floor"].is_null() {
            "-".to_owned()
        } else {
            format!("{} {unit}", fmt_num(&m["floor"]))
        };
        let ratio = if m["ratio"].is_null() {
            "-".to_owned()
        } else {
            format!("{}x", fmt_num(&m["ratio"]))
        };
        let mut targets = Vec::new();
        let mut verdicts: Vec<String> = Vec::new();
        for g in gates {
            let value = if g.on_ratio {
                m["ratio"].as_f64()
            } else {
                m["median"].as_f64()
            }
            .unwrap_or(f64::INFINITY);
            let limit = if quick && !g.absolute {
                g.limit * 2.0
            } else {
                g.limit
            };
            let pass = value <= limit;
            // An open target is met only by the target itself: the quick form's doubled
            // bound says "within twice", never "met" (2.03x against 1.5x read as met).
            let doubled = quick && !g.absolute;
            let verdict = match (g.open, pass) {
                (None, true) => "pass".to_owned(),
                (None, false) => {
                    failed += 1;
                    "FAIL".to_owned()
                }
                (Some(issue), true) if value <= g.limit => format!("met (open in {issue})"),
                (Some(issue), true) if doubled => {
                    format!("not yet, within twice the target (open in {issue})")
                }
                (Some(issue), _) => format!("not yet (open in {issue})"),
            };
            targets.push(g.target);
            verdicts.push(verdict);
        }
        let _ = writeln!(
            out,
            "| {name} | {} {unit} | {floor} | {ratio} | {} | {} |",
            fmt_num(&m["median"]),
            if targets.is_empty() {
                "-".to_owned()
            } else {
                targets.join("; ")
            },
            if verdicts.is_empty() {
                "-".to_owned()
            } else {
                verdicts.join("; ")
            },
        );
    }
    (out, failed)
}

fn compare(a: &Path, b: &Path) -> Result<ExitCode> {
    let load = |p: &PathBuf| -> Result<Value> {
        Ok(serde_json::from_str(
            &std::fs::read_to_string(p).with_context(|| p.display().to_string())?,
        )?)
    };
    let (a, b) = (load(&a.to_path_buf())?, load(&b.to_path_buf())?);
    println!("| metric | A | B | change |");
    println!("|---|---|---|---|");
    for mb in b["metrics"].as_array().into_iter().flatten() {
        let name = mb["metric"].as_str().unwrap_or("");
        let ma = a["metrics"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["metric"].as_str() == Some(name));
        let (Some(va), Some(vb)) = (ma.and_then(|m| m["median"].as_f64()), mb["median"].as_f64())
        else {
            continue;
        };
        let change = if va > 0.0 {
            format!("{:+.1}%", (vb - va) / va * 100.0)
        } else {
            "-".into()
        };
        println!("| {name} | {va:.3} | {vb:.3} | {change} |");
    }
    Ok(ExitCode::SUCCESS)
}
