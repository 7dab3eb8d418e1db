//! Audit events and sinks. Every activation, deactivation, tool decision, file read, script
//! run and hook run becomes an [`AuditEvent`], logged through `tracing` (target
//! `agent_skills::audit`) and recorded by an [`AuditSink`] before the call returns.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde::Serialize;

/// What an audit event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// A skill was pushed on a session's stack.
    SkillActivated,
    /// A skill left a session's stack.
    SkillDeactivated,
    /// A host tool call was decided (allowed) under at least one active skill.
    ToolExecutionInSkill,
    /// A host tool call was decided with no skill active.
    ToolCheckedWithoutSkill,
    /// A host tool call was denied.
    ToolRestrictionViolated,
    /// A host read of a skill's script was refused.
    ScriptReadBlocked,
    /// `skills_read` served (or refused) a file.
    SkillFileRead,
    /// `skills_run_script` ran (or refused) a script.
    ScriptExecuted,
    /// A `hooks.pre` or `hooks.post` script ran.
    HookExecuted,
    /// A plugin root was registered over the protocol.
    PluginRegistered,
    /// A plugin root was unregistered over the protocol (its active skills were
    /// deactivated first, each with its own event).
    PluginUnregistered,
    /// An authoring or trust option that loosens the defaults is in force for the session.
    PolicyOverride,
}

/// One audit record. Fields that do not apply are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AuditEvent {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// What happened.
    pub event: AuditKind,
    /// The session.
    pub session_id: String,
    /// The host's correlation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The agent type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// The skill concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_name: Option<String>,
    /// The tool called (a host tool, or the runtime tool that read or ran a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The file read, the script or hook run, the plugin root registered: relative to the
    /// skill folder for skill files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The rule that decided a tool call, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The `SKILL.md` digest of the version activated or deactivated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// For an activation that replaces a loaded version: the digest it replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_digest: Option<String>,
    /// For an activation: `model` or `host`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activated_by: Option<String>,
    /// The plugin registered or unregistered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_id: Option<String>,
    /// For `policy_override`: the option in force.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// The decision, for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_allowed: Option<bool>,
    /// The rules in force, for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// What went wrong, or why a call was denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl AuditEvent {
    pub(crate) fn now(event: AuditKind, session_id: &str) -> AuditEvent {
        AuditEvent {
            timestamp: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            event,
            session_id: session_id.to_owned(),
            correlation_id: None,
            agent_id: None,
            task_id: None,
            tenant_id: None,
            skill_name: None,
            tool_name: None,
            path: None,
            rule: None,
            digest: None,
            previous_digest: None,
            activated_by: None,
            plugin_id: None,
            option: None,
            tool_allowed: None,
            allowed_tools: None,
            error: None,
            duration_ms: None,
        }
    }
}

/// Where audit events go. `record` must have made the event durable (as the sink defines
/// it) when it returns `Ok`; an `Err` makes the call that needed the event fail closed.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    /// Records one event.
    fn record(&self, event: &AuditEvent) -> std::io::Result<()>;
}

/// Discards events (they still go to `tracing`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl AuditSink for NullSink {
    fn record(&self, _: &AuditEvent) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps events in memory, for tests and hosts that ship them elsewhere.
#[derive(Debug, Default)]
pub struct MemorySink {
    events: Mutex<Vec<AuditEvent>>,
}

impl MemorySink {
    /// A copy of every event recorded so far.
    pub fn events(&self) -> Vec<AuditEvent> {
        self.events.lock().clone()
    }
}

impl AuditSink for MemorySink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        self.events.lock().push(event.clone());
        Ok(())
    }
}

/// Appends one JSON object per line to a file, written whole and flushed (optionally
/// fsync'ed) before `record` returns.
#[derive(Debug)]
pub struct JsonlFileSink {
    file: Mutex<File>,
    fsync: bool,
}

impl JsonlFileSink {
    /// Opens (creating it if needed) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<JsonlFileSink> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonlFileSink {
            file: Mutex::new(file),
            fsync: false,
        })
    }

    /// The same sink, calling `fsync` after every line.
    #[must_use]
    pub fn with_fsync(mut self, yes: bool) -> JsonlFileSink {
        self.fsync = yes;
        self
    }
}

impl AuditSink for JsonlFileSink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(event)?;
        line.push(b'\n');
        let mut file = self.file.lock();
        // One write of the whole line on an O_APPEND file: lines never interleave.
        file.write_all(&line)?;
        file.flush()?;
        if self.fsync {
            file.sync_data()?;
        }
        Ok(())
    }
}
