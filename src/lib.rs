//! agent-skills: Agent Skills (`SKILL.md` packages) for long-running agent processes.
//!
//! This facade re-exports the workspace's public API: the model types, the parser, storage,
//! the index and the executor. The README, below, is compiled as part of the documentation
//! tests.
#![doc = include_str!("../README.md")]

pub use skills_executor::{
    active_skills, available_skills, instructions, interpreter_for, protocol, run_script,
    skill_tool_description, ActiveSkill, AuditEvent, AuditKind, AuditSink, CheckResult, Decision,
    DefaultDecision, Delivery, Encoding, ExecError, Executor, ExecutorBuilder, FileContent, Hello,
    HookRun, HookStage, Instructions, JsonlFileSink, ListedSkill, LoadMode, LoadReceipt,
    MemorySink, NullSink, Outdated, PluginOrigin, PluginRegistered, PluginUnregistered, Policy,
    PolicyBuilder, Reloaded, ScriptCall, ScriptError, ScriptOutput, ScriptRequest, ScriptRun,
    Session, SessionContext, SessionContextBuilder, SkillContent, SkillList, TaskGuard,
    ToolDefinition, UnloadReceipt, Verdict,
};
pub use skills_index::{
    check_candidate, ChangeEvent, ChangeKind, IndexError, PathDiagnostic, RootSpec, Shadowed,
    SkillIndex, SkillIndexBuilder, SkillReport, Snapshot, DEFAULT_SKILL_FILE_LIMIT,
};
pub use skills_model::*;
pub use skills_parser::{ParseInput, ParsedSkill, SkillParser, SkillParserBuilder};
pub use skills_storage::{
    discover, read_bounded, Candidate, Discovery, DiscoveryOptions, ReadError,
};
