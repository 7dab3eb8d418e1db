//! The whole-process figures of `cargo xtask bench`: `skillctl list --format json` as a
//! user meets it, against the floor process (`examples/floor.rs`: list the root and read
//! what the index reads of every `SKILL.md`, in parallel, nothing else) on the same files,
//! alternated run by run so both see the same noise; medians and their ratio. Also the peak
//! RSS of `list` at the largest size, and the cold-cache figures (reported, not gated).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One corpus: its label, folder and the depth its skills sit at.
pub(crate) struct Corpus {
    pub(crate) label: String,
    pub(crate) dir: PathBuf,
    pub(crate) depth: usize,
}

/// Builds the floor example with the profile `skillctl` is measured in (`--profile dist`:
/// both processes built alike, it makes the floor 2% faster; only `skillctl`'s build script
/// packs its relocations, decision 0062) and returns its path.
pub(crate) fn build_floor() -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(crate::workspace_root())
        .args([
            "build",
            "--quiet",
            "--profile",
            "dist",
            "--example",
            "floor",
        ])
        .status()
        .context("running cargo build --example floor")?;
    if !status.success() {
        bail!("cargo build of the floor example failed");
    }
    Ok(crate::target_dir().join("dist/examples/floor"))
}

fn list_cmd(skillctl: &Path, corpus: &Corpus) -> Command {
    let mut cmd = Command::new(skillctl);
    cmd.args(["list", "--no-defaults", "--format", "json", "--root"])
        .arg(format!("project={}", corpus.dir.display()))
        .args(["--depth", &corpus.depth.to_string()])
        .stdout(Stdio::null());
    cmd
}

fn floor_cmd(floor: &Path, corpus: &Corpus, threads: Option<usize>) -> Command {
    let mut cmd = Command::new(floor);
    cmd.arg(&corpus.dir)
        .arg(corpus.depth.to_string())
        .stdout(Stdio::null());
    if let Some(t) = threads {
        cmd.arg(t.to_string());
    }
    cmd
}

/// The floor process in one of its modes (`examples/floor.rs`): `checked` (the index's
/// `stat` before each open and `fstat` after it, by whole path) or `parse` (the index's
/// calls and its parser, `plain_floor::least`).
fn floor_as_cmd(floor: &Path, corpus: &Corpus, mode: &str) -> Command {
    let mut cmd = floor_cmd(floor, corpus, Some(0));
    cmd.arg(mode);
    cmd
}

/// Runs `cmd` to its end; its wall time in milliseconds.
fn timed(mut cmd: Command) -> Result<f64> {
    let started = Instant::now();
    let status = cmd.status().context("running a benchmark process")?;
    let elapsed = started.elapsed().as_secs_f64() * 1e3;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(elapsed)
}

/// The result row both benches write.
#[path = "../../benches/support/row.rs"]
mod row;
pub(crate) use row::metric;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `skillctl list` with a `--tag` no skill has: everything a `list` does but write the
/// records (the diagnostics are still written).
fn bare_list_cmd(skillctl: &Path, corpus: &Corpus) -> Command {
    let mut cmd = list_cmd(skillctl, corpus);
    cmd.args(["--tag", "no-skill-has-this-tag"]);
    cmd
}

/// `skillctl list` beside the floor process on each corpus, `runs` times alternated.
///
/// Beside them, what this `list` pays that the floor process does not, apart from its
/// index's own work: the checked floor process (SECURITY.md promise 20: no device is
/// opened), the records' output (`list` against `list` with a `--tag` no skill has) and its
/// process start beyond the floor's (both on an empty folder). Their sum is the distance
/// the index's work (parsing, holding, the precedence) has left to the floor process;
/// reported, not gated. Beside those, the floor process that reads with the index's own
/// calls and parses each frontmatter (`plain_floor::least`), alone and with the same output
/// and start added. The seven commands run in an order that changes run by run
/// (`row::order`), so no command always follows the same other.
pub(crate) fn list_vs_floor(
    skillctl: &Path,
    floor: &Path,
    corpora: &[Corpus],
    runs: usize,
) -> Result<Vec<Value>> {
    let empty_dir = crate::mcp_interop::tempfile_dir::Dir::new("bench-empty-root")?;
    let empty = Corpus {
        label: "empty".into(),
        dir: empty_dir.path().to_path_buf(),
        depth: 1,
    };
    let mut metrics = Vec::new();
    for corpus in corpora {
        let times = list_times(skillctl, floor, corpus, &empty, runs)?;
        metrics.extend(floor_metrics(&corpus.label, &times));
    }
    Ok(metrics)
}

/// The medians of list and the floor process over one corpus, and of both on an empty
/// folder, in milliseconds.
struct ListTimes {
    floor: f64,
    checked: f64,
    parsing: f64,
    list: f64,
    bare: f64,
    empty_list: f64,
    empty_floor: f64,
}

/// Times list and the floor process's variants over `corpus`, alternated, `runs` rounds.
fn list_times(
    skillctl: &Path,
    floor: &Path,
    corpus: &Corpus,
    empty: &Corpus,
    runs: usize,
) -> Result<ListTimes> {
    // Warm the page cache and both binaries.
    timed(floor_cmd(floor, corpus, None))?;
    timed(list_cmd(skillctl, corpus))?;
    let commands: [&dyn Fn() -> Command; 7] = [
        &|| floor_cmd(floor, corpus, None),
        &|| floor_as_cmd(floor, corpus, "checked"),
        &|| floor_as_cmd(floor, corpus, "parse"),
        &|| list_cmd(skillctl, corpus),
        &|| bare_list_cmd(skillctl, corpus),
        &|| list_cmd(skillctl, empty),
        &|| floor_cmd(floor, empty, None),
    ];
    let mut times: [Vec<f64>; 7] = Default::default();
    for run in 0..runs {
        for i in row::order(run, commands.len()) {
            times[i].push(timed(commands[i]())?);
        }
    }
    let [floor, checked, parsing, list, bare, empty_list, empty_floor] = times.map(median);
    Ok(ListTimes {
        floor,
        checked,
        parsing,
        list,
        bare,
        empty_list,
        empty_floor,
    })
}

/// The metrics of one corpus's times: list against the floor, and what list pays apart
/// from its index's work.
fn floor_metrics(label: &str, t: &ListTimes) -> Vec<Value> {
    let ListTimes {
        floor,
        checked,
        parsing,
        list,
        bare,
        empty_list,
        empty_floor,
    } = *t;
    let output = list - bare;
    let start = empty_list - empty_floor;
    vec![
        metric(
            &format!("floor process with the index's calls and its parser, {label} skills"),
            "ms",
            parsing,
            Some(floor),
            "the floor process reading with the index's calls (relative to a handle on the root, a stat before each open, an fstat after it) and parsing each frontmatter with this project's parser, nothing else, nothing written: an estimate from above of the least a list keeping promise 20 with this parser does before its output; reported, not gated",
        ),
        metric(
            &format!("whole-process list against the checked floor process, {label} skills"),
            "ms",
            list,
            Some(checked),
            "checked floor process = the floor process with a stat before each open and an fstat after it (the index never opens a device); reported, not gated",
        ),
        metric(
            &format!("whole-process list, {label} skills"),
            "ms",
            list,
            Some(floor),
            "skillctl list --format json > /dev/null; floor = examples/floor (list + read the same prefix, in parallel), alternated",
        ),
        metric(
            &format!("whole-process list without its records' output, {label} skills"),
            "ms",
            bare,
            Some(floor),
            "list with a --tag no skill has (the records are indexed, not written); reported, not gated",
        ),
        metric(
            &format!("checked floor process with list's output and start, {label} skills"),
            "ms",
            checked + output + start,
            Some(floor),
            &format!(
                "checked floor process {checked:.2} ms + the records' output {output:.2} ms (list - the row above) + process start beyond the floor's {start:.2} ms (list {empty_list:.2} ms and floor {empty_floor:.2} ms on an empty folder): what list pays apart from its index's work; reported, not gated"
            ),
        ),
        metric(
            &format!("floor process with the index's calls and its parser, list's output and start, {label} skills"),
            "ms",
            parsing + output + start,
            Some(floor),
            &format!(
                "floor process with the index's calls and its parser {parsing:.2} ms + the records' output {output:.2} ms + process start beyond the floor's {start:.2} ms: what remains above it is the index's own work (records, map, precedence, its threads); reported, not gated"
            ),
        ),
    ]
}

/// Peak resident memory of `skillctl list --format json` over `corpus`, in bytes: the
/// median of `runs` runs (the peak moves with thread timing by several MiB), each read from
/// the kernel's accounting of that finished child (`wait4`, through Python's `os`).
pub(crate) fn list_peak_rss(skillctl: &Path, corpus: &Corpus, runs: usize) -> Result<f64> {
    let list = list_cmd(skillctl, corpus);
    let mut args: Vec<String> = vec![list.get_program().to_string_lossy().into_owned()];
    args.extend(list.get_args().map(|a| a.to_string_lossy().into_owned()));
    let out = Command::new("python3")
        .arg("-c")
        .arg(concat!(
            "import os, statistics, subprocess, sys\n",
            "peaks = []\n",
            "for _ in range(int(sys.argv[1])):\n",
            "    child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)\n",
            "    _, status, usage = os.wait4(child.pid, 0)\n",
            "    if status != 0:\n",
            "        sys.exit('skillctl list failed')\n",
            "    peaks.append(usage.ru_maxrss)\n",
            "print(statistics.median(peaks))\n",
        ))
        .arg(runs.to_string())
        .args(&args)
        .output()
        .context("running python3 (a prerequisite) to measure peak RSS")?;
    if !out.status.success() {
        bail!(
            "measuring peak RSS failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let kib: f64 = String::from_utf8_lossy(&out.stdout).trim().parse()?;
    Ok(kib * 1024.0)
}

/// Drops `dir`'s files from the page cache (`posix_fadvise(DONTNEED)` on each, through
/// Python's `os`): what a cold start reads comes from the disk.
fn evict(dir: &Path) -> Result<()> {
    let status = Command::new("python3")
        .arg("-c")
        .arg(concat!(
            "import os, sys\n",
            "for root, dirs, files in os.walk(sys.argv[1]):\n",
            "    for f in files:\n",
            "        fd = os.open(os.path.join(root, f), os.O_RDONLY)\n",
            "        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n",
            "        os.close(fd)\n",
        ))
        .arg(dir)
        .status()
        .context("running python3 (a prerequisite) to evict the page cache")?;
    if !status.success() {
        bail!("evicting {} from the page cache failed", dir.display());
    }
    Ok(())
}

/// Cold page cache: `skillctl list` and the floor with 2, 8 and 32 threads, each run after
/// the corpus is evicted; the ratio is to the best cold floor.
pub(crate) fn cold(
    skillctl: &Path,
    floor: &Path,
    corpus: &Corpus,
    runs: usize,
) -> Result<Vec<Value>> {
    let threads = [2usize, 8, 32];
    let mut floors: Vec<Vec<f64>> = vec![Vec::new(); threads.len()];
    let mut lists = Vec::new();
    for _ in 0..runs {
        for (i, t) in threads.iter().enumerate() {
            evict(&corpus.dir)?;
            floors[i].push(timed(floor_cmd(floor, corpus, Some(*t)))?);
        }
        evict(&corpus.dir)?;
        lists.push(timed(list_cmd(skillctl, corpus))?);
    }
    let mut metrics = Vec::new();
    let mut best = f64::INFINITY;
    for (t, times) in threads.iter().zip(floors) {
        let m = median(times);
        best = best.min(m);
        metrics.push(metric(
            &format!("cold floor, {t} threads, {} skills", corpus.label),
            "ms",
            m,
            None,
            "",
        ));
    }
    let list = median(lists);
    metrics.push(metric(
        &format!("cold whole-process list, {} skills", corpus.label),
        "ms",
        list,
        Some(best),
        "page cache evicted (posix_fadvise DONTNEED) before each run; floor = the best cold floor",
    ));
    Ok(metrics)
}

/// Pipelined `check_tool` through `skillctl session`: one skill active with `Read
/// Bash(git status:*) Bash(git diff:*)`, 200,000 requests alternating an allowed `git
/// status` and a denied `rm -rf /`, written as fast as the session reads them; the time
/// from start to the last answer, per request, without and with an audit file.
pub(crate) fn check_tool_throughput(skillctl: &Path, runs: usize) -> Result<Vec<Value>> {
    use std::io::{BufRead as _, Write as _};
    const N: usize = 200_000;
    let dir = crate::mcp_interop::tempfile_dir::Dir::new("check-tool-bench")?;
    let skill = dir.path().join("skills/gitter");
    std::fs::create_dir_all(&skill)?;
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: gitter\ndescription: Looks at git state. Use when checking the repository.\nallowed-tools: Read Bash(git status:*) Bash(git diff:*)\n---\nBody.\n",
    )?;
    let mut input = String::from(r#"{"id":0,"tool":"host_activate","input":{"names":["gitter"]}}"#);
    input.push('\n');
    for i in 1..=N {
        let command = if i % 2 == 1 { "git status" } else { "rm -rf /" };
        input.push_str(&format!(
            "{{\"id\":{i},\"tool\":\"check_tool\",\"input\":{{\"tool\":\"Bash\",\"input\":{{\"command\":\"{command}\"}}}}}}\n"
        ));
    }
    let input = std::sync::Arc::new(input);
    let root = format!("project={}", dir.path().join("skills").display());
    let mut metrics = Vec::new();
    for audit in [false, true] {
        let mut times = Vec::new();
        for run in 0..runs {
            let mut cmd = Command::new(skillctl);
            cmd.args(["session", "--no-defaults", "--root", &root]);
            if audit {
                cmd.arg("--audit")
                    .arg(dir.path().join(format!("audit-{run}.jsonl")));
            }
            let started = Instant::now();
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .context("starting skillctl session")?;
            let mut stdin = child.stdin.take().context("stdin")?;
            let text = std::sync::Arc::clone(&input);
            let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
            let stdout = std::io::BufReader::new(child.stdout.take().context("stdout")?);
            let answers = stdout.lines().count();
            let elapsed = started.elapsed();
            writer
                .join()
                .map_err(|_| anyhow::anyhow!("the writer thread panicked"))??;
            child.wait()?;
            if answers != N + 1 {
                bail!("skillctl session answered {answers} of {} requests", N + 1);
            }
            times.push(elapsed.as_secs_f64() * 1e6 / N as f64);
        }
        let per_request = median(times);
        metrics.push(metric(
            &format!(
                "pipelined check_tool through skillctl session, {}",
                if audit { "audit file" } else { "no audit file" }
            ),
            "us/request",
            per_request,
            None,
            &format!(
                "{:.0} requests/s; 200,000 requests, allowed and denied alternating",
                1e6 / per_request
            ),
        ));
    }
    Ok(metrics)
}
