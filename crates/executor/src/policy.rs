//! The host's policy: which layers may run scripts, how many skills may be active, how
//! instructions reach the model, and the limits of reads and scripts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use skills_model::{Layer, RemoteOrigin, SkillRecord};
use skills_policy::{AllowedToolsMode, DefaultDecision, PathAccess, PATH_TOOLS};

/// How a loaded skill's instructions reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// In the `skills_load` result (with `base_path`).
    ToolResult,
    /// In the top-level instructions (`Session::instructions`), rebuilt every turn.
    TopLevel,
}

/// Whether host write tools may write inside skill folders while a session is live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillWrites {
    /// Refused, in every layer, active or not (the default): the model cannot plant code
    /// a trusted skill later runs.
    Refused,
    /// Allowed, for authoring (`--allow-skill-writes`); sessions audit it as
    /// `policy_override`.
    Allowed,
}

/// Whether MCP's skills extension serves skills with scripts (`skillctl mcp
/// --serve-scripts`): a served skill's manifest is complete, so a skill with `scripts/` is
/// served whole or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptServing {
    /// A skill with scripts is not served (the default): scripts are run, not read.
    Withheld,
    /// A skill of a layer trusted to run scripts is served whole, its scripts readable as
    /// resources; other skills with scripts are still withheld.
    TrustedLayers,
}

/// The host's policy. Build one with [`Policy::builder`].
#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) trusted: Vec<Layer>,
    /// Plugins trusted by id, and whether plugins registered over the wire are trusted as
    /// a layer (`--trust plugin` given explicitly).
    pub(crate) trusted_plugins: Vec<String>,
    pub(crate) registered_plugins_trusted: bool,
    /// Remote origins trusted to run scripts and hooks (`--trust url:...`, `mcp:...`).
    pub(crate) trusted_origins: Vec<RemoteOrigin>,
    /// Lowercased names of the host's tools that run code (`Bash` always): denied while a
    /// skill of an untrusted remote origin is active.
    pub(crate) code_execution_tools: Vec<String>,
    pub(crate) max_active: usize,
    pub(crate) delivery: Delivery,
    pub(crate) read_limit: u64,
    pub(crate) narrow_reads: bool,
    pub(crate) script_timeout: Duration,
    pub(crate) output_limit: usize,
    pub(crate) workdirs: Vec<PathBuf>,
    pub(crate) host_tools: Option<Vec<String>>,
    pub(crate) default_decision: DefaultDecision,
    pub(crate) allowed_tools_mode: AllowedToolsMode,
    /// Lowercased tool name → the input fields that hold its primary argument, in order.
    pub(crate) primary_args: HashMap<String, Vec<String>>,
    /// Lowercased path tool name → what it does and the input fields that hold its paths.
    pub(crate) path_tools: HashMap<String, PathTool>,
    /// The host's working folder: the path of a path tool whose optional path is absent.
    pub(crate) working_dir: Option<PathBuf>,
    pub(crate) skill_writes: SkillWrites,
    pub(crate) script_serving: ScriptServing,
    /// Environment variable names any script may receive from a call.
    pub(crate) script_env: Vec<String>,
    /// The executable that supervises scripts ([`crate::supervise`]).
    pub(crate) supervisor: Option<PathBuf>,
    /// Secrets granted to skills' scripts (`--secrets-file`, `--secret`).
    pub(crate) secrets: crate::Secrets,
    /// Whether skills whose needs are unmet here are offered to the model anyway.
    pub(crate) unavailable: Unavailable,
}

/// What a session does with a skill whose needs (`requires:` and the conventions read into
/// it) are not met here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// Kept from every surface the model sees (the default); the host and operator still
    /// see why (`list`, `show`, `doctor`, `skills_unavailable`).
    Hidden,
    /// Offered anyway, with a note in its listing that it may not work here.
    Offered,
}

/// A path tool as the policy declares it.
#[derive(Debug, Clone)]
pub(crate) struct PathTool {
    pub(crate) access: PathAccess,
    pub(crate) fields: Vec<String>,
    /// Fields holding a pattern the tool matches below its path (Glob's `pattern`): one
    /// that climbs out of the path (`..`) or names its own root (`/...`, `~...`) cannot be
    /// judged by the path alone.
    pub(crate) patterns: Vec<String>,
}

/// The layers trusted by default: all but `project`.
const DEFAULT_TRUSTED: [Layer; 3] = [Layer::Enterprise, Layer::Personal, Layer::Plugin];

impl Default for Policy {
    fn default() -> Policy {
        Policy::builder().build()
    }
}

/// Configures a [`Policy`].
#[derive(Debug, Clone)]
pub struct PolicyBuilder {
    policy: Policy,
}

impl Policy {
    /// The defaults: every layer but `project` trusted, 8 active skills, instructions in
    /// tool results, reads up to 200,000 bytes, scripts for 60 s with 1 MiB of output each
    /// way, calls allowed when no skill restricts them, and `Bash` → `command`,
    /// `Read`/`Write`/`Edit` → `file_path` or `path` as primary arguments.
    pub fn builder() -> PolicyBuilder {
        let mut primary_args = HashMap::new();
        primary_args.insert("bash".to_owned(), vec!["command".to_owned()]);
        let path_tools = PATH_TOOLS
            .iter()
            .map(|(tool, access, fields, patterns)| {
                (
                    (*tool).to_owned(),
                    PathTool {
                        access: *access,
                        fields: fields.iter().map(|f| (*f).to_owned()).collect(),
                        patterns: patterns.iter().map(|f| (*f).to_owned()).collect(),
                    },
                )
            })
            .collect();
        PolicyBuilder {
            policy: Policy {
                trusted: DEFAULT_TRUSTED.to_vec(),
                trusted_plugins: Vec::new(),
                registered_plugins_trusted: false,
                trusted_origins: Vec::new(),
                code_execution_tools: vec!["bash".to_owned()],
                max_active: 8,
                delivery: Delivery::ToolResult,
                read_limit: 200_000,
                narrow_reads: false,
                script_timeout: Duration::from_secs(60),
                output_limit: 1 << 20,
                workdirs: Vec::new(),
                host_tools: None,
                default_decision: DefaultDecision::Allow,
                allowed_tools_mode: AllowedToolsMode::Restrict,
                primary_args,
                path_tools,
                working_dir: None,
                skill_writes: SkillWrites::Refused,
                script_serving: ScriptServing::Withheld,
                script_env: Vec::new(),
                supervisor: None,
                secrets: crate::Secrets::default(),
                unavailable: Unavailable::Hidden,
            },
        }
    }

    /// The options in force that loosen the defaults, as `skillctl` spells them (`--trust
    /// project`, `--trust plugin`, `--trust plugin:ID`, `--allow-skill-writes`,
    /// `--allowed-tools-mode preapprove`): what a session records as `policy_override`
    /// when it starts ([`crate::Session::audit_policy_overrides`]).
    pub fn overrides(&self) -> Vec<String> {
        let mut options: Vec<String> = self
            .trusted
            .iter()
            .filter(|layer| !DEFAULT_TRUSTED.contains(layer))
            .map(|layer| format!("--trust {layer}"))
            .collect();
        if self.registered_plugins_trusted {
            options.push("--trust plugin".to_owned());
        }
        options.extend(
            self.trusted_plugins
                .iter()
                .map(|id| format!("--trust plugin:{id}")),
        );
        options.extend(
            self.trusted_origins
                .iter()
                .map(|origin| format!("--trust {origin}")),
        );
        if self.skill_writes == SkillWrites::Allowed {
            options.push("--allow-skill-writes".to_owned());
        }
        if self.allowed_tools_mode == AllowedToolsMode::Preapprove {
            options.push("--allowed-tools-mode preapprove".to_owned());
        }
        if self.unavailable == Unavailable::Offered {
            options.push("--offer-unavailable".to_owned());
        }
        if self.script_serving == ScriptServing::TrustedLayers {
            options.push("--serve-scripts".to_owned());
        }
        options
    }

    /// The names of the secrets granted (never their values).
    pub fn secret_names(&self) -> Vec<String> {
        self.secrets.names().map(str::to_owned).collect()
    }

    /// Whether MCP's skills extension may serve trusted skills with their scripts.
    pub fn script_serving(&self) -> ScriptServing {
        self.script_serving
    }

    /// Whether skills of `layer` may run scripts and hooks.
    pub fn trusts(&self, layer: Layer) -> bool {
        self.trusted.contains(&layer)
    }

    /// Whether a skill may run scripts and hooks. A skill of a remote origin is trusted
    /// only when the host trusts that origin, whatever its layer or plugin; a plugin
    /// registered over the protocol (`origin`) only when the host trusts it by id or trusts
    /// the plugin layer explicitly; any other skill by its plugin id or its layer.
    pub(crate) fn trusts_skill(&self, record: &SkillRecord, origin: crate::PluginOrigin) -> bool {
        if let Some(remote) = &record.remote {
            return self.trusts_origin(remote);
        }
        let by_id = record
            .plugin
            .as_deref()
            .is_some_and(|id| self.trusted_plugins.iter().any(|t| t == id));
        match origin {
            crate::PluginOrigin::Protocol => by_id || self.registered_plugins_trusted,
            crate::PluginOrigin::Host => by_id || self.trusts(record.layer),
        }
    }

    /// Whether the host trusts a remote origin (`--trust url:https://HOST`, `mcp:LABEL`).
    pub fn trusts_origin(&self, origin: &RemoteOrigin) -> bool {
        self.trusted_origins.contains(origin)
    }

    /// Whether `tool` is one of the host's code-execution tools (`Bash`, and those the host
    /// declares), compared without case.
    pub(crate) fn runs_code(&self, tool: &str) -> bool {
        self.code_execution_tools
            .iter()
            .any(|t| t.eq_ignore_ascii_case(tool))
    }
}

impl PolicyBuilder {
    /// Trusts a layer to run scripts and hooks. Trusting [`Layer::Plugin`] explicitly also
    /// trusts plugins registered over the protocol.
    pub fn trust(mut self, layer: Layer) -> PolicyBuilder {
        if !self.policy.trusted.contains(&layer) {
            self.policy.trusted.push(layer);
        }
        if layer == Layer::Plugin {
            self.policy.registered_plugins_trusted = true;
        }
        self
    }

    /// Whether MCP's skills extension serves a trusted layer's skills whole, scripts
    /// included ([`ScriptServing`]; audited as `policy_override` `--serve-scripts`).
    pub fn script_serving(mut self, serving: ScriptServing) -> PolicyBuilder {
        self.policy.script_serving = serving;
        self
    }

    /// Trusts a remote origin (a well-known index's `https://HOST`, an MCP server's label):
    /// its skills' scripts and hooks may run, and the host's code-execution tools stay
    /// open while one is active. Remote skills are trusted by nothing else.
    pub fn trust_origin(mut self, origin: RemoteOrigin) -> PolicyBuilder {
        if !self.policy.trusted_origins.contains(&origin) {
            self.policy.trusted_origins.push(origin);
        }
        self
    }

    /// Declares one of the host's tools as running code (as `Bash` does, always): while a
    /// skill of an untrusted remote origin is active, `check_tool` denies it.
    pub fn code_execution_tool(mut self, tool: &str) -> PolicyBuilder {
        let key = tool.to_ascii_lowercase();
        if !self.policy.code_execution_tools.contains(&key) {
            self.policy.code_execution_tools.push(key);
        }
        self
    }

    /// Trusts one plugin, by id, to run scripts and hooks (however it was registered).
    pub fn trust_plugin(mut self, id: impl Into<String>) -> PolicyBuilder {
        self.policy.trusted_plugins.push(id.into());
        self
    }

    /// Withdraws trust from a layer.
    pub fn distrust(mut self, layer: Layer) -> PolicyBuilder {
        self.policy.trusted.retain(|l| *l != layer);
        self
    }

    /// The cap on active skills per session (at least 1).
    pub fn max_active(mut self, n: usize) -> PolicyBuilder {
        self.policy.max_active = n.max(1);
        self
    }

    /// How instructions reach the model.
    pub fn delivery(mut self, delivery: Delivery) -> PolicyBuilder {
        self.policy.delivery = delivery;
        self
    }

    /// The largest file `skills_read` serves.
    pub fn read_limit(mut self, bytes: u64) -> PolicyBuilder {
        self.policy.read_limit = bytes;
        self
    }

    /// Serve only files directly under `scripts/`, `references/` and `assets/`.
    pub fn narrow_reads(mut self, yes: bool) -> PolicyBuilder {
        self.policy.narrow_reads = yes;
        self
    }

    /// The default script timeout.
    pub fn script_timeout(mut self, timeout: Duration) -> PolicyBuilder {
        self.policy.script_timeout = timeout;
        self
    }

    /// The cap on each of a script's stdout and stderr.
    pub fn output_limit(mut self, bytes: usize) -> PolicyBuilder {
        self.policy.output_limit = bytes;
        self
    }

    /// A folder outside the skills where scripts may run.
    pub fn allow_workdir(mut self, dir: impl Into<PathBuf>) -> PolicyBuilder {
        self.policy.workdirs.push(dir.into());
        self
    }

    /// The tools this host provides (for `tool-binding`, Hermes' `requires_toolsets`,
    /// Codex's `dependencies.tools`); unset means "not checked".
    pub fn host_tools<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tools: I,
    ) -> PolicyBuilder {
        self.policy.host_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// What happens to a call when no active skill restricts tools (and, in
    /// [`AllowedToolsMode::Preapprove`], to a call no active skill pre-approves).
    pub fn default_decision(mut self, decision: DefaultDecision) -> PolicyBuilder {
        self.policy.default_decision = decision;
        self
    }

    /// What `allowed-tools` means: a restriction (the default) or Claude Code's
    /// pre-approval.
    pub fn allowed_tools_mode(mut self, mode: AllowedToolsMode) -> PolicyBuilder {
        self.policy.allowed_tools_mode = mode;
        self
    }

    /// Declares the input field that holds a tool's primary argument (what `Tool(...)`
    /// specifiers match). Declaring one for a built-in path tool (`Grep` → `pattern`, say)
    /// makes it a plain tool: its specifiers then match that field, not a path.
    pub fn primary_arg(mut self, tool: &str, field: &str) -> PolicyBuilder {
        let tool = tool.to_ascii_lowercase();
        self.policy.path_tools.remove(&tool);
        self.policy
            .primary_args
            .insert(tool, vec![field.to_owned()]);
        self
    }

    /// Declares a host tool whose `field` holds a path: every path rule and protection
    /// applies to it, as to the built-in Read, Write, Edit, MultiEdit, NotebookEdit, Grep,
    /// Glob and LS. A declared tool is taken to write (the stricter reading). Repeat to
    /// declare several fields.
    pub fn path_tool(mut self, tool: &str, field: &str) -> PolicyBuilder {
        let entry = self
            .policy
            .path_tools
            .entry(tool.to_ascii_lowercase())
            .or_insert_with(|| PathTool {
                access: PathAccess::Write,
                fields: Vec::new(),
                patterns: Vec::new(),
            });
        if !entry.fields.iter().any(|f| f == field) {
            entry.fields.push(field.to_owned());
        }
        self
    }

    /// The host's working folder: a path tool whose optional path is absent (Grep, Glob
    /// without `path`) is judged as this folder. Unset, such a call is denied under a path
    /// rule.
    pub fn working_dir(mut self, dir: impl Into<PathBuf>) -> PolicyBuilder {
        self.policy.working_dir = Some(dir.into());
        self
    }

    /// Allows a call to pass the environment variable `name` to any script (beyond what
    /// each skill declares in `security.scriptEnv`). Names an interpreter, the shell or
    /// the loader reads as code, options or a search path stay refused.
    pub fn allow_script_env(mut self, name: impl Into<String>) -> PolicyBuilder {
        self.policy.script_env.push(name.into());
        self
    }

    /// The executable that supervises every script and hook: called with
    /// [`crate::SUPERVISE_ARG`] first, it must run [`crate::supervise`] (`skillctl` does,
    /// and so does the `skills-supervise` binary). With one, every descendant of a script
    /// dies with it on Linux, those that left its process group included.
    pub fn script_supervisor(mut self, executable: impl Into<PathBuf>) -> PolicyBuilder {
        self.policy.supervisor = Some(executable.into());
        self
    }

    /// Whether host write tools may write inside skill folders (default: refused).
    pub fn skill_writes(mut self, writes: SkillWrites) -> PolicyBuilder {
        self.policy.skill_writes = writes;
        self
    }

    /// Grants the secret `name` to the scripts of trusted skills that declare it in
    /// `requires.secrets`. Refused: a name the environment filter refuses, a value shorter
    /// than 8 bytes or holding NUL.
    pub fn grant_secret(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<PolicyBuilder, crate::SecretError> {
        self.policy.secrets.grant(name.into(), value.into())?;
        Ok(self)
    }

    /// What sessions do with skills whose needs are unmet here (default: hidden).
    pub fn unavailable(mut self, unavailable: Unavailable) -> PolicyBuilder {
        self.policy.unavailable = unavailable;
        self
    }

    /// The policy.
    pub fn build(self) -> Policy {
        self.policy
    }
}
