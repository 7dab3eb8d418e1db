//! The script runner: one script as a real child process, with argv (never a shell), a
//! cleared environment, a timeout that kills the whole process group, and capped output.
//!
//! (Stub: the interface is fixed; the implementation is being written.)

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

/// What to run.
#[derive(Debug, Clone)]
pub struct ScriptRequest<'a> {
    /// The script (absolute path, already checked to be inside the skill's `scripts/`).
    pub script: &'a Path,
    /// Arguments, passed as argv.
    pub args: &'a [String],
    /// Environment variables the call passes (added to `PATH`, `HOME`, `LANG`).
    pub env: &'a [(String, String)],
    /// The working directory (already checked by the caller).
    pub workdir: &'a Path,
    /// Kill the process group after this long.
    pub timeout: Duration,
    /// Cap on each of stdout and stderr, in bytes.
    pub output_limit: usize,
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScriptOutput {
    /// The exit code; `None` when killed by a signal (a timeout included).
    pub exit_code: Option<i32>,
    /// Standard output (lossy UTF-8), at most `output_limit` bytes.
    pub stdout: String,
    /// Standard error (lossy UTF-8), at most `output_limit` bytes.
    pub stderr: String,
    /// Whether stdout or stderr was cut at the limit.
    pub truncated: bool,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Wall-clock duration.
    pub duration_ms: u64,
}

/// Why a script could not be started.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// No interpreter for the extension, and the file is not executable.
    #[error("{0}: not executable and no interpreter is known for its extension (.py, .sh, .js, .rb)")]
    NotExecutable(String),
    /// The process could not be spawned.
    #[error("cannot start {path}: {source}")]
    Spawn {
        /// The script.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The interpreter for a script, by extension: `.py` python3, `.sh` bash, `.js` node,
/// `.rb` ruby; `None` means the file must be executable itself.
pub fn interpreter_for(script: &Path) -> Option<&'static str> {
    match script.extension().and_then(|e| e.to_str()) {
        Some("py") => Some("python3"),
        Some("sh") => Some("bash"),
        Some("js") => Some("node"),
        Some("rb") => Some("ruby"),
        _ => None,
    }
}

/// Runs one script to completion or timeout.
pub fn run_script(request: &ScriptRequest<'_>) -> Result<ScriptOutput, ScriptError> {
    Err(ScriptError::NotExecutable(request.script.display().to_string()))
}
