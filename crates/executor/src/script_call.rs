//! `ScriptCall`: what a `skills_run_script` call asks for.

use std::time::Duration;

use skills_runner::Cancellation;

/// A `skills_run_script` call.
#[derive(Debug, Clone, Default)]
pub struct ScriptCall {
    /// The active skill (default: the most recently loaded).
    pub skill: Option<String>,
    /// The script, relative to the skill folder, under `scripts/`.
    pub path: String,
    /// Arguments, passed as argv.
    pub args: Vec<String>,
    /// Environment variables to add (filtered by the runner).
    pub env: Vec<(String, String)>,
    /// The working folder, relative to the skill folder or an area the host allows.
    pub workdir: Option<String>,
    /// A shorter timeout than the host's.
    pub timeout: Option<Duration>,
    /// Stops the run when cancelled.
    pub cancel: Option<Cancellation>,
}

impl ScriptCall {
    /// A call of the script at `path` of the most recently loaded skill, with no arguments.
    pub fn new(path: impl Into<String>) -> ScriptCall {
        ScriptCall {
            path: path.into(),
            ..ScriptCall::default()
        }
    }
}
