//! Part of `cargo xtask mcp-interop`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16) against `skillctl mcp --http`, each server
//! scenario run or skipped with its reason; then MCP's skills extension against clients
//! this project did not write (the `@olaservo/ext-skills` client SDK, and the official
//! Python SDK sending raw requests), and skillctl's MCP source against a server written
//! with the `@olaservo/ext-skills` server (`tests/interop/ext_skills_server.mjs`). The suite needs Node 20.18 or later: it runs under
//! the npm package `node@22`, installed beside it under `target/mcp-interop/conformance/`.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};

/// What npm installs under `target/mcp-interop/conformance/`.
const PACKAGES: [&str; 4] = [
    "@modelcontextprotocol/conformance@0.1.16",
    "@olaservo/ext-skills@0.14",
    "@modelcontextprotocol/client@2",
    "node@22",
];

/// Every server scenario of the suite: `None` when it applies (and must pass), or why it
/// is skipped. A scenario the suite lists that is not here fails the run, so that a new
/// one is classified rather than passed over.
const SCENARIOS: [(&str, Option<&str>); 32] = [
    ("server-initialize", None),
    ("logging-set-level", None),
    ("ping", None),
    ("completion-complete", None),
    ("tools-list", None),
    ("server-sse-polling", None),
    ("server-sse-multiple-streams", None),
    ("resources-list", None),
    ("prompts-list", None),
    ("prompts-get-simple", None),
    ("dns-rebinding-protection", None),
    ("tools-call-simple-text", Some(SUITE_TOOL)),
    ("tools-call-image", Some(SUITE_TOOL)),
    ("tools-call-audio", Some(SUITE_TOOL)),
    ("tools-call-embedded-resource", Some(SUITE_TOOL)),
    ("tools-call-mixed-content", Some(SUITE_TOOL)),
    ("tools-call-with-logging", Some(SUITE_TOOL)),
    ("tools-call-error", Some(SUITE_TOOL)),
    ("tools-call-with-progress", Some(SUITE_TOOL)),
    ("tools-call-sampling", Some(SUITE_TOOL)),
    ("tools-call-elicitation", Some(SUITE_TOOL)),
    ("json-schema-2020-12", Some(SUITE_TOOL)),
    ("elicitation-sep1034-defaults", Some(SUITE_TOOL)),
    ("elicitation-sep1330-enums", Some(SUITE_TOOL)),
    ("resources-read-text", Some(SUITE_RESOURCE)),
    ("resources-read-binary", Some(SUITE_RESOURCE)),
    ("resources-templates-read", Some(SUITE_RESOURCE)),
    ("resources-subscribe", Some(SUITE_RESOURCE)),
    ("resources-unsubscribe", Some(SUITE_RESOURCE)),
    ("prompts-get-with-args", Some(SUITE_PROMPT)),
    ("prompts-get-embedded-resource", Some(SUITE_PROMPT)),
    ("prompts-get-with-image", Some(SUITE_PROMPT)),
];

const SUITE_TOOL: &str = "calls a test tool of the suite's own (test_*), which this server does not have: its tools are the runtime tools";
const SUITE_RESOURCE: &str = "reads or subscribes to a test:// resource of the suite's own; this server serves skill:// resources only, and refuses a URI naming no skill";
const SUITE_PROMPT: &str = "needs a prompt with the suite's arguments (arg1, arg2), an embedded resource or an image; a skill's prompt has one argument, `arguments`, and text";

/// Installs the packages when missing; the folder of their `node_modules`.
fn install(dir: &Path) -> Result<PathBuf> {
    let modules = dir.join("node_modules");
    let have = |p: &str| modules.join(p).is_dir();
    if have("@modelcontextprotocol/conformance")
        && have("@olaservo/ext-skills")
        && have("@modelcontextprotocol/client")
        && modules.join(".bin/node").exists()
    {
        return Ok(modules);
    }
    println!("installing {} under {}", PACKAGES.join(" "), dir.display());
    std::fs::create_dir_all(dir)?;
    let status = Command::new("npm")
        .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .args(PACKAGES)
        .status()
        .context("running npm (node and npm are this command's prerequisites)")?;
    if !status.success() {
        bail!("npm install {} failed", PACKAGES.join(" "));
    }
    Ok(modules)
}

/// A skill folder for the suite's run: a skill, and the two prompts its scenarios ask for
/// by name (a skill's prompt is named by the skill).
fn fixture(root: &Path) -> Result<()> {
    for (name, description) in [
        (
            "notes",
            "Notes for the conformance run; use them when it asks.",
        ),
        (
            "test_simple_prompt",
            "A prompt the conformance suite asks for by name.",
        ),
        (
            "test_prompt_with_arguments",
            "A prompt the conformance suite completes.",
        ),
    ] {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("references"))?;
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nFollow it.\n"),
        )?;
        std::fs::write(dir.join("references/guide.md"), "A guide.\n")?;
    }
    Ok(())
}

/// `skillctl mcp --http 127.0.0.1:0` over `root`, and the address it listens on.
fn serve(skillctl: &Path, root: &Path) -> Result<(Child, String)> {
    let mut child = Command::new(skillctl)
        .args(["mcp", "--no-defaults", "--http", "127.0.0.1:0", "--root"])
        .arg(format!("personal={}", root.display()))
        .stderr(Stdio::piped())
        .spawn()
        .context("starting skillctl mcp --http")?;
    let mut line = String::new();
    BufReader::new(child.stderr.take().context("stderr")?).read_line(&mut line)?;
    let listening: serde_json::Value =
        serde_json::from_str(&line).with_context(|| format!("skillctl said {line:?}"))?;
    let address = listening["listening"]
        .as_str()
        .context("no listening address")?;
    Ok((child, address.to_owned()))
}

/// Runs the suite's server scenarios; the names of those that failed.
pub(crate) fn conformance(skillctl: &Path, dir: &Path) -> Result<Vec<String>> {
    let modules = install(dir)?;
    let node = modules.join(".bin/node");
    let suite = modules.join("@modelcontextprotocol/conformance/dist/index.js");
    let listed = Command::new(&node).arg(&suite).arg("list").output()?;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let server_part = listed.split("Client scenarios").next().unwrap_or_default();
    let mut failed = Vec::new();
    for line in server_part
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
    {
        let name = line.split_whitespace().next().unwrap_or_default();
        if !SCENARIOS.iter().any(|(n, _)| *n == name) {
            println!("conformance {name}: FAILED (a scenario this run does not classify)");
            failed.push(name.to_owned());
        }
    }
    // The suite writes its results under its working folder: one made afresh each run.
    let work = dir.join("run");
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("skills");
    fixture(&root)?;
    let (mut server, address) = serve(skillctl, &root)?;
    let url = format!("http://{address}/mcp");
    for (name, skipped) in SCENARIOS {
        if let Some(reason) = skipped {
            println!("conformance {name}: skipped ({reason})");
            continue;
        }
        let out = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", name])
            .current_dir(&work)
            .output()
            .context("running the conformance suite")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let summary = text
            .lines()
            .find(|l| l.starts_with("Passed: "))
            .unwrap_or("no summary line")
            .trim()
            .to_owned();
        let passed = out.status.success() && summary.contains(", 0 failed");
        println!(
            "conformance {name}: {} ({summary})",
            if passed { "passed" } else { "FAILED" }
        );
        if !passed {
            failed.push(name.to_owned());
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    Ok(failed)
}

/// MCP's skills extension against the `@olaservo/ext-skills` client (stdio) and the
/// official Python SDK's raw requests (stdio and HTTP), and skillctl's MCP source against
/// a server written with the `@olaservo/ext-skills` server (over stdio and HTTP); the
/// names of the runs that failed.
pub(crate) fn extension_clients(skillctl: &Path, dir: &Path, py: &Path) -> Result<Vec<String>> {
    let modules = install(dir)?;
    let root = crate::workspace_root();
    let mut failed = Vec::new();
    let ext = Command::new(modules.join(".bin/node"))
        .arg(root.join("tests/interop/skills_ext_client.mjs"))
        .arg("--skillctl")
        .arg(skillctl)
        .env("NODE_PATH", &modules)
        .status()
        .context("running the ext-skills client")?;
    if !ext.success() {
        failed.push("the @olaservo/ext-skills client".to_owned());
    }
    let source = Command::new("python3")
        .arg(root.join("tests/interop/mcp_source_check.py"))
        .arg("--skillctl")
        .arg(skillctl)
        .arg("--node")
        .arg(modules.join(".bin/node"))
        .env("NODE_PATH", &modules)
        .status()
        .context("running the MCP source check")?;
    if !source.success() {
        failed.push("skillctl's MCP source against the ext-skills server".to_owned());
    }
    for transport in ["stdio", "http"] {
        let raw = Command::new("python3")
            .arg(root.join("tests/interop/skills_ext_raw.py"))
            .arg("--skillctl")
            .arg(skillctl)
            .args(["--transport", transport])
            .env("PYTHONPATH", py)
            .status()
            .context("running the Python raw client")?;
        if !raw.success() {
            failed.push(format!("the Python raw client over {transport}"));
        }
    }
    Ok(failed)
}
