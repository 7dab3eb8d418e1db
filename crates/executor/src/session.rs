//! The `Session`: one agent's conversation over an [`Executor`](crate::Executor), and the
//! public face of every operation. Each public method is one line calling into the module
//! that does the work: the stack in `stack.rs`, file reads in `files.rs`, scripts and hooks
//! in `run.rs`, decisions in `check.rs`, search in `search.rs`, and what they all share
//! (the audit events, what the session may see, what changed on disk) in `state.rs`. Those
//! modules work on the `SessionState` this type wraps, and none of them names `Session`.
//! Their layers, each using only those below it (by path or by method): `state.rs` and
//! `active.rs`; `check.rs`, `search.rs`, `files.rs`; `run.rs`; `stack.rs` (its loads and
//! unloads run hooks).

use std::sync::Arc;

use serde_json::Value;
use skills_model::{Skill, SkillFile, SkillRecord};

use crate::state::SessionState;
use crate::{
    Decision, ExecError, FileContent, HeldDecisions, Instructions, LoadMode, LoadReceipt, Outdated,
    ScriptCall, ScriptRun, SearchQuery, SearchResults, SessionContext, SkillContent, SkillList,
    TaskGuard, UnloadReceipt,
};

impl crate::Executor {
    /// Opens a session.
    pub fn session(&self, context: SessionContext) -> Session {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = context.id.clone().unwrap_or_else(|| {
            format!(
                "session-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            )
        });
        Session {
            state: SessionState::new(Arc::clone(self.inner()), id, context),
        }
    }
}

/// One agent's conversation: a stack of active skills, most recent last.
#[derive(Debug)]
pub struct Session {
    state: SessionState,
}

impl Session {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.state.id
    }

    /// The context.
    pub fn context(&self) -> &SessionContext {
        &self.state.context
    }

    /// Rescans every root (`reload`) and returns once the new snapshot is published.
    pub fn reload(&self) -> crate::Reloaded {
        self.executor().reload()
    }

    // The stack (`stack.rs`).

    /// `skills_load`: activates `names` (and their required composition dependencies) for
    /// the model. Returns the receipt.
    pub fn load(&self, names: &[String], mode: LoadMode) -> Result<LoadReceipt, ExecError> {
        self.state.load(names, mode)
    }

    /// `host_activate`: activates `names` on a user's behalf and pins them for the task:
    /// the model's `skills_load` (replace) and `skills_unload` cannot remove them.
    pub fn host_activate(&self, names: &[String]) -> Result<LoadReceipt, ExecError> {
        self.state.host_activate(names)
    }

    /// `skills_unload`: removes the skills `names` stand for, wherever they are on the
    /// stack; the rest keep their order. A name not active is reported in the receipt, not
    /// refused. Refused: a skill the host pinned, and an unload that would take a required
    /// composition dependency from a skill that stays.
    pub fn unload(&self, names: &[String]) -> Result<UnloadReceipt, ExecError> {
        self.state.unload(names)
    }

    /// Deactivates every skill the model activated (`skills_unload {"all": true}`); the
    /// host's stay.
    pub fn unload_all(&self) -> Result<UnloadReceipt, ExecError> {
        self.state.unload_all()
    }

    /// Ends the task: every skill leaves the stack, the host's included, audited, and their
    /// post hooks run.
    pub fn end_task(&self) -> Result<UnloadReceipt, ExecError> {
        self.state.end_task()
    }

    /// Follows the index: when it has published since the last call, deactivates
    /// (audited) the active skills of plugins that were unregistered. Cheap otherwise.
    pub fn sync(&self) -> Result<(), ExecError> {
        self.state.sync()
    }

    /// Unregisters a plugin registered over the protocol from the executor's index and
    /// deactivates its skills in this session at once (audited). The host's own plugin
    /// roots are its to remove ([`Executor::unregister_plugin`](crate::Executor::unregister_plugin)).
    pub fn unregister_plugin(&self, id: &str) -> Result<crate::PluginUnregistered, ExecError> {
        self.state.unregister_plugin(id)
    }

    /// Registers a plugin root over the protocol (untrusted unless the policy trusts it).
    pub fn register_plugin(
        &self,
        id: &str,
        root: &std::path::Path,
    ) -> Result<crate::PluginRegistered, ExecError> {
        self.state
            .register_plugin(id, crate::PluginRoot::Folder(root))
    }

    /// `register_plugin` with `"server"`: the MCP server the host declared under that
    /// label, as the plugin `id` (untrusted unless the host trusts it); anything but a
    /// declared label is refused (a peer never starts a program).
    pub fn register_plugin_server(
        &self,
        id: &str,
        server: &str,
    ) -> Result<crate::PluginRegistered, ExecError> {
        self.state
            .register_plugin(id, crate::PluginRoot::Server(server))
    }

    /// A guard that deactivates everything when the task ends.
    pub fn task(&self) -> TaskGuard<'_> {
        self.state.task()
    }

    /// `skills_list`: the skills this session may see, and which are active.
    pub fn list(&self) -> SkillList {
        self.state.list()
    }

    /// A skill's instructions for a user's prompt (MCP `prompts/get`), read from its current
    /// `SKILL.md` without activating it; audited as `skill_file_read` with the `via` the
    /// transport names. Skills marked `user-invocable: false` are not offered.
    pub fn instructions_of(&self, name: &str, via: &str) -> Result<SkillContent, ExecError> {
        self.state.instructions_of(name, via)
    }

    /// The instructions of `record` itself, as [`instructions_of`](Session::instructions_of)
    /// gives a name's: for a transport that listed this record as a prompt, since two
    /// skills of one layer can share a qualified name.
    pub fn instructions_of_record(
        &self,
        record: &Arc<SkillRecord>,
        via: &str,
    ) -> Result<SkillContent, ExecError> {
        self.state.instructions_of_record(record, via)
    }

    /// The single-skill `skill` tool: loads `name` (added to the stack) and returns its
    /// pinned instructions, wrapped as `<skill_content>` (the agentskills.io form, as a
    /// load receipt's `skill_content`).
    pub fn skill(&self, name: &str) -> Result<SkillContent, ExecError> {
        self.state.skill(name)
    }

    // File reads (`files.rs`).

    /// `skills_read`: a file of an active skill (a reference, an asset, its `SKILL.md`),
    /// as text or base64. Files under `scripts/` are refused: scripts are run, not read.
    pub fn read(&self, skill: Option<&str>, path: &str) -> Result<FileContent, ExecError> {
        self.state.read(skill, path)
    }

    /// A file of a visible skill, without activating it (MCP resources): `SKILL.md`,
    /// `references/...` or `assets/...`, with the containment and size rules of
    /// [`read`](Session::read); never a script. Audited as `skill_file_read` with the
    /// `via` the transport names (`resources/read`).
    pub fn read_unloaded(
        &self,
        skill: &str,
        path: &str,
        via: &str,
    ) -> Result<FileContent, ExecError> {
        self.state.read_unloaded(skill, path, via)
    }

    /// The complete manifest of `record`'s skill for MCP's skills extension: every file,
    /// each with the digest and size of what [`read_unloaded`](Session::read_unloaded)
    /// returns for it; or why the skill cannot be served whole (scripts not served, a file
    /// outside the served folders or over the read limit, the extension's limits).
    pub fn skill_manifest(
        &self,
        record: &SkillRecord,
    ) -> Result<crate::SkillManifest, crate::ManifestRefusal> {
        self.state.skill_manifest(record)
    }

    /// The files of `skill` that [`read_unloaded`](Session::read_unloaded) serves beside
    /// its `SKILL.md`, as they are now: those its source lists (the one listing rule: no
    /// dot-file, dot-folder or `node_modules`) outside `scripts/`, regular files within
    /// the read limit, and for a skill on disk resolving inside its folder but not into
    /// its `scripts/`. What a client is offered to read (MCP's `resources/list`), so that
    /// nothing is offered that a read refuses; the read still judges what it opens.
    pub fn servable_files(&self, skill: &skills_model::Skill) -> Vec<SkillFile> {
        self.state.servable_files(skill)
    }

    // Scripts (`run.rs`).

    /// `skills_run_script`: runs a file under an active skill's `scripts/`, if its bytes
    /// are the ones pinned when the skill was loaded.
    pub fn run_script(&self, call: &ScriptCall) -> Result<ScriptRun, ExecError> {
        self.state.run_script(call)
    }

    // Decisions on host tool calls (`check.rs`).

    /// The bare decision for a host tool call, without its audit event: for measuring and
    /// for hosts that want to preview a call. A call that will run goes through
    /// [`check_tool`](Session::check_tool), which records the decision.
    pub fn decide(&self, tool: &str, primary_arg: Option<&str>) -> Decision {
        self.state.decide(tool, primary_arg)
    }

    /// Decides a host tool call and audits the decision. `input` is the call's input; its
    /// primary argument is found by the policy (`command` for `Bash`, `file_path` or `path`
    /// for `Read`, `Write`, `Edit`), and when it holds several of those fields each is
    /// decided, the call allowed only if all are. If the audit cannot be written, the call
    /// is denied.
    pub fn check_tool(&self, tool: &str, input: &Value) -> Decision {
        self.state.check_tool(tool, input)
    }

    // Search (`search.rs`).

    /// The least score at which this session's `skills_search` offers its model a skill:
    /// a request none reaches has no skill for it (`skillctl eval triggers`; see
    /// [`skills_index::SearchIndex::offer_threshold`]). Over what the model may see.
    pub fn offer_threshold(&self) -> f32 {
        self.state.offer_threshold()
    }

    /// Searches the skills the model may see (see [`skills_index::SearchIndex`] for the
    /// ranking), best first; audited as `skills_searched`.
    pub fn search(&self, q: &SearchQuery) -> Result<SearchResults, ExecError> {
        self.state.search(q)
    }

    // What every operation shares (`state.rs`): visibility, instructions, what changed on disk,
    // audit holds.

    /// Holds the events of `check_tool` decisions made on this thread until
    /// [`HeldDecisions::release`], which writes them at once. The caller must not let a
    /// held decision take effect (answer it to a host) before `release` returns `Ok`; when
    /// it fails, every decision held since must be refused. Calls on other threads are
    /// not held. Transports that answer a batch of pipelined requests use it
    /// (`skills_protocol::respond_batch`).
    pub fn hold_decisions(&self) -> HeldDecisions<'_> {
        self.state.hold_decisions()
    }

    /// How many decisions this thread has held since [`hold_decisions`](Self::hold_decisions)
    /// (0 when it holds none).
    pub fn held_decisions(&self) -> u64 {
        self.state.held_decisions()
    }

    /// Whether the session's context may see `record` (its `scope`).
    pub fn can_see(&self, record: &SkillRecord) -> bool {
        self.state.can_see(record)
    }

    /// What `record` needs and this machine (or the host's tools) lacks: empty when it
    /// lacks nothing. For the host and the operator only, never for the model.
    pub fn unmet(&self, record: &SkillRecord) -> Vec<skills_model::Unmet> {
        self.state.unmet(record)
    }

    /// Whether the session may see `record` of a snapshot that found its needs
    /// `unavailable` (unmet) or not: how a change event is judged, whose record may be in
    /// no current snapshot.
    pub fn could_see(&self, record: &SkillRecord, unavailable: bool) -> bool {
        self.state.could_see(record, unavailable)
    }

    /// Says which tools the host offers this session's model, in place of the policy's
    /// ([`PolicyBuilder::host_tools`](crate::PolicyBuilder::host_tools)): skills that need
    /// a tool are judged against them from now on.
    pub fn set_host_tools(&self, tools: Vec<String>) {
        self.state.set_host_tools(tools);
    }

    /// The skills this session may not be offered because their needs are unmet here,
    /// and why (host only: `skills_unavailable`).
    pub fn unavailable(&self) -> crate::UnavailableSkills {
        self.state.unavailable()
    }

    /// Whether the model may be offered `record` in this session: its scope admits the
    /// session, and it is not marked `disable-model-invocation`. (The listing and searches
    /// first resolve each name among what the scope admits, then keep what this admits.)
    pub fn offers_model(&self, record: &SkillRecord) -> bool {
        self.state.offers_model(record)
    }

    /// The skills the model may be offered in this session, sorted by name: those its scope
    /// admits, less those marked `disable-model-invocation` (the host still activates
    /// those, with `host_activate`, on a user's request).
    pub fn visible(&self) -> Vec<Arc<SkillRecord>> {
        self.state.visible()
    }

    /// The active skills, bottom of the stack first, each as pinned at its load.
    pub fn active(&self) -> Vec<Arc<Skill>> {
        self.state.active()
    }

    /// The top-level instructions for the next model call: the base block, the available
    /// skills, and (when instructions are delivered at top level) the active skills, from
    /// the bytes pinned when each was loaded. Active skills that changed on disk are listed
    /// in `outdated` (and said in the text).
    pub fn instructions(&self, budget: Option<usize>) -> Instructions {
        self.state.instructions(budget)
    }

    /// The active skills whose `SKILL.md` on disk differs from the bytes pinned at load.
    /// Reads each active skill's file: an edit the index kept its last good record for (one
    /// that no longer parses) leaves the indexed record as it was.
    pub fn outdated(&self) -> Vec<Outdated> {
        self.state.outdated()
    }

    /// The active skills that became outdated since they were last reported (each
    /// reported once per version on disk).
    pub fn newly_outdated(&self) -> Vec<Outdated> {
        self.state.newly_outdated()
    }

    /// The executor this session belongs to.
    pub fn executor(&self) -> crate::Executor {
        self.state.executor()
    }

    /// Records that an option loosening the defaults (`--trust`, `--allow-skill-writes`)
    /// is in force for this session (`policy_override`).
    pub fn audit_policy_override(&self, option: &str) -> Result<(), ExecError> {
        self.state.audit_policy_override(option)
    }

    /// Records every option of the policy that loosens the defaults
    /// ([`Policy::overrides`](crate::Policy::overrides)), one `policy_override` each: the
    /// one place a session's start records them, whatever serves it (`skillctl session`,
    /// `skillctl mcp` over stdio or HTTP). A host calls it before answering the session's
    /// first request; an error means the record could not be written, and the session
    /// must not be served.
    pub fn audit_policy_overrides(&self) -> Result<(), ExecError> {
        self.state.audit_policy_overrides()
    }
}
