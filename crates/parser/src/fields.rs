//! Reading the YAML tree into a typed [`Frontmatter`], with the strict rules as diagnostics.
//!
//! One pass serves both readings: every value is kept as leniently as it can be (a scalar of
//! the wrong type keeps its source text, `allowed-tools` may be a list), and every departure
//! from the specification is a diagnostic.

use std::borrow::Cow;

use skills_model::{
    spec_name_problem, Capability, ClaudeCodeFields, ClaudeHook, Composition, ContextMode,
    Diagnostic, Frontmatter, HookEvent, Hooks, Metadata, Os, RawValue, Rule, ScenarioCase, Scope,
    Security, Severity, SkillDependency, TestScenario, ToolBinding, ToolDependency, ToolRules,
    CLAUDE_SKILL_DIR_VAR, EXTENSION_FIELDS, MAX_NAME_LEN, SKILL_DIR_VAR, SPEC_FIELDS,
};

use crate::node::{Kind, Node, ScalarType};

const MAX_DESCRIPTION_LEN: usize = 1024;
const MAX_COMPATIBILITY_LEN: usize = 500;

/// Turns the YAML tree into a frontmatter and diagnostics.
pub(crate) struct FieldReader<'d> {
    pub(crate) diagnostics: &'d mut Vec<Diagnostic>,
    /// Added to YAML line numbers to give file line numbers (the opening `---` is line 1).
    pub(crate) line_offset: u32,
    pub(crate) dir_name: &'d str,
}

/// The shape of a value, for messages.
fn shape(node: &Node<'_>) -> &'static str {
    match &node.kind {
        Kind::Scalar(s) => s.resolve().describe(),
        Kind::Seq(_) => "a list",
        Kind::Map(_) => "a mapping",
    }
}

fn scalar<'n>(node: &'n Node<'_>) -> Option<(&'n str, ScalarType)> {
    match &node.kind {
        Kind::Scalar(s) => Some((s.text.as_ref(), s.resolve())),
        _ => None,
    }
}

/// A non-null scalar's source text.
fn text(node: &Node<'_>) -> Option<String> {
    match scalar(node) {
        Some((_, ScalarType::Null)) | None => None,
        Some((t, _)) => Some(t.to_owned()),
    }
}

/// A scalar (split at commas) or a list of scalars.
pub(crate) fn string_list(node: &Node<'_>) -> Option<Vec<String>> {
    match &node.kind {
        Kind::Scalar(_) => match scalar(node) {
            Some((_, ScalarType::Null)) => Some(Vec::new()),
            Some((t, _)) => Some(
                t.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            None => None,
        },
        Kind::Seq(items) => items.iter().map(text).collect(),
        Kind::Map(_) => None,
    }
}

/// A case's `assertions`: one string, or a list of strings (not split at commas: an
/// assertion is a sentence).
fn assertions(node: &Node<'_>) -> Option<Vec<String>> {
    match &node.kind {
        Kind::Scalar(_) => Some(text(node).into_iter().collect()),
        Kind::Seq(items) => items.iter().map(text).collect(),
        Kind::Map(_) => None,
    }
}

/// The shape of a value that is not a string or a list of strings, for messages: a list
/// names the shape of its first odd item.
fn list_shape(node: &Node<'_>) -> String {
    match &node.kind {
        Kind::Seq(items) => match items.iter().find(|i| text(i).is_none()) {
            Some(odd) => format!("a list holding {}", shape(odd)),
            None => "a list".to_owned(),
        },
        _ => shape(node).to_owned(),
    }
}

/// An integer in any core-schema form: decimal, `0x` hex or `0o` octal.
fn parse_int(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = text.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else {
        text.parse().ok()
    }
}

fn boolean(node: &Node<'_>) -> Option<bool> {
    match scalar(node)? {
        (t, ScalarType::Bool) => Some(t.eq_ignore_ascii_case("true")),
        _ => None,
    }
}

/// A boolean as Claude Code reads one (since 2.1.218) where YAML's core schema reads a
/// string or a number: `true`, `yes`, `on`, `1` and `false`, `no`, `off`, `0`, in any
/// letter case, quoted or not.
fn claude_boolean(node: &Node<'_>) -> Option<bool> {
    let (t, ty) = scalar(node)?;
    if ty == ScalarType::Null || t.len() > 5 {
        return None;
    }
    match t.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

pub(crate) fn raw(node: &Node<'_>) -> RawValue {
    match &node.kind {
        Kind::Scalar(s) if s.resolve() == ScalarType::Null && s.plain => RawValue::Null,
        Kind::Scalar(s) => RawValue::Scalar(s.text.to_string()),
        Kind::Seq(items) => RawValue::Seq(items.iter().map(raw).collect()),
        Kind::Map(entries) => RawValue::Map(
            entries
                .iter()
                .map(|(k, v)| (key_text(k).into_owned(), raw(v)))
                .collect(),
        ),
    }
}

/// The script a hook command names, when it is exactly one path under `scripts/` (a
/// leading `./` or `${CLAUDE_SKILL_DIR}/` allowed; no arguments, no shell syntax, no `..`).
fn single_script(command: &str) -> Option<String> {
    let c = command.trim();
    let c = c
        .strip_prefix("${CLAUDE_SKILL_DIR}/")
        .or_else(|| c.strip_prefix("$CLAUDE_SKILL_DIR/"))
        .or_else(|| c.strip_prefix("./"))
        .unwrap_or(c);
    let plain = c
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '/' | '.' | '_' | '-'));
    let parts: Vec<&str> = c.split('/').collect();
    let ok = plain
        && parts.len() >= 2
        && parts[0] == "scripts"
        && parts
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != "..");
    ok.then(|| c.to_owned())
}

/// A key's text, borrowed from the node (read for every key of every skill).
pub(crate) fn key_text<'n>(node: &'n Node<'_>) -> Cow<'n, str> {
    match &node.kind {
        Kind::Scalar(s) => Cow::Borrowed(&s.text),
        _ => Cow::Owned(format!("<{}>", shape(node))),
    }
}

pub(crate) fn entries<'n, 'a>(node: &'n Node<'a>) -> Option<&'n [(Node<'a>, Node<'a>)]> {
    match &node.kind {
        Kind::Map(entries) => Some(entries),
        _ => None,
    }
}

/// The first merge key (`<<`, whatever its quoting or tag) of any mapping in `node`.
fn merge_key<'n, 'a>(node: &'n Node<'a>) -> Option<&'n Node<'a>> {
    match &node.kind {
        Kind::Scalar(_) => None,
        Kind::Seq(items) => items.iter().find_map(merge_key),
        Kind::Map(entries) => entries.iter().find_map(|(k, v)| {
            let merge = matches!(&k.kind, Kind::Scalar(s) if s.text == "<<");
            if merge {
                Some(k)
            } else {
                merge_key(k).or_else(|| merge_key(v))
            }
        }),
    }
}

pub(crate) fn get<'n, 'a>(entries: &'n [(Node<'a>, Node<'a>)], key: &str) -> Option<&'n Node<'a>> {
    entries
        .iter()
        .find(|(k, _)| scalar(k).is_some_and(|(t, _)| t == key))
        .map(|(_, v)| v)
}

impl FieldReader<'_> {
    fn push(&mut self, rule: Rule, severity: Severity, message: String, node: &Node<'_>) {
        self.diagnostics.push(
            Diagnostic::new(rule, severity, message)
                .at(node.line.saturating_add(self.line_offset), node.col),
        );
    }

    fn error(&mut self, rule: Rule, message: String, node: &Node<'_>) {
        self.push(rule, Severity::Error, message, node);
    }

    /// An extension value of the right shape that lacks a part it needs.
    pub(crate) fn ext_missing(&mut self, field: &str, needed: &str, node: &Node<'_>) {
        let message = ["`", field, "` needs ", needed, "; it is ignored"].concat();
        self.push(Rule::ExtensionType, Severity::Warning, message, node);
    }

    pub(crate) fn ext_warning(&mut self, field: &str, expected: &str, node: &Node<'_>) {
        let message = format!(
            "`{field}` should be {expected}, not {}; it is ignored",
            shape(node)
        );
        self.push(Rule::ExtensionType, Severity::Warning, message, node);
    }

    /// Reads the root node. `root` is `None` for an empty frontmatter.
    pub(crate) fn read(&mut self, root: Option<&Node<'_>>) -> Frontmatter {
        let mut fm = Frontmatter::default();
        // A merge key is refused before any field is read, and nothing of the frontmatter
        // is kept: the lenient loader must not load what a YAML 1.1 reader reads otherwise.
        if let Some(key) = root.and_then(merge_key) {
            let message = "`<<` is a YAML merge key: YAML 1.1 readers (PyYAML) merge the mapping it names into this one and this reader does not, so the two would read different fields (`disable-model-invocation`, `allowed-tools`); write the fields out in full".to_owned();
            self.error(Rule::FrontmatterMergeKey, message, key);
            return fm;
        }
        let Some(entries) = self.entries(root) else {
            return fm;
        };
        let mut name_seen = false;
        let mut description_seen = false;
        for (key, value) in entries {
            let key_name = key_text(key);
            match &*key_name {
                "name" => name_seen = true,
                "description" => description_seen = true,
                _ => {}
            }
            self.warn_unless_spec(&key_name, key);
            self.field(&mut fm, key_name, key, value);
        }
        // A missing field has no place in the file.
        if !name_seen {
            self.diagnostics.push(Diagnostic::error(
                Rule::NameRequired,
                "missing required field `name`",
            ));
        }
        if !description_seen {
            self.diagnostics.push(Diagnostic::error(
                Rule::DescriptionRequired,
                "missing required field `description`: say what the skill does and when to use it",
            ));
        }
        fm
    }

    /// The fields of the root node: none for an empty frontmatter; `None` (an error) for a
    /// root that is not a mapping.
    fn entries<'n, 'a>(
        &mut self,
        root: Option<&'n Node<'a>>,
    ) -> Option<&'n [(Node<'a>, Node<'a>)]> {
        let Some(node) = root else {
            return Some(&[]);
        };
        match &node.kind {
            Kind::Map(entries) => Some(entries.as_slice()),
            _ => {
                let message = format!(
                    "the frontmatter must be a mapping of fields (`name: ...`), not {}",
                    shape(node)
                );
                self.error(Rule::FrontmatterNotMapping, message, node);
                None
            }
        }
    }

    /// A field outside the specification: a warning, read as an extension or kept as data.
    fn warn_unless_spec(&mut self, key_name: &str, key: &Node<'_>) {
        if SPEC_FIELDS.contains(&key_name) {
            return;
        }
        // Joined, not formatted: most real skills draw one of these (`requires`), and the
        // formatting machinery cost ten times the copy.
        let message = if EXTENSION_FIELDS.contains(&key_name) {
            [
                "`",
                key_name,
                "` is not an Agent Skills specification field (read as an extension)",
            ]
            .concat()
        } else {
            [
                "unknown field `",
                key_name,
                "`: not in the Agent Skills specification; kept as data",
            ]
            .concat()
        };
        self.push(
            Rule::FrontmatterUnknownField,
            Severity::Warning,
            message,
            key,
        );
    }

    /// Reads one field into `fm`: its own reader for a known field, kept as data else.
    fn field(
        &mut self,
        fm: &mut Frontmatter,
        key_name: Cow<'_, str>,
        key: &Node<'_>,
        value: &Node<'_>,
    ) {
        match &*key_name {
            "name" => fm.name = self.name(key, value).map(Into::into),
            "description" => fm.description = self.description(key, value).map(Into::into),
            "license" => {
                fm.license = self
                    .plain_string(Rule::LicenseType, "license", value)
                    .map(Into::into)
            }
            "compatibility" => fm.compatibility = self.compatibility(value).map(Into::into),
            "metadata" => {
                fm.metadata = self.metadata(value);
                self.conventions_in_metadata(fm, value);
            }
            "requires" => fm.requires = self.requires(value).map(Box::new),
            "requires_toolsets"
            | "requires_tools"
            | "fallback_for_tools"
            | "fallback_for_toolsets" => {
                self.hermes_field(fm, &key_name, value);
                fm.extra.push((key_name.into_owned(), raw(value)));
            }
            "allowed-tools" => fm.allowed_tools = self.allowed_tools(value),
            "disallowed-tools" => fm.disallowed_tools = self.disallowed_tools(value),
            "model" => fm.model = self.ext_text("model", value).map(Into::into),
            "agent" => fm.agent = self.ext_text("agent", value).map(Into::into),
            "argument-hint" => {
                let hint = self.ext_text("argument-hint", value).map(Into::into);
                if hint.is_some() {
                    fm.claude_code
                        .get_or_insert_with(Default::default)
                        .argument_hint = hint;
                }
            }
            "when_to_use" => fm.when_to_use = self.ext_text("when_to_use", value).map(Into::into),
            "context" => fm.context = self.context(value),
            "hooks" => {
                fm.hooks = Some(Box::new(self.hooks(value))).filter(|h| !h.is_empty());
            }
            "priority" => fm.priority = self.priority(value),
            "tags" => fm.tags = self.ext_list("tags", value),
            "scope" => {
                fm.scope = Some(Box::new(self.scope(value))).filter(|s| !s.is_unrestricted())
            }
            "user-invocable" => fm.user_invocable = self.ext_bool("user-invocable", value),
            "disable-model-invocation" => {
                fm.disable_model_invocation = self.ext_bool("disable-model-invocation", value);
            }
            "security" => fm.security = self.security(value).map(Box::new),
            "tool-binding" => fm.tool_binding = self.tool_binding(value).map(Box::new),
            "composition" => fm.composition = self.composition(value).map(Box::new),
            "test-scenarios" => fm.test_scenarios = self.test_scenarios(value),
            "arguments" | "effort" | "paths" | "shell" => {
                let fields = fm.claude_code.get_or_insert_with(Default::default);
                self.claude_code_field(&key_name, value, fields);
            }
            _ => fm.extra.push((key_name.into_owned(), raw(value))),
        }
    }

    fn name(&mut self, key: &Node<'_>, value: &Node<'_>) -> Option<String> {
        let Some((text, ty)) = scalar(value) else {
            self.error(
                Rule::NameType,
                format!("`name` must be a string, not {}", shape(value)),
                value,
            );
            return None;
        };
        match ty {
            ScalarType::Null => {
                self.error(Rule::NameRequired, "`name` is empty".into(), key);
                return None;
            }
            ScalarType::Str => {}
            other => {
                let tagged = matches!(&value.kind, Kind::Scalar(s) if s.tagged.is_some());
                let message = if tagged {
                    format!(
                        "`name` must be a string, not {}: remove its tag",
                        other.describe()
                    )
                } else {
                    format!(
                        "`name` must be a string, not {}: quote it (`name: \"{text}\"`)",
                        other.describe()
                    )
                };
                self.error(Rule::NameType, message, value);
                self.check_directory(text, value);
                return Some(text.to_owned());
            }
        }
        if text.is_empty() {
            self.error(Rule::NameRequired, "`name` is empty".into(), key);
            return None;
        }
        if let Some(chars) = chars_over(text, MAX_NAME_LEN) {
            let message = format!("`name` is {chars} characters; the limit is {MAX_NAME_LEN}");
            self.error(Rule::NameMaxLength, message, value);
        } else if let Some(problem) = spec_name_problem(text) {
            let message = format!(
                "`name` {text:?} is not a valid skill name: {problem} (use lowercase a-z, 0-9 and single hyphens)"
            );
            self.error(Rule::NameFormat, message, value);
        }
        self.check_directory(text, value);
        let trimmed = text.trim();
        (!trimmed.is_empty()).then(|| trimmed.to_owned())
    }

    fn check_directory(&mut self, name: &str, value: &Node<'_>) {
        if name != self.dir_name {
            let message = format!(
                "`name` {name:?} does not match the directory name {:?}: rename one so they agree",
                self.dir_name
            );
            self.error(Rule::NameMatchesDirectory, message, value);
        }
    }

    fn description(&mut self, key: &Node<'_>, value: &Node<'_>) -> Option<String> {
        let Some((text, ty)) = scalar(value) else {
            let message = format!("`description` must be a string, not {}", shape(value));
            self.error(Rule::DescriptionType, message, value);
            return None;
        };
        match ty {
            ScalarType::Null => {
                self.error(
                    Rule::DescriptionRequired,
                    "`description` is empty".into(),
                    key,
                );
                return None;
            }
            ScalarType::Str => {}
            other => {
                let message = format!(
                    "`description` must be a string, not {}: quote it",
                    other.describe()
                );
                self.error(Rule::DescriptionType, message, value);
                return Some(text.trim().to_owned());
            }
        }
        if text.trim().is_empty() {
            self.error(
                Rule::DescriptionRequired,
                "`description` is blank".into(),
                key,
            );
            return None;
        }
        if let Some(chars) = chars_over(text, MAX_DESCRIPTION_LEN) {
            let message = format!(
                "`description` is {chars} characters; the limit is {MAX_DESCRIPTION_LEN}: move detail into the body"
            );
            self.error(Rule::DescriptionMaxLength, message, value);
        }
        Some(text.trim().to_owned())
    }

    /// A field that must be a string: other scalars keep their text with an error.
    fn plain_string(&mut self, rule: Rule, field: &str, value: &Node<'_>) -> Option<String> {
        match scalar(value) {
            Some((text, ScalarType::Str)) => Some(text.to_owned()),
            Some((text, ty)) if ty != ScalarType::Null => {
                let message = format!(
                    "`{field}` must be a string, not {}: quote it",
                    ty.describe()
                );
                self.error(rule, message, value);
                Some(text.to_owned())
            }
            _ => {
                self.error(
                    rule,
                    format!("`{field}` must be a string, not {}", shape(value)),
                    value,
                );
                None
            }
        }
    }

    fn compatibility(&mut self, value: &Node<'_>) -> Option<String> {
        if matches!(scalar(value), Some((_, ScalarType::Null))) {
            let message = "`compatibility` is empty: remove it or say what the skill needs".into();
            self.error(Rule::CompatibilityMinLength, message, value);
            return None;
        }
        let text = self.plain_string(Rule::CompatibilityType, "compatibility", value)?;
        if text.is_empty() {
            let message = "`compatibility` is empty: remove it or say what the skill needs".into();
            self.error(Rule::CompatibilityMinLength, message, value);
        } else if let Some(chars) = chars_over(&text, MAX_COMPATIBILITY_LEN) {
            let message = format!(
                "`compatibility` is {chars} characters; the limit is {MAX_COMPATIBILITY_LEN}"
            );
            self.error(Rule::CompatibilityMaxLength, message, value);
        }
        Some(text)
    }

    fn metadata(&mut self, value: &Node<'_>) -> Metadata {
        let mut map = Metadata::default();
        let Some(entries) = entries(value) else {
            let message = format!(
                "`metadata` must be a mapping of string keys to string values, not {}",
                shape(value)
            );
            self.error(Rule::MetadataType, message, value);
            return map;
        };
        for (k, v) in entries {
            let key = key_text(k);
            if !matches!(scalar(k), Some((_, ScalarType::Str))) {
                let message = format!("`metadata` key {key:?} must be a string, not {}", shape(k));
                self.error(Rule::MetadataValueType, message, k);
            }
            match scalar(v) {
                Some((text, ScalarType::Str)) => {
                    map.insert(key.into_owned(), text.to_owned());
                }
                Some((text, ty)) => {
                    let message = format!(
                        "`metadata.{key}` must be a string, not {}: quote it (`{key}: \"{text}\"`)",
                        ty.describe()
                    );
                    self.error(Rule::MetadataValueType, message, v);
                    if ty != ScalarType::Null {
                        map.insert(key.into_owned(), text.to_owned());
                    }
                }
                None => {
                    let message = format!("`metadata.{key}` must be a string, not {}", shape(v));
                    self.error(Rule::MetadataValueType, message, v);
                }
            }
        }
        map
    }

    fn tool_rules(&mut self, field: &str, value: &Node<'_>) -> Option<ToolRules> {
        // Each entry is read where it stands, so a bad one is reported at its own place.
        let pieces: &[Node<'_>] = match &value.kind {
            // A null value restricts nothing: no rules at all, not an empty allowlist.
            Kind::Scalar(_) => {
                text(value)?;
                std::slice::from_ref(value)
            }
            Kind::Seq(items) => items,
            Kind::Map(_) => return None,
        };
        let mut all = Vec::new();
        for piece in pieces {
            let Some(source) = text(piece) else { continue };
            let (rules, errors) = ToolRules::parse_lenient(&source);
            // Moved, not cloned: one piece (the usual scalar) keeps its list as it is.
            if all.is_empty() {
                all = rules.into_iter().collect();
            } else {
                all.extend(rules);
            }
            for error in errors {
                let message = format!("`{field}`: {error}");
                self.push(Rule::ToolRuleSyntax, Severity::Warning, message, piece);
            }
            // Rare: one byte scan of the rules' text in the usual case.
            if memchr::memchr(b'$', source.as_bytes()).is_some() {
                self.claude_skill_dir(field, &source, piece);
            }
        }
        Some(all.into_iter().collect())
    }

    /// A `loader.claudeCode` warning at each `${CLAUDE_SKILL_DIR}` in a tool rule's text:
    /// at its own column in a plain one-line value, else at the value.
    fn claude_skill_dir(&mut self, field: &str, source: &str, piece: &Node<'_>) {
        let plain = matches!(&piece.kind, Kind::Scalar(s) if s.plain) && !source.contains('\n');
        for (at, _) in source.match_indices(CLAUDE_SKILL_DIR_VAR) {
            let column = if plain {
                let before = u32::try_from(source[..at].chars().count()).unwrap_or(u32::MAX);
                piece.col.saturating_add(before)
            } else {
                piece.col
            };
            let message = format!(
                "`{field}`: `{CLAUDE_SKILL_DIR_VAR}` is read as the skill's folder, as Claude Code reads it (and as `{SKILL_DIR_VAR}` is)"
            );
            self.diagnostics.push(
                Diagnostic::new(Rule::LoaderClaudeCode, Severity::Warning, message)
                    .at(piece.line.saturating_add(self.line_offset), column),
            );
        }
    }

    fn allowed_tools(&mut self, value: &Node<'_>) -> Option<ToolRules> {
        match scalar(value) {
            Some((_, ScalarType::Str)) => {}
            _ => {
                let message = format!(
                    "`allowed-tools` must be one space-separated string (`allowed-tools: Read Grep`), not {}",
                    shape(value)
                );
                self.error(Rule::AllowedToolsType, message, value);
            }
        }
        // Fail closed: an `allowed-tools` that is present but cannot be read (null, a
        // mapping) restricts to nothing, never to "no restriction".
        Some(self.tool_rules("allowed-tools", value).unwrap_or_default())
    }

    fn disallowed_tools(&mut self, value: &Node<'_>) -> Option<ToolRules> {
        if matches!(value.kind, Kind::Map(_)) {
            self.ext_warning("disallowed-tools", "a string or a list", value);
        }
        self.tool_rules("disallowed-tools", value)
    }

    fn ext_text(&mut self, field: &str, value: &Node<'_>) -> Option<String> {
        let result = text(value);
        if result.is_none() && !matches!(scalar(value), Some((_, ScalarType::Null))) {
            self.ext_warning(field, "a string", value);
        }
        result
    }

    /// A boolean extension field: `true` or `false`, or, with a `loader.claudeCode`
    /// warning, another spelling Claude Code reads (`yes`, `off`, `1`...).
    pub(crate) fn ext_bool(&mut self, field: &str, value: &Node<'_>) -> Option<bool> {
        if let Some(b) = boolean(value) {
            return Some(b);
        }
        let Some(b) = claude_boolean(value) else {
            self.ext_warning(field, "true or false", value);
            return None;
        };
        let written = scalar(value).map_or("", |(t, _)| t);
        let message = format!(
            "`{field}: {written}` is read as `{b}`, as Claude Code reads it; YAML reads it as {}, so other agents may ignore it: write `{b}`",
            shape(value)
        );
        self.push(Rule::LoaderClaudeCode, Severity::Warning, message, value);
        Some(b)
    }

    pub(crate) fn ext_list(&mut self, field: &str, value: &Node<'_>) -> Vec<String> {
        string_list(value).unwrap_or_else(|| {
            self.ext_warning(field, "a list of strings", value);
            Vec::new()
        })
    }

    fn context(&mut self, value: &Node<'_>) -> Option<ContextMode> {
        match scalar(value).map(|(t, _)| t) {
            Some("inherit") => Some(ContextMode::Inherit),
            Some("fork") => Some(ContextMode::Fork),
            _ => {
                self.ext_warning("context", "`inherit` or `fork`", value);
                None
            }
        }
    }

    fn priority(&mut self, value: &Node<'_>) -> i64 {
        match scalar(value) {
            Some((t, ScalarType::Int)) => match parse_int(t) {
                Some(p) => p,
                None => {
                    self.ext_warning("priority", "an integer in range", value);
                    0
                }
            },
            _ => {
                self.ext_warning("priority", "an integer", value);
                0
            }
        }
    }

    fn hooks(&mut self, value: &Node<'_>) -> Hooks {
        let Some(entries) = entries(value) else {
            self.ext_warning(
                "hooks",
                "a mapping with `pre` and `post`, or Claude Code's events",
                value,
            );
            return Hooks::default();
        };
        let mut hooks = Hooks::default();
        for (k, v) in entries {
            match &*key_text(k) {
                "pre" => hooks.pre.extend(self.ext_list("hooks.pre", v)),
                "post" => hooks.post.extend(self.ext_list("hooks.post", v)),
                event if event.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    self.claude_hooks(event, v, &mut hooks);
                }
                other => self.ext_warning(
                    &format!("hooks.{other}"),
                    "absent (`pre`, `post`, or a Claude Code event such as `Stop`)",
                    v,
                ),
            }
        }
        hooks
    }

    /// One event of Claude Code's hooks: a list of `{matcher, hooks: [{type: command,
    /// command}]}`. A command runs here only when its event is one the executor has and it
    /// names a single script under `scripts/`; every other entry is kept and diagnosed.
    fn claude_hooks(&mut self, event: &str, value: &Node<'_>, hooks: &mut Hooks) {
        let field = format!("hooks.{event}");
        let Kind::Seq(groups) = &value.kind else {
            self.ext_warning(&field, "a list of `{matcher, hooks}` entries", value);
            return;
        };
        let runs_at = match event {
            "SessionStart" => Some(HookEvent::Activation),
            "Stop" | "SessionEnd" => Some(HookEvent::Deactivation),
            _ => None,
        };
        for group in groups {
            let Some(fields) = entries(group) else {
                self.ext_warning(&field, "a list of `{matcher, hooks}` entries", group);
                continue;
            };
            let matcher = get(fields, "matcher").and_then(text);
            let Some(Node {
                kind: Kind::Seq(commands),
                ..
            }) = get(fields, "hooks")
            else {
                self.ext_warning(&format!("{field}[].hooks"), "a list of commands", group);
                continue;
            };
            for command in commands {
                let cmd = entries(command).and_then(|c| {
                    let kind = get(c, "type").and_then(text);
                    (kind.as_deref().unwrap_or("command") == "command")
                        .then(|| get(c, "command").and_then(text))
                        .flatten()
                });
                let Some(cmd) = cmd else {
                    self.ext_warning(
                        &format!("{field}[].hooks[]"),
                        "`{type: command, command: ...}`",
                        command,
                    );
                    continue;
                };
                let script = single_script(&cmd);
                let runs = match (runs_at, &script) {
                    (Some(at), Some(_)) => Some(at),
                    _ => None,
                };
                if runs.is_none() {
                    let why = match (runs_at, &script) {
                        (None, _) if matches!(event, "PreToolUse" | "PostToolUse") => format!(
                            "`{event}` is a tool event: this executor judges tool calls by `allowed-tools`, it runs no per-tool hooks (a host with hooks of its own can run it)"
                        ),
                        (None, _) => format!(
                            "`{event}` is not an event this executor has (it runs hooks at activation: `SessionStart` or `pre`, and deactivation: `Stop`, `SessionEnd` or `post`)"
                        ),
                        (Some(_), _) => format!(
                            "the command {cmd:?} is not a single script under `scripts/`: hooks run as argv with no shell, so name one script (`scripts/check.sh`) and move arguments, pipes and variables into it"
                        ),
                    };
                    self.push(
                        Rule::HooksNotRun,
                        Severity::Warning,
                        format!("this hook is not run: {why}"),
                        command,
                    );
                }
                if let (Some(at), Some(path)) = (runs, &script) {
                    match at {
                        HookEvent::Activation => hooks.pre.push(path.clone()),
                        HookEvent::Deactivation => hooks.post.push(path.clone()),
                    }
                }
                hooks.claude_code.push(ClaudeHook {
                    event: event.to_owned(),
                    matcher: matcher.clone(),
                    command: cmd,
                    runs_at: runs,
                    script: runs.and(script),
                });
            }
        }
    }

    /// Claude Code's `arguments`, `effort`, `paths` and `shell`.
    fn claude_code_field(&mut self, key: &str, value: &Node<'_>, fields: &mut ClaudeCodeFields) {
        match key {
            "arguments" => fields.arguments = self.words_or_list(key, value, ' '),
            "paths" => fields.paths = self.words_or_list(key, value, ','),
            "effort" => {
                fields.effort = self
                    .one_of(key, value, &["low", "medium", "high", "xhigh", "max"])
                    .map(Into::into);
            }
            "shell" => {
                fields.shell = self
                    .one_of(key, value, &["bash", "powershell"])
                    .map(Into::into);
            }
            _ => {}
        }
    }

    /// A list of strings, or one string split at `sep` (empty items dropped).
    fn words_or_list(&mut self, field: &str, value: &Node<'_>, sep: char) -> Vec<String> {
        if let Kind::Seq(_) = &value.kind {
            if let Some(list) = string_list(value) {
                return list;
            }
        }
        match text(value) {
            Some(t) => t
                .split(sep)
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect(),
            None => {
                self.ext_warning(field, "a string or a list of strings", value);
                Vec::new()
            }
        }
    }

    /// A string that is one of `allowed` (any case), else a warning and `None`.
    fn one_of(&mut self, field: &str, value: &Node<'_>, allowed: &[&str]) -> Option<String> {
        let t = text(value).map(|t| t.trim().to_ascii_lowercase());
        match t {
            Some(t) if allowed.contains(&t.as_str()) => Some(t),
            _ => {
                let expected = format!("one of {}", allowed.join(", "));
                self.ext_warning(field, &expected, value);
                None
            }
        }
    }

    /// `scope`. One that cannot be read in full (not a mapping, a dimension this runtime
    /// does not enforce, a dimension that is not a string or a list of strings: one odd
    /// item spoils its list) is an error and [`Scope::unreadable`], which hides the skill
    /// from every session: an unknown scope never reads as "everywhere" (issue 38).
    fn scope(&mut self, value: &Node<'_>) -> Scope {
        let Some(entries) = entries(value) else {
            let why = format!(
                "it should be a mapping of `agents`, `tenants`, `environments`, not {}",
                shape(value)
            );
            return self.unreadable_scope(&why, value);
        };
        let mut scope = Scope::default();
        for (k, v) in entries {
            let key = key_text(k);
            let list = match &*key {
                "agents" => &mut scope.agents,
                "tenants" => &mut scope.tenants,
                "environments" => &mut scope.environments,
                other => {
                    let why = format!("`scope.{other}` is not one of `agents`, `tenants`, `environments`, so it cannot be enforced");
                    return self.unreadable_scope(&why, k);
                }
            };
            match string_list(v) {
                Some(items) => *list = items,
                None => {
                    let why = format!(
                        "`scope.{key}` should be a string or a list of strings, not {}",
                        list_shape(v)
                    );
                    return self.unreadable_scope(&why, v);
                }
            }
        }
        scope
    }

    fn unreadable_scope(&mut self, why: &str, node: &Node<'_>) -> Scope {
        let message = format!(
            "`scope` cannot be read: {why}; the skill is hidden from every session until it is fixed"
        );
        self.error(Rule::ScopeType, message, node);
        Scope::unreadable()
    }

    fn security(&mut self, value: &Node<'_>) -> Option<Security> {
        let Some(entries) = entries(value) else {
            self.ext_warning("security", "a mapping", value);
            return None;
        };
        let mut s = Security::default();
        for (k, v) in entries {
            match &*key_text(k) {
                "capabilities" => s.capabilities = self.capabilities(v),
                "requiresNetwork" => {
                    s.requires_network = self.ext_bool("security.requiresNetwork", v)
                }
                "modifiesFiles" => s.modifies_files = self.ext_bool("security.modifiesFiles", v),
                "executesCommands" => {
                    s.executes_commands = self.ext_bool("security.executesCommands", v);
                }
                "fileSystemScope" => {
                    s.file_system_scope = self.ext_text("security.fileSystemScope", v);
                }
                "scriptEnv" => s.script_env = self.ext_list("security.scriptEnv", v),
                _ => {}
            }
        }
        Some(s)
    }

    /// `security.capabilities`: a list of names, of `{capability, reason, optional}`
    /// objects, or of both; one comma-separated string is read as names.
    fn capabilities(&mut self, value: &Node<'_>) -> Vec<Capability> {
        let field = "security.capabilities";
        let Kind::Seq(items) = &value.kind else {
            return self
                .ext_list(field, value)
                .into_iter()
                .map(|capability| Capability {
                    capability,
                    ..Capability::default()
                })
                .collect();
        };
        let mut out = Vec::new();
        for item in items {
            if let Some(capability) = text(item) {
                out.push(Capability {
                    capability,
                    ..Capability::default()
                });
                continue;
            }
            let Some(e) = entries(item) else {
                self.ext_warning(
                    field,
                    "a list of names or of `{capability, reason, optional}`",
                    item,
                );
                continue;
            };
            let Some(capability) = get(e, "capability").and_then(text) else {
                self.ext_missing("security.capabilities[]", "a `capability`", item);
                continue;
            };
            out.push(Capability {
                capability,
                reason: get(e, "reason").and_then(text),
                optional: get(e, "optional")
                    .and_then(|v| self.ext_bool("security.capabilities[].optional", v)),
                object: true,
            });
        }
        out
    }

    fn tool_binding(&mut self, value: &Node<'_>) -> Option<ToolBinding> {
        let Some(fields) = entries(value) else {
            self.ext_warning(
                "tool-binding",
                "a mapping with a `dependencies` list",
                value,
            );
            return None;
        };
        let Some(deps) = get(fields, "dependencies") else {
            self.ext_missing("tool-binding", "a `dependencies` list", value);
            return None;
        };
        let Kind::Seq(items) = &deps.kind else {
            self.ext_warning("tool-binding.dependencies", "a list", deps);
            return None;
        };
        let mut binding = ToolBinding::default();
        for item in items {
            let dep = match (&item.kind, entries(item)) {
                (Kind::Scalar(_), _) => text(item).map(|tool| ToolDependency {
                    tool,
                    required: true,
                    ..ToolDependency::default()
                }),
                (_, Some(e)) => get(e, "tool").and_then(text).map(|tool| ToolDependency {
                    tool,
                    required: get(e, "required")
                        .and_then(|v| self.ext_bool("tool-binding.dependencies[].required", v))
                        .unwrap_or(true),
                    purpose: get(e, "purpose").and_then(text),
                    min_version: get(e, "minVersion").and_then(text),
                }),
                _ => None,
            };
            match dep {
                Some(dep) => binding.dependencies.push(dep),
                None if entries(item).is_some() => {
                    self.ext_missing("tool-binding.dependencies[]", "a `tool`", item);
                }
                None => {
                    self.ext_warning("tool-binding.dependencies[]", "a mapping with `tool`", item)
                }
            }
        }
        Some(binding)
    }

    fn composition(&mut self, value: &Node<'_>) -> Option<Composition> {
        let Some(entries) = entries(value) else {
            self.ext_warning("composition", "a mapping", value);
            return None;
        };
        let mut c = Composition::default();
        for (k, v) in entries {
            match &*key_text(k) {
                "dependencies" => {
                    let Kind::Seq(items) = &v.kind else {
                        self.ext_warning("composition.dependencies", "a list", v);
                        continue;
                    };
                    for item in items {
                        let dep = match (&item.kind, self::entries(item)) {
                            (Kind::Scalar(_), _) => text(item).map(|skill_name| SkillDependency {
                                skill_name,
                                ..SkillDependency::default()
                            }),
                            (_, Some(e)) => get(e, "skillName").and_then(text).map(|skill_name| {
                                SkillDependency {
                                    skill_name,
                                    reason: get(e, "reason").and_then(text),
                                    optional: get(e, "optional")
                                        .and_then(|v| {
                                            self.ext_bool("composition.dependencies[].optional", v)
                                        })
                                        .unwrap_or(false),
                                }
                            }),
                            _ => None,
                        };
                        match dep {
                            Some(dep) => c.dependencies.push(dep),
                            None if self::entries(item).is_some() => self.ext_missing(
                                "composition.dependencies[]",
                                "a `skillName`",
                                item,
                            ),
                            None => self.ext_warning(
                                "composition.dependencies[]",
                                "a mapping with `skillName`",
                                item,
                            ),
                        }
                    }
                }
                "conflicts" => c.conflicts = self.ext_list("composition.conflicts", v),
                "executionOrder" => {
                    c.execution_order = self.ext_list("composition.executionOrder", v);
                }
                _ => {}
            }
        }
        Some(c)
    }

    fn test_scenarios(&mut self, value: &Node<'_>) -> Vec<TestScenario> {
        let Kind::Seq(items) = &value.kind else {
            self.ext_warning("test-scenarios", "a list", value);
            return Vec::new();
        };
        let mut scenarios = Vec::new();
        for item in items {
            let Some(e) = entries(item) else {
                self.ext_warning("test-scenarios[]", "a mapping", item);
                continue;
            };
            let mut scenario = TestScenario::default();
            for (k, v) in e {
                match &*key_text(k) {
                    "name" => scenario.name = text(v),
                    "description" => scenario.description = text(v),
                    "input" | "prompt" => scenario.input = text(v),
                    "expected" | "expect" => scenario.expected = text(v),
                    "cases" => scenario.cases = self.scenario_cases(v),
                    other => scenario.extra.push((other.to_owned(), raw(v))),
                }
            }
            scenarios.push(scenario);
        }
        scenarios
    }

    /// A scenario's `cases`: mappings of `name`, `input`, `assertions` (a list of strings,
    /// or one) and `expectedBehavior`; an item of another shape is a warning and ignored.
    fn scenario_cases(&mut self, value: &Node<'_>) -> Vec<ScenarioCase> {
        let Kind::Seq(items) = &value.kind else {
            self.ext_warning("test-scenarios[].cases", "a list", value);
            return Vec::new();
        };
        let mut cases = Vec::new();
        for item in items {
            let Some(e) = entries(item) else {
                self.ext_warning("test-scenarios[].cases[]", "a mapping", item);
                continue;
            };
            let mut case = ScenarioCase::default();
            for (k, v) in e {
                match &*key_text(k) {
                    "name" => case.name = text(v),
                    "input" | "prompt" => case.input = text(v),
                    "assertions" => match assertions(v) {
                        Some(list) => case.assertions = list,
                        None => self.ext_warning(
                            "test-scenarios[].cases[].assertions",
                            "a list of strings",
                            v,
                        ),
                    },
                    "expectedBehavior" => case.expected_behavior = text(v),
                    other => case.extra.push((other.to_owned(), raw(v))),
                }
            }
            cases.push(case);
        }
        cases
    }
}

/// How many characters `text` has, when that is over `limit`; counted only when its bytes
/// are over it (characters never outnumber bytes).
/// The operating systems of a list, each by [`Os::parse`]; the names it does not know.
pub(crate) fn os_list(names: &[String]) -> (Vec<Os>, Vec<&str>) {
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for name in names {
        match Os::parse(name) {
            Some(os) if !known.contains(&os) => known.push(os),
            Some(_) => {}
            None => unknown.push(name.as_str()),
        }
    }
    (known, unknown)
}

fn chars_over(text: &str, limit: usize) -> Option<usize> {
    if text.len() <= limit {
        return None;
    }
    Some(text.chars().count()).filter(|chars| *chars > limit)
}
