//! The executor: sessions with a stack of active skills, enforcement of their
//! `allowed-tools`, the runtime tools a model calls, scripts (run by `skills-runner`), the
//! audit trail, and prompt rendering. The protocol every transport speaks is
//! `skills-protocol`'s.
//!
//! The Rust API is typed: a [`Session`]'s operations return the values in this crate
//! ([`LoadReceipt`], [`FileContent`], [`ScriptRun`], [`Decision`]...). JSON appears only
//! at the edge, in `skills-protocol`.

#[doc(hidden)]
#[path = "fuzz_support.rs"]
pub mod __fuzz;
mod active;
mod audit;
mod check;
mod error;
mod executor;
mod export;
mod files;
mod manifest;
mod origin;
mod otlp;
mod pin;
mod policy;
mod prompt;
mod resolve;
mod results;
mod run;
mod script_call;
mod search;
mod secrets;
mod session;
mod stack;
mod state;
mod timing;

pub use audit::{AuditEvent, AuditKind, AuditSink, JsonlFileSink, MemorySink, NullSink};
pub use error::ExecError;
pub use executor::{
    Executor, ExecutorBuilder, SessionContext, SessionContextBuilder, UrlRootError, UrlRoots,
};
pub use export::{
    ExportError, ExportStats, OtlpExporter, OtlpExporterBuilder, DEFAULT_EXPORT_QUEUE,
};
pub use manifest::{
    ManifestFile, ManifestRefusal, SkillManifest, MANIFEST_MAX_BYTES, MANIFEST_MAX_FILES,
};
pub use origin::PluginOrigin;
pub(crate) use origin::PluginRoot;
pub use otlp::{ATTRIBUTE_NAMES, AUDIT_SCOPE};
pub use policy::{Delivery, Policy, PolicyBuilder, ScriptServing, SkillWrites, Unavailable};
pub use prompt::{
    active_skills, available_skills, available_skills_within, instructions, skill_content,
    skill_tool_description, MAX_LISTED_RESOURCES,
};
pub use results::{
    ActiveSkill, CheckResult, Encoding, FileContent, Hello, HookRun, HookStage, Instructions,
    ListedSkill, LoadReceipt, MatchedTerm, Outdated, PluginRegistered, PluginUnregistered,
    Reloaded, ScriptRun, SearchResult, SearchResults, ServerInfo, SkillContent, SkillList,
    UnavailableSkill, UnavailableSkills, UnloadReceipt, Verdict,
};
pub use script_call::ScriptCall;
pub use search::{SearchQuery, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
pub use secrets::{SecretError, Secrets};
/// The JSON value tool inputs are given as ([`Session::check_tool`], `skills_protocol::call`),
/// re-exported so a host uses the same `serde_json` version as the executor.
pub use serde_json::Value;
pub use session::Session;
pub use skills_policy::{is_plain_tool_name, AllowedToolsMode, Decision, DefaultDecision};
pub use skills_runner::{
    cancellation, interpreter_for, run_script, supervise, Cancellation, Canceller, ScriptError,
    ScriptOutput, ScriptRequest, STOPPED, SUPERVISE_ARG,
};
pub use stack::{LoadMode, TaskGuard};
pub use state::HeldDecisions;
