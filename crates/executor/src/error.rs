//! The executor's error type. Every variant has a stable code that `skillctl session` and
//! hosts put in front of the model.

use skills_index::IndexError;
use thiserror::Error;

use crate::ScriptError;

/// Errors of the runtime tools and the session.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExecError {
    /// No visible skill has this name (the index's error, with its suggestion: one home
    /// for the message).
    #[error(transparent)]
    NotFound(IndexError),
    /// The call needs an active skill (or names one that is not active).
    #[error("{0}")]
    NotActive(String),
    /// `skills_unload` would take a required composition dependency from a skill that
    /// stays active.
    #[error("{needed_by:?} requires {skill:?} (its composition dependency) and stays active: unload {needed_by:?} too, or keep {skill:?}")]
    RequiredByActive {
        /// The skill the unload would remove.
        skill: String,
        /// The active skill that requires it.
        needed_by: String,
    },
    /// Loading would exceed the cap on active skills.
    #[error("loading would make {requested} skills active; at most {cap} may be active at once: load fewer, or unload some first")]
    TooManyActive {
        /// The cap.
        cap: usize,
        /// How many would be active.
        requested: usize,
    },
    /// The skill conflicts with an active (or co-loaded) skill.
    #[error("{skill:?} conflicts with active skill {with:?}: unload {with:?} first")]
    Conflict {
        /// The skill being loaded.
        skill: String,
        /// The skill it conflicts with.
        with: String,
    },
    /// A required composition dependency is not available.
    #[error("{skill:?} depends on {dependency:?}, which is not available")]
    DependencyMissing {
        /// The skill being loaded.
        skill: String,
        /// The missing dependency.
        dependency: String,
    },
    /// A required tool of `tool-binding` is not provided by the host.
    #[error("{skill:?} needs the tool {tool:?}, which this host does not provide")]
    ToolBindingMissing {
        /// The skill being loaded.
        skill: String,
        /// The missing tool.
        tool: String,
    },
    /// The skill declares a secret (`requires.secrets`) the host did not grant.
    #[error("{skill:?} needs the secret {name}, which the host has not granted (--secrets-file FILE or --secret {name})")]
    SecretNotGranted {
        /// The skill.
        skill: String,
        /// The secret's name.
        name: String,
    },
    /// A path given to `skills_read` or `skills_run_script` is refused.
    #[error("{path:?}: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// A file is over the read limit.
    #[error("{path:?} is {size} bytes, over the limit of {limit} bytes")]
    FileTooLarge {
        /// The path as given.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A script was not read to pin it at load: the load had read as many bytes of
    /// scripts as one load reads (`SCRIPTS_BUDGET`, 256 MiB), so it
    /// never runs.
    #[error("{path:?} of {skill:?} was not read to pin it when the skill was loaded: that load had read its limit of {limit} bytes of scripts, so this script never runs; load fewer skills at once, or keep a skill's scripts under the limit")]
    ScriptNotPinned {
        /// The skill.
        skill: String,
        /// The script, as given.
        path: String,
        /// The bytes one load reads to pin scripts.
        limit: u64,
    },
    /// The skill's layer, plugin or remote origin is not trusted to run scripts or hooks.
    #[error("{skill:?} comes from {from}, which is not trusted to run scripts or hooks; the host can trust it (skillctl session --trust {trust})")]
    Untrusted {
        /// The skill.
        skill: String,
        /// Where it comes from: `the project layer`, `the untrusted origin mcp:tools`.
        from: String,
        /// How the host would trust it: a layer, or a remote origin (`url:https://HOST`).
        trust: String,
    },
    /// The skill's `security` manifest says it executes no commands.
    #[error("{0:?} declares `security.executesCommands: false`: its scripts cannot run")]
    ScriptsForbidden(String),
    /// The script could not be started.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// `skills_read` was asked for a file under the skill's `scripts/`: scripts are run,
    /// never read.
    #[error("{path:?} is a script of {skill:?}: scripts are run, not read; run it with skills_run_script")]
    ScriptNotReadable {
        /// The skill.
        skill: String,
        /// The path as given.
        path: String,
    },
    /// The skill comes from a source that is not on disk (compiled into the host, held in
    /// memory, a remote index or server): its files can be read, but there is no file to run.
    #[error("{skill:?} comes from a source that is not on disk (compiled into the host, held in memory, or a remote index or server), so its script {path:?} cannot run; its references and assets can still be read")]
    NotOnDisk {
        /// The skill.
        skill: String,
        /// The path as given.
        path: String,
    },
    /// A script's bytes changed since its skill was loaded.
    #[error("{path:?} of {skill:?} changed since the skill was loaded, so it is not run; load the skill again (skills_load) to pin the new version")]
    ScriptChanged {
        /// The skill.
        skill: String,
        /// The path as given.
        path: String,
    },
    /// A URL root registered over the protocol could not be opened: a URL that is not
    /// `https://` (or `http://` on loopback), an index that cannot be read or is refused,
    /// or a host that reads no URL roots.
    #[error("{url}: {source}")]
    RemoteRoot {
        /// The root as given.
        url: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An active skill's `allowed-tools` does not allow this runtime tool call.
    #[error("{0}")]
    ToolNotAllowed(String),
    /// The skill says `disable-model-invocation: true` (or Codex's
    /// `allow_implicit_invocation: false`): only the host activates it, on a user's request.
    #[error("{0:?} is invoked by the user, not the model (disable-model-invocation): the host activates it on a user's request (host_activate)")]
    ModelInvocationDisabled(String),
    /// An active skill's `SKILL.md` changed on disk since it was loaded: the loaded version's
    /// rules are in force, and the file is not served beside them.
    #[error("the SKILL.md of {skill:?} changed since it was loaded: the version loaded is the one in force (its instructions came with the load); once the index has read the edit (at once with the watcher, otherwise after the host's reload), load it again to read and enforce the new one")]
    SkillChanged {
        /// The skill.
        skill: String,
    },
    /// A file of an active skill whose source states its files (an MCP server's entry) no
    /// longer reads as the entry held at its load stated it: refused, not served beside
    /// the loaded version.
    #[error("{path:?} of {skill:?} changed since the skill was loaded (its server's entry for it changed): only the files of the entry held at the load are served, as they were then; load the skill again to read the new version")]
    EntryChanged {
        /// The skill.
        skill: String,
        /// The file, relative to the skill folder.
        path: String,
    },
    /// A skill's `SKILL.md` changed since the index read it, and what it loads with (its
    /// dependencies, the tools it binds) changed with it: the load was planned from the
    /// version the index holds, so the version read now is not activated.
    #[error("the SKILL.md of {skill:?} changed since the index read it, and its dependencies or tool bindings with it: once the index has read the edit (at once with the watcher, otherwise after the host's reload), load it again")]
    ChangedSinceIndexed {
        /// The skill.
        skill: String,
    },
    /// A skill's `SKILL.md` changed while a file of it was being read for a session that
    /// had not loaded it: what was read is not served.
    #[error("the SKILL.md of {skill:?} changed while it was being read: ask again")]
    ChangedDuringRead {
        /// The skill.
        skill: String,
    },
    /// A skill of the same name from another layer is active: one name, one active skill.
    #[error("{active} is active, and {requested} has the same name: unload {active} first (one active skill of a name)")]
    NameActive {
        /// The active skill, qualified.
        active: String,
        /// The skill asked for, qualified.
        requested: String,
    },
    /// The host activated this skill for the task; the model cannot unload or replace it.
    #[error("{0:?} was activated by the host for this task and stays active until the task ends")]
    PinnedByHost(String),
    /// The audit sink could not record the event, so the call was refused.
    #[error("the audit log cannot be written, so the call is refused: {0}")]
    Audit(#[source] std::io::Error),
    /// The tool input is malformed.
    #[error("invalid input: {0}")]
    BadInput(String),
    /// No runtime tool has this name.
    #[error("no runtime tool named {0:?}")]
    UnknownTool(String),
    /// The index refused (a plugin id, a skill whose files cannot be read).
    #[error(transparent)]
    Index(IndexError),
}

impl From<IndexError> for ExecError {
    fn from(e: IndexError) -> ExecError {
        match e {
            e @ (IndexError::NotFound { .. } | IndexError::Contested { .. }) => {
                ExecError::NotFound(e)
            }
            other => ExecError::Index(other),
        }
    }
}

impl ExecError {
    /// The refusal of `record`'s scripts and hooks: named by its remote origin when it has
    /// one, else by its layer.
    pub(crate) fn untrusted(record: &skills_model::SkillRecord) -> ExecError {
        let (from, trust) = match &record.remote {
            Some(origin) => (format!("the untrusted origin {origin}"), origin.to_string()),
            None => (
                format!("the {} layer", record.layer),
                record.layer.to_string(),
            ),
        };
        ExecError::Untrusted {
            skill: record.name.to_string(),
            from,
            trust,
        }
    }

    /// `name` is not found, with no suggestion: the answer for a skill this session may
    /// not see, the same as for one that does not exist.
    pub(crate) fn not_found(name: impl Into<String>) -> ExecError {
        ExecError::NotFound(IndexError::NotFound {
            name: name.into(),
            suggestion: None,
        })
    }

    /// Every code a request can answer with, the index's included (PROTOCOL.md documents
    /// each; a test holds the two equal).
    pub const CODES: [&'static str; 26] = [
        "SKILL_BAD_REQUEST",
        "SKILL_BAD_INPUT",
        "SKILL_UNKNOWN_TOOL",
        "SKILL_NOT_FOUND",
        "SKILL_NOT_ACTIVE",
        "SKILL_REQUIRED_BY_ACTIVE",
        "SKILL_TOO_MANY_ACTIVE",
        "SKILL_CONFLICT",
        "SKILL_DEPENDENCY_MISSING",
        "SKILL_TOOL_BINDING_MISSING",
        "SKILL_PATH_INVALID",
        "SKILL_FILE_TOO_LARGE",
        "SKILL_UNTRUSTED",
        "SKILL_SCRIPTS_FORBIDDEN",
        "SKILL_SCRIPT_FAILED",
        "SKILL_SCRIPT_NOT_READABLE",
        "SKILL_SCRIPT_CHANGED",
        "SKILL_SCRIPT_NOT_ON_DISK",
        "SKILL_SECRET_NOT_GRANTED",
        "SKILL_PINNED_BY_HOST",
        "SKILL_MODEL_INVOCATION_DISABLED",
        "SKILL_TOOL_NOT_ALLOWED",
        "SKILL_AUDIT_FAILED",
        "SKILL_PLUGIN_INVALID",
        "SKILL_LOAD_FAILED",
        "SKILL_WATCH_FAILED",
    ];

    /// A stable, upper-case code.
    pub fn code(&self) -> &'static str {
        match self {
            ExecError::NotFound(_) => "SKILL_NOT_FOUND",
            ExecError::NotActive(_) => "SKILL_NOT_ACTIVE",
            ExecError::RequiredByActive { .. } => "SKILL_REQUIRED_BY_ACTIVE",
            ExecError::TooManyActive { .. } => "SKILL_TOO_MANY_ACTIVE",
            ExecError::Conflict { .. } => "SKILL_CONFLICT",
            ExecError::DependencyMissing { .. } => "SKILL_DEPENDENCY_MISSING",
            ExecError::ToolBindingMissing { .. } => "SKILL_TOOL_BINDING_MISSING",
            ExecError::InvalidPath { .. } => "SKILL_PATH_INVALID",
            ExecError::FileTooLarge { .. } | ExecError::ScriptNotPinned { .. } => {
                "SKILL_FILE_TOO_LARGE"
            }
            ExecError::Untrusted { .. } => "SKILL_UNTRUSTED",
            ExecError::ScriptsForbidden(_) => "SKILL_SCRIPTS_FORBIDDEN",
            // A refused variable is the caller's input, not the script's failure.
            ExecError::Script(ScriptError::Environment { .. }) => "SKILL_BAD_INPUT",
            ExecError::Script(_) => "SKILL_SCRIPT_FAILED",
            ExecError::ScriptNotReadable { .. } => "SKILL_SCRIPT_NOT_READABLE",
            ExecError::ScriptChanged { .. } => "SKILL_SCRIPT_CHANGED",
            ExecError::NotOnDisk { .. } => "SKILL_SCRIPT_NOT_ON_DISK",
            ExecError::SecretNotGranted { .. } => "SKILL_SECRET_NOT_GRANTED",
            ExecError::PinnedByHost(_) => "SKILL_PINNED_BY_HOST",
            ExecError::ModelInvocationDisabled(_) => "SKILL_MODEL_INVOCATION_DISABLED",
            ExecError::NameActive { .. } => "SKILL_NAME_ACTIVE",
            ExecError::SkillChanged { .. }
            | ExecError::EntryChanged { .. }
            | ExecError::ChangedSinceIndexed { .. }
            | ExecError::ChangedDuringRead { .. } => "SKILL_CHANGED",
            ExecError::ToolNotAllowed(_) => "SKILL_TOOL_NOT_ALLOWED",
            ExecError::RemoteRoot { .. } => "SKILL_REMOTE_ROOT_FAILED",
            ExecError::Audit(_) => "SKILL_AUDIT_FAILED",
            ExecError::BadInput(_) => "SKILL_BAD_INPUT",
            ExecError::UnknownTool(_) => "SKILL_UNKNOWN_TOOL",
            ExecError::Index(e) => e.code(),
        }
    }
}
