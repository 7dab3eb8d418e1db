//! agent-skills: Agent Skills (`SKILL.md` packages) for long-running agent processes.
//!
//! This facade re-exports the workspace's public API: the model types, the parser, storage,
//! the index and the executor. The README, below, is compiled as part of the documentation
//! tests.
#![doc = include_str!("../README.md")]

pub use skills_executor::{
    active_skills, available_skills, instructions, interpreter_for, run_script,
    skill_tool_description, AuditEvent, AuditKind, AuditSink, Decision, DefaultDecision, Delivery,
    ExecError, Executor, ExecutorBuilder, JsonlFileSink, LoadMode, MemorySink, NullSink, Policy,
    PolicyBuilder, ScriptError, ScriptOutput, ScriptRequest, Session, SessionContext,
    SessionContextBuilder, TaskGuard, ToolDefinition,
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
