//! `cargo xtask host-example`: builds `skillctl` and runs `examples/host.py`, a host written
//! in Python (standard library only) from PROTOCOL.md alone, against a live session.

use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

pub(crate) fn run(_args: &[String]) -> Result<ExitCode> {
    let skillctl = crate::build_skillctl(crate::Profile::Debug)?;
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = crate::workspace_root().join("examples/host.py");
    let status = Command::new(&python)
        .arg(&script)
        .arg("--skillctl")
        .arg(&skillctl)
        .status()
        .with_context(|| format!("running {python} (Python 3 is this command's prerequisite)"))?;
    if !status.success() {
        bail!("examples/host.py failed ({status})");
    }
    Ok(ExitCode::SUCCESS)
}
