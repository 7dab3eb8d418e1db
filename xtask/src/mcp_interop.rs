//! `cargo xtask mcp-interop`: `skillctl mcp` against the official MCP SDKs nobody on this
//! project wrote, the Python SDK (`mcp` 2.3.x on PyPI) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk` 1.32.x on npm), each over stdio and streamable HTTP. The
//! pinned clients are installed under `target/mcp-interop/` with pip and npm when missing.
//! Then the official conformance suite's server scenarios and MCP's skills extension against
//! clients that are not ours (`mcp_conformance.rs`).
//! Then the median round trip of `tools/call skills_read` over MCP stdio, beside the same
//! request over the JSON-lines session.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

const PYTHON_SDK: &str = "mcp==2.3.*";
const TYPESCRIPT_SDK: &str = "@modelcontextprotocol/sdk@1.32";

pub(crate) fn run(_args: &[String]) -> Result<ExitCode> {
    let skillctl = crate::build_skillctl(crate::Profile::Debug)?;
    let dir = crate::target_dir().join("mcp-interop");
    let py = dir.join("py");
    let node = dir.join("node");
    crate::pip_install(&py, "mcp", &[PYTHON_SDK])?;
    if !node.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        println!("installing {TYPESCRIPT_SDK} under {}", node.display());
        std::fs::create_dir_all(&node)?;
        let status = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&node)
            .arg(TYPESCRIPT_SDK)
            .status()
            .context("running npm (node and npm are this command's prerequisites)")?;
        if !status.success() {
            bail!("npm install {TYPESCRIPT_SDK} failed");
        }
    }
    let root = crate::workspace_root();
    let mut failed = Vec::new();
    for transport in ["stdio", "http"] {
        let python = Command::new("python3")
            .arg(root.join("tests/interop/mcp_client.py"))
            .arg("--skillctl")
            .arg(&skillctl)
            .args(["--transport", transport])
            .env("PYTHONPATH", &py)
            .status()
            .context("running the Python client")?;
        if !python.success() {
            failed.push(format!("python over {transport}"));
        }
        let typescript = Command::new("node")
            .arg(root.join("tests/interop/mcp_client.mjs"))
            .arg("--skillctl")
            .arg(&skillctl)
            .args(["--transport", transport])
            .env("NODE_PATH", node.join("node_modules"))
            .status()
            .context("running the TypeScript client")?;
        if !typescript.success() {
            failed.push(format!("typescript over {transport}"));
        }
    }
    let conformance = dir.join("conformance");
    failed.extend(crate::mcp_conformance::conformance(
        &skillctl,
        &conformance,
    )?);
    failed.extend(crate::mcp_conformance::extension_clients(
        &skillctl,
        &conformance,
        &py,
    )?);
    if !failed.is_empty() {
        bail!("interop failed: {}", failed.join(", "));
    }
    let (mcp, lines) = round_trips(&skillctl)?;
    println!(
        "round trip of skills_read, median: MCP over stdio {:.1} us, JSON lines {:.1} us ({:.2}x)",
        mcp.as_secs_f64() * 1e6,
        lines.as_secs_f64() * 1e6,
        mcp.as_secs_f64() / lines.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// A skill with a reference to read, in a fresh folder.
fn fixture() -> Result<tempfile_dir::Dir> {
    let dir = tempfile_dir::Dir::new("mcp-rtt")?;
    let skill = dir.path().join("reader");
    std::fs::create_dir_all(skill.join("references"))?;
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: reader\ndescription: Reads a guide; use it in the round-trip bench.\n---\nRead.\n",
    )?;
    std::fs::write(skill.join("references/guide.md"), "A short guide.\n")?;
    Ok(dir)
}

/// Median round trips of `skills_read` over MCP stdio and over JSON lines (the bench
/// reports them too).
pub(crate) fn round_trips(skillctl: &Path) -> Result<(Duration, Duration)> {
    let dir = fixture()?;
    let root = format!("personal={}", dir.path().display());
    const N: usize = 300;
    let mcp = {
        let mut child = Command::new(skillctl)
            .args(["mcp", "--no-defaults", "--root", &root])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().context("stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
        let mut line = String::new();
        let mut ask = |body: String, reply: bool| -> Result<Duration> {
            let started = Instant::now();
            writeln!(stdin, "{body}")?;
            stdin.flush()?;
            if reply {
                line.clear();
                stdout.read_line(&mut line)?;
            }
            Ok(started.elapsed())
        };
        ask(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.into(), true)?;
        ask(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
            false,
        )?;
        ask(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skills_load","arguments":{"names":["reader"]}}}"#.into(), true)?;
        let mut times = Vec::with_capacity(N);
        for i in 0..N {
            times.push(ask(format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"skills_read","arguments":{{"path":"references/guide.md"}}}}}}"#, i + 2), true)?);
        }
        drop(stdin);
        let _ = child.wait();
        median(times)
    };
    let lines = {
        let mut child = Command::new(skillctl)
            .args(["session", "--no-defaults", "--root", &root])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().context("stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
        let mut line = String::new();
        let mut ask = |body: &str| -> Result<Duration> {
            let started = Instant::now();
            writeln!(stdin, "{body}")?;
            stdin.flush()?;
            line.clear();
            stdout.read_line(&mut line)?;
            Ok(started.elapsed())
        };
        ask(r#"{"id":0,"tool":"skills_load","input":{"names":["reader"]}}"#)?;
        let mut times = Vec::with_capacity(N);
        for _ in 0..N {
            times.push(ask(
                r#"{"id":1,"tool":"skills_read","input":{"path":"references/guide.md"}}"#,
            )?);
        }
        drop(stdin);
        let _ = child.wait();
        median(times)
    };
    Ok((mcp, lines))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// A temporary folder removed on drop (xtask has no tempfile dependency).
pub(crate) mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub(crate) struct Dir(PathBuf);

    impl Dir {
        pub(crate) fn new(name: &str) -> std::io::Result<Dir> {
            let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
            std::fs::create_dir_all(&path)?;
            Ok(Dir(path))
        }

        pub(crate) fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
