//! The typed values the session's operations return. Each serialises to the JSON the
//! protocol layer sends and has a JSON Schema (`schemars`), so the wire format and its
//! documentation come from one definition.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// One skill on the stack, as a load receipt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ActiveSkill {
    /// The bare name.
    pub name: String,
    /// `layer:name`, or `plugin-id:name`.
    pub qualified_name: String,
    /// The absolute path of its `SKILL.md` (its URL, for a skill of a URL root).
    pub location: String,
    /// Its remote origin (`url:https://HOST`, `mcp:LABEL`), for a skill of a remote source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The skill's folder (relative paths in its instructions start here).
    pub root_dir: String,
    /// `sha256:<hex>` of the `SKILL.md` bytes pinned at load.
    pub digest: String,
    /// The frontmatter fields that are set (the name left out; the description included),
    /// each under the key the file writes it with (`allowed-tools`, `executesCommands`),
    /// mappings as objects.
    pub properties: Map<String, Value>,
    /// Whether the host activated it for the task (`host_activate`): the model cannot
    /// unload it.
    #[serde(skip_serializing_if = "is_false")]
    pub pinned_by_host: bool,
    /// The skill's folder, with the body (only for skills this call activated, when
    /// instructions are delivered in tool results).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_path: Option<String>,
    /// The instructions (see `base_path`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The skill as the model is given it (see `base_path`): the agentskills.io wrapped
    /// form, `<skill_content name="...">` holding the body, a `Skill directory:` line and a
    /// `<skill_resources>` list of the skill's files (named, not read; at most 100, then a
    /// line saying the listing is incomplete). A `<` in the body that would open or close
    /// `skill_content` or `skill_resources` is written `&lt;`; nothing else is escaped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_content: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What `skills_load` and `host_activate` return.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoadReceipt {
    /// The stack after the call, bottom first.
    pub active_skills: Vec<ActiveSkill>,
    /// Advice (an optional tool the host does not provide, an allowed-tools that could not
    /// be read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The hooks that ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// The skills the host pinned that a model's replace kept in force (they stay until
    /// the task ends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_pinned: Vec<String>,
}

/// What `skills_unload` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnloadReceipt {
    /// The skills deactivated, top of the stack first.
    pub unloaded: Vec<String>,
    /// The names still active, bottom first.
    pub active_skills: Vec<String>,
    /// The hooks that ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// The names given that stand for no active skill (nothing to remove).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_active: Vec<String>,
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookStage {
    /// At activation (`hooks.pre`).
    Pre,
    /// At deactivation (`hooks.post`).
    Post,
}

/// One hook's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HookRun {
    /// The hook's path, relative to the skill folder.
    pub hook: String,
    /// When it ran.
    pub stage: HookStage,
    /// Its exit code (`null` when killed by a signal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the timeout killed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// Why it could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a file's content is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// UTF-8 text.
    Text,
    /// Standard base64 of the bytes (the file is not UTF-8).
    Base64,
}

/// What `skills_read` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileContent {
    /// The path as asked for.
    pub path: String,
    /// How `content` is encoded.
    pub encoding: Encoding,
    /// The file's size in bytes.
    pub size: usize,
    /// The content.
    pub content: String,
}

/// What `skills_run_script` returns: the script's path and its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ScriptRun {
    /// The script's path, as asked for.
    pub path: String,
    /// What the run produced.
    #[serde(flatten)]
    pub output: crate::ScriptOutput,
}

/// One skill as `skills_list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListedSkill {
    /// The bare name.
    pub name: String,
    /// `layer:name`, or `plugin-id:name`.
    pub qualified_name: String,
    /// What it does and when to use it.
    pub description: String,
    /// `enterprise`, `personal`, `project` or `plugin`.
    pub layer: String,
    /// Its remote origin (`url:https://HOST`, `mcp:LABEL`), for a skill of a remote source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Whether it is on this session's stack.
    pub active: bool,
}

/// What `skills_list` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkillList {
    /// The skills this session may see, sorted by name.
    pub skills: Vec<ListedSkill>,
}

/// What `skills_search` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchResults {
    /// The best matches, best first, at most the limit.
    pub results: Vec<SearchResult>,
    /// How many skills matched in all.
    pub total: usize,
}

/// One match of `skills_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The skill's name.
    pub name: String,
    /// `layer:name`, or `plugin-id:name`.
    pub qualified_name: String,
    /// Its description (with `when_to_use` joined, as listings show it).
    pub description: String,
    /// Its layer.
    pub layer: String,
    /// Its relevance to the query (higher is better; comparable within one answer).
    pub score: f64,
    /// The fields the query matched: `name`, `description`, `when_to_use`, `tags`.
    pub matched: Vec<String>,
    /// With `explain`: each query term this skill matched, in which field, and what it
    /// added to the score (they add up to `score`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<Vec<MatchedTerm>>,
}

/// One query term's part of a result's score (`skills_search` with `explain`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MatchedTerm {
    /// The query's term, as the index holds it (the word's stem: "fill" for "filling").
    pub term: String,
    /// The field it matched: `name`, `description`, `when_to_use` or `tags`.
    pub field: String,
    /// What it added to the score.
    pub contribution: f64,
}

/// What the single-skill `skill` tool returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkillContent {
    /// The skill's name.
    pub name: String,
    /// Its instructions, from the bytes pinned at load: for the `skill` tool the wrapped
    /// form a load receipt's `skill_content` has (`<skill_content name="...">` with the
    /// body, the skill's folder and its `<skill_resources>`); for a prompt (MCP
    /// `prompts/get`) the body alone.
    pub content: String,
    /// Its folder.
    pub base_path: String,
    /// Its `allowed-tools`, one rule an entry.
    pub allowed_tools: Vec<String>,
}

/// `allow` or `deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The call may proceed.
    Allow,
    /// The call must not run.
    Deny,
}

/// What `check_tool` returns.
// Its fields are declared in alphabetical order, the key order a tree gives; the JSON-lines
// transport writes it by hand in that order (`skills-protocol`'s `Output::check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CheckResult {
    /// The decision.
    pub decision: Verdict,
    /// Why.
    pub reason: String,
    /// The rule that decided, as written (absent for a call no rule names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The active skill whose rules decided (absent when none is active or none restricts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
}

/// An active skill whose files changed on disk since it was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Outdated {
    /// Its qualified name.
    pub skill: String,
    /// The digest of the version the session serves and enforces.
    pub pinned: String,
    /// The digest on disk now (absent when the file is gone or unreadable, or when its
    /// qualified name now stands for another skill or one this session may not see).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
}

/// What `instructions` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Instructions {
    /// The top-level instructions for the next model call.
    pub instructions: String,
    /// Active skills that changed on disk; load them again to serve the new version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outdated: Vec<Outdated>,
}

/// What `hello` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Hello {
    /// The protocol version (`"1"`).
    pub protocol: String,
    /// This server.
    pub server: ServerInfo,
    /// What this server can do beyond the version's base (`events`, `watch`, ...).
    pub capabilities: Vec<String>,
}

/// A server's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServerInfo {
    /// `agent-skills`.
    pub name: String,
    /// The crate version.
    pub version: String,
}

/// What `register_plugin` returns, once the new snapshot is published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PluginRegistered {
    /// The plugin id.
    pub id: String,
    /// Its root, absolute.
    pub root: String,
    /// How many skills it brought.
    pub skills: usize,
    /// Advice: its root does not exist (a typo, most likely; it is read once it appears
    /// only when the index watches), or is not a folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What `unregister_plugin` returns, once the new snapshot is published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PluginUnregistered {
    /// The plugin id.
    pub id: String,
    /// How many of its skills left the index.
    pub removed: usize,
}

/// What `skills_unavailable` returns (host only): the skills this session may not be
/// offered because their needs are unmet here, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnavailableSkills {
    /// The skills, in name order.
    pub skills: Vec<UnavailableSkill>,
}

/// One skill whose needs are unmet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnavailableSkill {
    /// Its name.
    pub name: String,
    /// `layer:name` or `plugin-id:name`.
    pub qualified_name: String,
    /// Why: each need not met here.
    pub unavailable: Vec<String>,
}

/// What `reload` returns, once the new snapshot is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Reloaded {
    /// The generation of the new snapshot.
    pub generation: u64,
}
