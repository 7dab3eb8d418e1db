//! `cargo xtask`: the project's own automation. `conformance` checks the validator against
//! the shared conformance suite and the real-world corpus counts; `lint-rates` measures how
//! often each lint rule fires over that corpus.
// A command-line tool: printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

mod bench;
mod burst;
mod chart;
mod conformance;
mod gen_corpus;
mod host_example;
mod lint_rates;
mod mcp_conformance;
mod mcp_interop;
mod prompt_compare;
mod schema_check;
mod search_recall;
mod whole;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  conformance [--shared DIR] [--cases DIR] [--corpus DIR]
      Run `skillctl validate` over the conformance suite (DIR/conformance, 80 cases) and the
      real-world corpus (DIR/corpus/real-world/skills) and check the expected verdicts.
      DIR defaults to $AGENT_SKILLS_SHARED, else ../shared beside the workspace.
  lint-rates [--shared DIR] [--corpus DIR] [--list RULE]
      Parse every SKILL.md of the real-world corpus (DIR/corpus/real-world/skills) with the
      lint rules on and print, per rule, the skills it fires on out of the total (and per
      source folder). --list RULE prints instead each skill RULE fires on, with its message.
  prompt-compare [--shared DIR] [--corpus DIR] [--limit N]
      Compare our <available_skills> byte for byte with `agentskills to-prompt` (PyPI
      skills-ref, installed with pip when missing) over N corpus folders (default 300,
      0 = all) that the reference accepts.
  host-example
      Build skillctl and run examples/host.py (Python 3, standard library only), a host
      written from PROTOCOL.md, against a live session.
  mcp-interop
      Run `skillctl mcp` against the official MCP SDKs (Python `mcp` 2.3.x, TypeScript
      `@modelcontextprotocol/sdk` 1.32.x, installed under target/ with pip and npm when
      missing), over stdio and streamable HTTP; then the MCP and JSON-lines round trips.
  search-recall [--shared DIR] [--corpus DIR]
      Index the real-world corpus, search for every skill with a query made from its own
      description, and print recall@1 and recall@5 of skills_search.
  bench [--quick] [--shared DIR] [--only whole|burst] [--write-doc [--from RESULTS.json]]
      The performance gates, each beside its floor measured in the same run. --write-doc
      writes docs/performance.md and its chart from the run; --from RESULTS.json writes them
      from a saved one. --only whole runs the whole-process list rows alone (no gate fails).
  gen-corpus
      Generate the synthetic corpora the benchmarks read.
  schema-check [--shared DIR]
      Check schema/skill-frontmatter.schema.json against the conformance suite with Python's
      jsonschema (installed under target/ with pip when missing): valid cases pass it,
      invalid cases the schema can express fail it.
  man [DIR]
      Write skillctl's man pages (skillctl.1 and one per subcommand, clap_mangen) into DIR
      (default target/man).";

/// Every command `run` dispatches (a test holds USAGE to naming each).
const COMMANDS: [&str; 11] = [
    "conformance",
    "lint-rates",
    "gen-corpus",
    "bench",
    "prompt-compare",
    "host-example",
    "mcp-interop",
    "search-recall",
    "man",
    "schema-check",
    "help",
];

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return Ok(ExitCode::from(2));
    };
    let rest: Vec<String> = args.collect();
    match command.as_str() {
        "conformance" => conformance::run(&rest),
        "lint-rates" => lint_rates::run(&rest),
        "gen-corpus" => gen_corpus::run(&rest),
        "bench" => bench::run(&rest),
        "prompt-compare" => prompt_compare::run(&rest),
        "host-example" => host_example::run(&rest),
        "mcp-interop" => mcp_interop::run(&rest),
        "search-recall" => search_recall::run(&rest),
        "man" => man(&rest),
        "schema-check" => schema_check::run(&rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => bail!(
            "unknown command {other:?} (commands: {})\n\n{USAGE}",
            COMMANDS.join(", ")
        ),
    }
}

/// The real-world corpus: `--corpus DIR`, else `DIR/corpus/real-world/skills` of the shared
/// folder (`--shared DIR`, `$AGENT_SKILLS_SHARED`, `../shared`). It is external data: when
/// it is missing, the error says where it looked and how to point the command at it.
pub(crate) fn corpus_dir(args: &[String]) -> Result<PathBuf> {
    let shared = shared_dir(flag(args, "--shared"));
    let corpus: PathBuf =
        flag(args, "--corpus").map_or_else(|| shared.join("corpus/real-world/skills"), Into::into);
    if !corpus.is_dir() {
        bail!(
            "no real-world corpus at {}: it is external data, kept outside this repository (pass --shared DIR, with the corpus at DIR/corpus/real-world/skills, or --corpus DIR, or set AGENT_SKILLS_SHARED)",
            corpus.display()
        );
    }
    Ok(corpus)
}

/// Every `SKILL.md` under `root`, sorted.
pub(crate) fn skill_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "SKILL.md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Installs Python `packages` under `dir` with pip (once: `marker`, a folder the install
/// creates, says it is done). Python 3 is the prerequisite of the commands that call this.
pub(crate) fn pip_install(dir: &Path, marker: &str, packages: &[&str]) -> Result<()> {
    if dir.join(marker).is_dir() {
        return Ok(());
    }
    println!("installing {} under {}", packages.join(" "), dir.display());
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(dir)
        .args(packages)
        .status()
        .context("running pip (python3 is this command's prerequisite)")?;
    if !status.success() {
        bail!("pip install {} failed", packages.join(" "));
    }
    Ok(())
}

/// `cargo xtask man [DIR]`: the release `skillctl` writes its man pages.
fn man(args: &[String]) -> Result<ExitCode> {
    let dir = args
        .first()
        .map_or_else(|| target_dir().join("man"), PathBuf::from);
    // The debug build `cargo run -p skills-cli` makes anyway: a release build of the
    // whole stack only to print help text took about four minutes on two cores.
    let skillctl = build_skillctl(Profile::Debug)?;
    let status = Command::new(&skillctl).arg("man").arg(&dir).status()?;
    if !status.success() {
        bail!("skillctl man failed: {status}");
    }
    println!("man pages written to {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The workspace root (the parent of this crate).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The shared folder: `--shared`, `$AGENT_SKILLS_SHARED`, or `../shared` beside the workspace.
pub(crate) fn shared_dir(flag: Option<&str>) -> PathBuf {
    if let Some(dir) = flag {
        return PathBuf::from(dir);
    }
    if let Ok(dir) = std::env::var("AGENT_SKILLS_SHARED") {
        return PathBuf::from(dir);
    }
    workspace_root().join("../shared")
}

/// How `skillctl` is built for an xtask command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// The debug build: quick to build, for the checks that only need it to work.
    Debug,
    /// `--profile dist` (Cargo.toml): the binary a user gets, stripped and optimised
    /// across crates; what the bench measures (decision 0049).
    Dist,
}

/// Builds `skillctl` in `profile` and returns its path.
pub(crate) fn build_skillctl(profile: Profile) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).args([
        "build",
        "--quiet",
        "-p",
        "skills-cli",
        "--bin",
        "skillctl",
    ]);
    let folder = match profile {
        Profile::Debug => "debug",
        Profile::Dist => {
            cmd.args(["--profile", "dist"]);
            "dist"
        }
    };
    let status = cmd.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build of skillctl failed");
    }
    Ok(target_dir().join(folder).join("skillctl"))
}

/// Cargo's target folder: `$CARGO_TARGET_DIR`, else `target/` in the workspace.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target"))
}

/// Takes `--name VALUE` out of `args`.
pub(crate) fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::{COMMANDS, USAGE};

    #[test]
    fn the_usage_names_every_command() {
        for command in COMMANDS.iter().filter(|c| **c != "help") {
            assert!(
                USAGE.lines().any(|l| l.trim_start().starts_with(command)),
                "{command} is missing from the usage"
            );
        }
    }
}
