//! The executor: sessions with a stack of active skills, enforcement of their
//! `allowed-tools`, the runtime tools a model calls, the script runner, the audit trail and
//! prompt rendering.

mod audit;
mod enforce;
mod error;
mod policy;
mod prompt;
mod script;
mod session;
mod tools;

pub use audit::{AuditEvent, AuditKind, AuditSink, JsonlFileSink, MemorySink, NullSink};
pub use enforce::Decision;
pub use error::ExecError;
pub use policy::{DefaultDecision, Delivery, Policy, PolicyBuilder};
pub use prompt::{active_skills, available_skills, instructions, skill_tool_description};
pub use script::{interpreter_for, run_script, ScriptError, ScriptOutput, ScriptRequest};
pub use session::{
    Executor, ExecutorBuilder, LoadMode, Session, SessionContext, SessionContextBuilder, TaskGuard,
};
pub use tools::ToolDefinition;
