//! The executor: sessions with a stack of active skills, enforcement of their
//! `allowed-tools`, the runtime tools a model calls, the script runner, the audit trail,
//! prompt rendering, and the protocol layer every transport speaks.
//!
//! The Rust API is typed: a [`Session`]'s operations return the values in this crate
//! ([`LoadReceipt`], [`FileContent`], [`ScriptRun`], [`Decision`]...). JSON appears only
//! at the edge, in [`protocol`].

#[doc(hidden)]
#[path = "fuzz_support.rs"]
pub mod __fuzz;
mod audit;
mod check;
mod enforce;
mod env;
mod error;
mod executor;
mod files;
mod guard;
mod policy;
mod prompt;
pub mod protocol;
mod results;
mod run;
mod script;
mod search;
mod session;
mod shell;
mod stack;
mod supervisor;

pub use audit::{AuditEvent, AuditKind, AuditSink, JsonlFileSink, MemorySink, NullSink};
pub use enforce::Decision;
pub use error::ExecError;
pub use executor::{
    Executor, ExecutorBuilder, PluginOrigin, SessionContext, SessionContextBuilder,
};
pub use policy::{
    is_plain_tool_name, AllowedToolsMode, DefaultDecision, Delivery, Policy, PolicyBuilder,
    SkillWrites,
};
pub use prompt::{
    active_skills, available_skills, available_skills_within, instructions, skill_tool_description,
};
pub use protocol::ToolDefinition;
pub use results::{
    ActiveSkill, CheckResult, Encoding, FileContent, Hello, HookRun, HookStage, Instructions,
    ListedSkill, LoadReceipt, Outdated, PluginRegistered, PluginUnregistered, Reloaded, ScriptRun,
    SearchResult, SearchResults, ServerInfo, SkillContent, SkillList, UnloadReceipt, Verdict,
};
pub use run::{cancellation, Cancellation, Canceller, ScriptCall};
pub use script::{interpreter_for, run_script, ScriptError, ScriptOutput, ScriptRequest};
pub use search::{SearchQuery, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
/// The JSON value tool inputs are given as ([`Session::check_tool`], [`protocol::call`]),
/// re-exported so a host uses the same `serde_json` version as the executor.
pub use serde_json::Value;
pub use session::{HeldDecisions, Session};
pub use stack::{LoadMode, TaskGuard};
pub use supervisor::{supervise, STOPPED, SUPERVISE_ARG};
