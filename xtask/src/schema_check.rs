//! `cargo xtask schema-check [--shared DIR]`: the shipped frontmatter schema
//! (`schema/skill-frontmatter.schema.json`) against the conformance suite, through an
//! off-the-shelf JSON Schema validator (Python's `jsonschema`, with PyYAML, installed under
//! `target/schema-check/` with pip when missing): every valid case passes it, and every
//! invalid case whose rule a schema can express fails it. This is also how a skill
//! repository's CI can use the schema. The suite is external: without it the command says
//! where it looked and how to point it there.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

const PACKAGES: [&str; 2] = ["jsonschema==4.*", "PyYAML==6.*"];

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let shared = crate::shared_dir(crate::flag(args, "--shared"));
    let cases: PathBuf = shared.join("conformance");
    if !cases.join("expected.tsv").is_file() {
        bail!(
            "no conformance suite at {} (it is external: pass --shared DIR, with the suite at DIR/conformance, or set AGENT_SKILLS_SHARED)",
            cases.display()
        );
    }
    let dir = crate::target_dir().join("schema-check");
    crate::pip_install(&dir, "jsonschema", &PACKAGES)?;
    crate::pip_install(&dir, "yaml", &PACKAGES)?;
    let root = crate::workspace_root();
    let status = Command::new("python3")
        .arg(root.join("tests/schema/check.py"))
        .arg(root.join("schema/skill-frontmatter.schema.json"))
        .arg(&cases)
        .env("PYTHONPATH", &dir)
        .status()
        .context("running python3")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
