//! The frontmatter of a `SKILL.md`: the six specification fields, the extension fields other
//! runtimes define, and every other field kept raw.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::ToolRules;

/// A frontmatter value kept as written, for fields this crate does not type.
///
/// Scalars keep their source text (`1.0` stays `"1.0"`, `no` stays `"no"`); a YAML null is
/// `Null`. Mappings keep their order, and serialise as objects (`{"key": value}`), as they
/// were written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RawValue {
    /// A YAML null (`~`, `null`, or nothing).
    Null,
    /// Any other scalar, as written.
    Scalar(String),
    /// A sequence.
    Seq(Vec<RawValue>),
    /// A mapping, in source order; keys are the source text of scalar keys.
    Map(Vec<(String, RawValue)>),
}

impl Serialize for RawValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RawValue::Null => serializer.serialize_unit(),
            RawValue::Scalar(text) => serializer.serialize_str(text),
            RawValue::Seq(items) => serializer.collect_seq(items),
            RawValue::Map(entries) => serializer.collect_map(entries.iter().map(|(k, v)| (k, v))),
        }
    }
}

/// `metadata`: string keys to string values, sorted by key, a later duplicate replacing an
/// earlier one. A sorted vector: most skills have none or a few entries, and a map's node
/// would cost hundreds of bytes each.
///
/// ```
/// let mut m = skills_model::Metadata::default();
/// m.insert("version".into(), "1.0".into());
/// m.insert("author".into(), "me".into());
/// assert_eq!(&m["version"], "1.0");
/// assert_eq!(m.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["author", "version"]);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Metadata(Vec<(String, String)>);

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl Metadata {
    /// Sets `key` to `value`.
    pub fn insert(&mut self, key: String, value: String) {
        match self.0.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
        self.0.shrink_to_fit();
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.0[i].1.as_str())
    }

    /// The entries, sorted by key.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for Metadata {
    type Output = str;

    fn index(&self, key: &str) -> &str {
        self.get(key)
            .unwrap_or_else(|| panic!("no metadata key {key:?}"))
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// How a skill wants its instructions run (`context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode {
    /// In the current conversation.
    Inherit,
    /// In a forked sub-agent.
    Fork,
}

/// Scripts run when a skill is activated (`pre`) and deactivated (`post`); paths relative to
/// the skill folder. Claude Code's form (`PreToolUse`, `Stop`, ... each a list of matchers
/// with commands) is read into [`claude_code`](Hooks::claude_code); an entry of it that
/// names a single script under `scripts/` for an event the executor has is added to `pre`
/// or `post`, and every other entry is kept, typed, and not run.
///
/// It serialises as it was written: `pre` and `post` as the author listed them (not the
/// scripts taken from Claude Code's entries), and each Claude Code event under its own key
/// (`{"SessionStart": [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Hooks {
    /// Run on activation.
    pub pre: Vec<String>,
    /// Run on deactivation.
    pub post: Vec<String>,
    /// Claude Code's hook entries, as written, each with when (if ever) it runs here.
    pub claude_code: Vec<ClaudeHook>,
}

/// One command of a Claude Code hook entry (`hooks: {Event: [{matcher, hooks: [{type,
/// command}]}]}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ClaudeHook {
    /// The event it is written for (`PreToolUse`, `Stop`, `SessionStart`, ...).
    pub event: String,
    /// The tool matcher, for tool events.
    pub matcher: Option<String>,
    /// The command as written.
    pub command: String,
    /// When the executor runs it: `None` when it does not (a tool event, an event the
    /// executor has not, or a command that is not a single script under `scripts/`).
    pub runs_at: Option<HookEvent>,
    /// The script it runs (added to [`Hooks::pre`] or [`Hooks::post`]), when it runs.
    #[serde(skip)]
    pub script: Option<String>,
}

/// One `{matcher, hooks}` entry of a Claude Code hook event, as written.
#[derive(Serialize)]
struct HookGroup<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    matcher: Option<&'a str>,
    hooks: Vec<HookCommand<'a>>,
}

/// One command of a [`HookGroup`].
#[derive(Serialize)]
struct HookCommand<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    command: &'a str,
}

impl Serialize for Hooks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let pre = self.written(&self.pre, HookEvent::Activation);
        if !pre.is_empty() {
            map.serialize_entry("pre", &pre)?;
        }
        let post = self.written(&self.post, HookEvent::Deactivation);
        if !post.is_empty() {
            map.serialize_entry("post", &post)?;
        }
        for (event, groups) in self.claude_events() {
            map.serialize_entry(event, &groups)?;
        }
        map.end()
    }
}

/// The skill lifecycle events the executor runs hooks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookEvent {
    /// When the skill is activated (`pre`; Claude Code's `SessionStart`).
    Activation,
    /// When the skill is deactivated (`post`; Claude Code's `Stop` and `SessionEnd`).
    Deactivation,
}

impl Frontmatter {
    /// Claude Code's `argument-hint`, when there is one.
    pub fn argument_hint(&self) -> Option<&str> {
        self.claude_code.as_deref()?.argument_hint.as_deref()
    }
}

impl Hooks {
    /// The scripts the author listed under `key` (`pre` or `post`): `list` without the
    /// ones taken from Claude Code's entries that run at `at`.
    fn written(&self, list: &[String], at: HookEvent) -> Vec<String> {
        let mut taken: Vec<&str> = self
            .claude_code
            .iter()
            .filter(|h| h.runs_at == Some(at))
            .filter_map(|h| h.script.as_deref())
            .collect();
        let mut written = Vec::new();
        for script in list {
            match taken.iter().position(|t| t == script) {
                Some(i) => {
                    taken.swap_remove(i);
                }
                None => written.push(script.clone()),
            }
        }
        written
    }

    /// Claude Code's entries as written: each event (in order of first appearance) with
    /// its `{matcher, hooks}` groups, a group for each run of one matcher.
    fn claude_events(&self) -> Vec<(&str, Vec<HookGroup<'_>>)> {
        let mut events: Vec<(&str, Vec<HookGroup<'_>>)> = Vec::new();
        let mut last: Option<(&str, Option<&str>)> = None;
        for h in &self.claude_code {
            let i = match events.iter().position(|(e, _)| *e == h.event) {
                Some(i) => i,
                None => {
                    events.push((&h.event, Vec::new()));
                    events.len() - 1
                }
            };
            let command = HookCommand {
                kind: "command",
                command: &h.command,
            };
            let same = last == Some((h.event.as_str(), h.matcher.as_deref()));
            match events[i].1.last_mut() {
                Some(group) if same => group.hooks.push(command),
                _ => events[i].1.push(HookGroup {
                    matcher: h.matcher.as_deref(),
                    hooks: vec![command],
                }),
            }
            last = Some((&h.event, h.matcher.as_deref()));
        }
        events
    }

    /// Whether any hook runs (at activation or deactivation); Claude Code entries that do
    /// not run do not count.
    pub fn runs_any(&self) -> bool {
        !self.pre.is_empty() || !self.post.is_empty()
    }

    /// Whether there is nothing: no hook to run and no Claude Code entry.
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.claude_code.is_empty()
    }
}

/// Where a skill is available. An empty list means "everywhere" for that dimension.
///
/// A `scope` that is present but cannot be read is [`Scope::unreadable`]: it admits no
/// session, so a skill whose scope is unknown is hidden from everyone, never shown to all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Scope {
    /// Agent types that may see the skill.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// Tenants that may see the skill.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tenants: Vec<String>,
    /// Environments (`production`, `staging`, ...) where the skill is available.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<String>,
    /// The `scope` could not be read (a dimension of the wrong shape, an unknown one):
    /// no session may see the skill.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreadable: bool,
}

impl Scope {
    /// The scope of a skill whose `scope` could not be read: it admits no session.
    ///
    /// ```
    /// let scope = skills_model::Scope::unreadable();
    /// assert!(!scope.is_unrestricted());
    /// assert!(!scope.admits(Some("agent"), Some("acme"), Some("production")));
    /// ```
    pub fn unreadable() -> Scope {
        Scope {
            unreadable: true,
            ..Scope::default()
        }
    }

    /// Whether no dimension is restricted (and the scope could be read).
    pub fn is_unrestricted(&self) -> bool {
        !self.unreadable
            && self.agents.is_empty()
            && self.tenants.is_empty()
            && self.environments.is_empty()
    }

    /// Whether a session with this agent, tenant and environment may see the skill. A
    /// restricted dimension needs the session to name a listed value; an unreadable scope
    /// admits no session.
    pub fn admits(
        &self,
        agent: Option<&str>,
        tenant: Option<&str>,
        environment: Option<&str>,
    ) -> bool {
        fn ok(list: &[String], value: Option<&str>) -> bool {
            list.is_empty() || value.is_some_and(|v| list.iter().any(|item| item == v))
        }
        !self.unreadable
            && ok(&self.agents, agent)
            && ok(&self.tenants, tenant)
            && ok(&self.environments, environment)
    }
}

/// skillscraft's `security`: a capability manifest. It serialises under the keys skillscraft
/// writes (`executesCommands`), the fields set only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Security {
    /// Free-form capability names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// `requiresNetwork`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_network: Option<bool>,
    /// `modifiesFiles`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifies_files: Option<bool>,
    /// `executesCommands`: `false` forbids the skill's scripts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executes_commands: Option<bool>,
    /// `fileSystemScope`, such as `skill-directory`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_system_scope: Option<String>,
    /// `scriptEnv`: the environment variables the skill's scripts accept from a call,
    /// beyond those the host allows (names the interpreter or loader reads as code are
    /// refused whatever is declared).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub script_env: Vec<String>,
}

/// One tool a skill needs (`tool-binding.dependencies`); serialised under skillscraft's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDependency {
    /// The tool's name.
    pub tool: String,
    /// Whether the skill cannot work without it (default true).
    pub required: bool,
    /// Why the skill needs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// `minVersion`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_version: Option<String>,
}

/// skillscraft's `tool-binding`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ToolBinding {
    /// The tools the skill needs.
    pub dependencies: Vec<ToolDependency>,
}

/// A skill this skill depends on (`composition.dependencies`); serialised under
/// skillscraft's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillDependency {
    /// `skillName`.
    pub skill_name: String,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the skill works without it.
    pub optional: bool,
}

/// skillscraft's `composition`; serialised under skillscraft's keys, the lists set only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Composition {
    /// Skills loaded before this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<SkillDependency>,
    /// Skills that must not be active at the same time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// `executionOrder`: skill names in the order they should run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub execution_order: Vec<String>,
}

/// One entry of skillscraft's `test-scenarios`: a `name`, a `description` and its `cases`
/// (each a request that should choose this skill: `skillctl eval triggers` runs them).
/// The flat form some authors write (`input`/`prompt`, `expected`/`expect` on the
/// scenario itself) is read too. It serialises as one object: the typed keys that are set,
/// then the others as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TestScenario {
    /// The scenario's name.
    pub name: Option<String>,
    /// What the scenario is about.
    pub description: Option<String>,
    /// The prompt or input given (the flat form).
    pub input: Option<String>,
    /// What should happen (the flat form).
    pub expected: Option<String>,
    /// Its cases.
    pub cases: Vec<ScenarioCase>,
    /// Any other keys, as written.
    pub extra: Vec<(String, RawValue)>,
}

impl Serialize for TestScenario {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in [
            ("name", &self.name),
            ("description", &self.description),
            ("input", &self.input),
            ("expected", &self.expected),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if !self.cases.is_empty() {
            map.serialize_entry("cases", &self.cases)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// One case of a [`TestScenario`]: `name`, `input` (a user's request), `assertions` and
/// `expectedBehavior`. It serialises under skillscraft's keys, the set ones first, then
/// the others as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ScenarioCase {
    /// The case's name.
    pub name: Option<String>,
    /// The request given.
    pub input: Option<String>,
    /// What must hold of the answer.
    pub assertions: Vec<String>,
    /// `expectedBehavior`: what should happen.
    pub expected_behavior: Option<String>,
    /// Any other keys, as written.
    pub extra: Vec<(String, RawValue)>,
}

impl Serialize for ScenarioCase {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(name) = &self.name {
            map.serialize_entry("name", name)?;
        }
        if let Some(input) = &self.input {
            map.serialize_entry("input", input)?;
        }
        if !self.assertions.is_empty() {
            map.serialize_entry("assertions", &self.assertions)?;
        }
        if let Some(expected) = &self.expected_behavior {
            map.serialize_entry("expectedBehavior", expected)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Everything a `SKILL.md` frontmatter says, read leniently: a field of the wrong shape is
/// left at its default here and reported as a diagnostic by the parser.
///
/// Scalar values keep their source text, so `version: 1.0` reads as `"1.0"`. Text fields
/// are `Box<str>`: the index holds one frontmatter per skill, and a box is a third smaller
/// than a `String`.
///
/// It serialises as its author wrote it: the fields that are set, each under the key it
/// has in the file (`allowed-tools`, `when_to_use`, `argument-hint`; skillscraft's
/// `executesCommands`), mappings as objects, the other fields last, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Frontmatter {
    /// `name`.
    pub name: Option<Box<str>>,
    /// `description`.
    pub description: Option<Box<str>>,
    /// `license`.
    pub license: Option<Box<str>>,
    /// `compatibility`.
    pub compatibility: Option<Box<str>>,
    /// `metadata`: string keys to string values.
    pub metadata: Metadata,
    /// `allowed-tools` (experimental in the spec): the tools the skill may use.
    pub allowed_tools: Option<ToolRules>,
    /// `disallowed-tools`: tools denied while the skill is active.
    pub disallowed_tools: Option<ToolRules>,
    /// `model`: the model the skill asks for.
    pub model: Option<Box<str>>,
    /// `context`: `inherit` or `fork`.
    pub context: Option<ContextMode>,
    /// `agent`: the sub-agent type to run in.
    pub agent: Option<Box<str>>,
    /// `hooks` (`None` when there are none).
    pub hooks: Option<Box<Hooks>>,
    /// `priority`: breaks ties inside a layer, higher first.
    pub priority: i64,
    /// `tags`.
    pub tags: Vec<String>,
    /// `scope` (`None` when the skill is available everywhere).
    pub scope: Option<Box<Scope>>,
    /// `user-invocable` (Claude Code).
    pub user_invocable: Option<bool>,
    /// `disable-model-invocation` (Claude Code).
    pub disable_model_invocation: Option<bool>,
    /// `when_to_use` (Claude Code).
    pub when_to_use: Option<Box<str>>,
    /// `security` (skillscraft).
    pub security: Option<Box<Security>>,
    /// `tool-binding` (skillscraft).
    pub tool_binding: Option<Box<ToolBinding>>,
    /// `composition` (skillscraft).
    pub composition: Option<Box<Composition>>,
    /// `test-scenarios` (skillscraft).
    pub test_scenarios: Vec<TestScenario>,
    /// Claude Code's rarer fields (`argument-hint`, `arguments`, `effort`, `paths`,
    /// `shell`), `None` when the skill has none.
    pub claude_code: Option<Box<ClaudeCodeFields>>,
    /// Every other field, in source order, as written.
    pub extra: Vec<(String, RawValue)>,
}

impl Serialize for Frontmatter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let text = [
            ("name", &self.name),
            ("description", &self.description),
            ("license", &self.license),
            ("compatibility", &self.compatibility),
        ];
        for (key, value) in text {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if !self.metadata.is_empty() {
            map.serialize_entry("metadata", &self.metadata)?;
        }
        for (key, rules) in [
            ("allowed-tools", &self.allowed_tools),
            ("disallowed-tools", &self.disallowed_tools),
        ] {
            if let Some(rules) = rules {
                map.serialize_entry(key, rules)?;
            }
        }
        self.serialize_extensions(&mut map)?;
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Frontmatter {
    /// The typed extension fields that are set, under their keys in the file.
    fn serialize_extensions<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        for (key, value) in [
            ("model", &self.model),
            ("agent", &self.agent),
            ("when_to_use", &self.when_to_use),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(context) = &self.context {
            map.serialize_entry("context", context)?;
        }
        if let Some(hooks) = self.hooks.as_deref().filter(|h| !h.is_empty()) {
            map.serialize_entry("hooks", hooks)?;
        }
        if self.priority != 0 {
            map.serialize_entry("priority", &self.priority)?;
        }
        if !self.tags.is_empty() {
            map.serialize_entry("tags", &self.tags)?;
        }
        if let Some(scope) = self.scope.as_deref().filter(|s| !s.is_unrestricted()) {
            map.serialize_entry("scope", scope)?;
        }
        for (key, value) in [
            ("user-invocable", &self.user_invocable),
            ("disable-model-invocation", &self.disable_model_invocation),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(security) = &self.security {
            map.serialize_entry("security", security)?;
        }
        if let Some(binding) = &self.tool_binding {
            map.serialize_entry("tool-binding", binding)?;
        }
        if let Some(composition) = &self.composition {
            map.serialize_entry("composition", composition)?;
        }
        if !self.test_scenarios.is_empty() {
            map.serialize_entry("test-scenarios", &self.test_scenarios)?;
        }
        if let Some(cc) = &self.claude_code {
            cc.serialize_fields(map)?;
        }
        Ok(())
    }
}

impl ClaudeCodeFields {
    /// The fields that are set, each under its own key (they are top-level fields in the
    /// file).
    fn serialize_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        if let Some(hint) = &self.argument_hint {
            map.serialize_entry("argument-hint", hint)?;
        }
        if !self.arguments.is_empty() {
            map.serialize_entry("arguments", &self.arguments)?;
        }
        if let Some(effort) = &self.effort {
            map.serialize_entry("effort", effort)?;
        }
        if !self.paths.is_empty() {
            map.serialize_entry("paths", &self.paths)?;
        }
        if let Some(shell) = &self.shell {
            map.serialize_entry("shell", shell)?;
        }
        Ok(())
    }
}

/// Claude Code's rarer frontmatter fields, boxed (most skills have none, and the index keeps
/// one frontmatter per skill). `argument-hint` describes the MCP prompt's argument; the
/// others are read and typed, and the executor does not act on them (they steer Claude
/// Code's own argument substitution, model effort, activation by path and shell), but hosts
/// can.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClaudeCodeFields {
    /// `argument-hint`: what the user types after the skill's name.
    pub argument_hint: Option<Box<str>>,
    /// `arguments`: names of positional arguments (a list, or one space-separated string).
    pub arguments: Vec<String>,
    /// `effort`: `low`, `medium`, `high`, `xhigh` or `max`.
    pub effort: Option<Box<str>>,
    /// `paths`: glob patterns of files the skill is for (a list, or a comma-separated
    /// string).
    pub paths: Vec<String>,
    /// `shell`: `bash` or `powershell`.
    pub shell: Option<Box<str>>,
}

/// The six fields of the Agent Skills specification.
pub const SPEC_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// The extension fields this crate types (beyond the specification's six).
pub const EXTENSION_FIELDS: [&str; 20] = [
    "disallowed-tools",
    "model",
    "context",
    "agent",
    "hooks",
    "priority",
    "tags",
    "scope",
    "argument-hint",
    "user-invocable",
    "disable-model-invocation",
    "when_to_use",
    "security",
    "tool-binding",
    "composition",
    "test-scenarios",
    "arguments",
    "effort",
    "paths",
    "shell",
];

#[cfg(test)]
mod tests {
    use super::{ClaudeHook, HookEvent, Hooks};

    /// Regression (issue 37): hooks serialised as `{pre, post, claude_code: [{event,
    /// runs_at, ...}]}`, keys no author writes, with the scripts taken from Claude Code's
    /// entries in `pre` as if written there. They come out as written: `pre` as listed,
    /// each Claude Code event under its own key, a group for each run of one matcher.
    #[test]
    fn hooks_serialise_as_written() {
        let hook =
            |event: &str, matcher: Option<&str>, command: &str, script: Option<&str>| ClaudeHook {
                event: event.into(),
                matcher: matcher.map(Into::into),
                command: command.into(),
                runs_at: script.map(|_| HookEvent::Activation),
                script: script.map(Into::into),
            };
        let hooks = Hooks {
            pre: vec!["scripts/start.sh".into(), "scripts/own.sh".into()],
            post: Vec::new(),
            claude_code: vec![
                hook(
                    "SessionStart",
                    None,
                    "${CLAUDE_SKILL_DIR}/scripts/start.sh",
                    Some("scripts/start.sh"),
                ),
                hook("PreToolUse", Some("Bash"), "scripts/check.sh", None),
                hook("PreToolUse", Some("Bash"), "echo hi", None),
                hook("PreToolUse", Some("Edit"), "scripts/lint.sh", None),
            ],
        };
        let command = |c: &str| serde_json::json!({"type": "command", "command": c});
        assert_eq!(
            serde_json::to_value(&hooks).unwrap(),
            serde_json::json!({
                "pre": ["scripts/own.sh"],
                "SessionStart": [{"hooks": [command("${CLAUDE_SKILL_DIR}/scripts/start.sh")]}],
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [command("scripts/check.sh"), command("echo hi")]},
                    {"matcher": "Edit", "hooks": [command("scripts/lint.sh")]}
                ]
            })
        );
    }
}
