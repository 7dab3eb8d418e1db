//! The executor: sessions with a stack of active skills, enforcement of their
//! `allowed-tools`, the runtime tools a model calls, the script runner, the audit trail and
//! prompt rendering.

mod prompt;
mod script;

pub use prompt::{active_skills, available_skills, instructions, skill_tool_description};
pub use script::{interpreter_for, run_script, ScriptError, ScriptOutput, ScriptRequest};
