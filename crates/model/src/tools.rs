//! Tool rules: the entries of `allowed-tools` and `disallowed-tools`, and how they match a call.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::ModelError;

/// What a rule says about a tool's primary argument (the command for `Bash`, the path for
/// `Read`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Specifier {
    /// `Tool(text)`: the argument must equal `text`.
    Exact(Box<str>),
    /// `Tool(text:*)`: the argument is `text`, or `text` followed by whitespace and more.
    WordPrefix(Box<str>),
    /// `Tool(text *)` or `Tool(text*)`: the argument starts with `text` (for ` *`, `text`
    /// ends with the space).
    Prefix(Box<str>),
}

/// The variable a tool rule names the skill's folder with.
pub const SKILL_DIR_VAR: &str = "${SKILL_DIR}";

/// Claude Code's name for the skill's folder, expanded as [`SKILL_DIR_VAR`] is.
pub const CLAUDE_SKILL_DIR_VAR: &str = "${CLAUDE_SKILL_DIR}";

/// One rule: `Tool` or `Tool(specifier)`.
///
/// ```
/// use skills_model::ToolRule;
/// let rule: ToolRule = "Bash(git status:*)".parse().unwrap();
/// assert!(rule.matches("bash", Some("git status --short")));
/// assert!(!rule.matches("Bash", Some("git statusx")));
/// assert!(!rule.matches("Bash", Some("rm -rf /")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolRule {
    /// One of [`COMMON_TOOLS`] borrowed, any other name owned.
    tool: std::borrow::Cow<'static, str>,
    tool_is_prefix: bool,
    specifier: Option<Specifier>,
}

impl ToolRule {
    /// The tool name as written (without a trailing `*`).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The specifier, if the rule has one.
    pub fn specifier(&self) -> Option<&Specifier> {
        self.specifier.as_ref()
    }

    /// The rule as written (its [`Display`](fmt::Display)), in a string made once at its
    /// size: a decision names the rule that admitted it, so this runs once per allowed call.
    pub fn text(&self) -> String {
        let specifier = match &self.specifier {
            None => 0,
            Some(Specifier::Exact(t) | Specifier::Prefix(t) | Specifier::WordPrefix(t)) => {
                t.len() + 4
            }
        };
        let mut out = String::with_capacity(self.tool.len() + 1 + specifier);
        // Writing to a `String` cannot fail.
        let _ = fmt::Write::write_fmt(&mut out, format_args!("{self}"));
        out
    }

    /// Whether a call of `tool` whose primary argument is `argument` matches this rule.
    /// Tool names compare case-insensitively; a rule with a specifier never matches a call
    /// that has no primary argument.
    pub fn matches(&self, tool: &str, argument: Option<&str>) -> bool {
        if !self.matches_tool(tool) {
            return false;
        }
        let Some(specifier) = &self.specifier else {
            return true;
        };
        let Some(argument) = argument else {
            return false;
        };
        match specifier {
            Specifier::Exact(text) => argument == &**text,
            Specifier::Prefix(text) => argument.starts_with(&**text),
            Specifier::WordPrefix(text) => match argument.strip_prefix(&**text) {
                Some(rest) => rest.is_empty() || rest.starts_with(char::is_whitespace),
                None => false,
            },
        }
    }

    /// Whether the rule names `tool` (whatever its specifier says).
    pub fn matches_tool(&self, tool: &str) -> bool {
        if self.tool_is_prefix {
            tool.len() >= self.tool.len()
                && tool.is_char_boundary(self.tool.len())
                && tool[..self.tool.len()].eq_ignore_ascii_case(&self.tool)
        } else {
            tool.eq_ignore_ascii_case(&self.tool)
        }
    }

    /// The rule with every `${SKILL_DIR}` in its specifier replaced by `skill_dir`, and
    /// every `${CLAUDE_SKILL_DIR}` (Claude Code's name for the same folder) too.
    #[must_use]
    pub fn expand_skill_dir(&self, skill_dir: &str) -> ToolRule {
        let expand = |text: &str| -> Box<str> {
            text.replace(SKILL_DIR_VAR, skill_dir)
                .replace(CLAUDE_SKILL_DIR_VAR, skill_dir)
                .into()
        };
        let specifier = self.specifier.as_ref().map(|s| match s {
            Specifier::Exact(t) => Specifier::Exact(expand(t)),
            Specifier::Prefix(t) => Specifier::Prefix(expand(t)),
            Specifier::WordPrefix(t) => Specifier::WordPrefix(expand(t)),
        });
        ToolRule {
            specifier,
            ..self.clone()
        }
    }
}

impl std::str::FromStr for ToolRule {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<ToolRule, ModelError> {
        let err = |reason| ModelError::InvalidToolRule {
            rule: text.to_owned(),
            reason,
        };
        let text_trimmed = text.trim();
        let (name, specifier) = match text_trimmed.find('(') {
            None => (text_trimmed, None),
            Some(open) => {
                let inner = text_trimmed[open + 1..]
                    .strip_suffix(')')
                    .ok_or_else(|| err("a '(' without a closing ')' at the end"))?;
                (&text_trimmed[..open], Some(parse_specifier(inner)))
            }
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(err("the tool name is empty"));
        }
        if name.contains(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',')) {
            return Err(err(
                "the tool name holds whitespace, a parenthesis or a comma",
            ));
        }
        let (tool, tool_is_prefix) = match name.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (name, false),
        };
        Ok(ToolRule {
            tool: common_tool(tool).map_or_else(|| tool.to_owned().into(), Into::into),
            tool_is_prefix,
            specifier,
        })
    }
}

/// Tool names rules name most (Claude Code's tools), held by a rule without a copy of its
/// own: in the bench's corpora and in the real skills read for it, most rules name one of
/// these, and a name's allocation was a third of those of reading `allowed-tools`.
const COMMON_TOOLS: [&str; 14] = [
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// `name` as it is written among [`COMMON_TOOLS`] (the same bytes), if it is one.
fn common_tool(name: &str) -> Option<&'static str> {
    COMMON_TOOLS.iter().copied().find(|common| *common == name)
}

fn parse_specifier(inner: &str) -> Specifier {
    if let Some(prefix) = inner.strip_suffix(":*") {
        Specifier::WordPrefix(prefix.into())
    } else if let Some(prefix) = inner.strip_suffix('*') {
        Specifier::Prefix(prefix.into())
    } else {
        Specifier::Exact(inner.into())
    }
}

impl fmt::Display for ToolRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tool)?;
        if self.tool_is_prefix {
            f.write_str("*")?;
        }
        // Pieces, not `write!`: a decision names the rule that admitted it, so this runs
        // once per allowed call.
        let (text, end) = match &self.specifier {
            None => return Ok(()),
            Some(Specifier::Exact(t)) => (t, ")"),
            Some(Specifier::Prefix(t)) => (t, "*)"),
            Some(Specifier::WordPrefix(t)) => (t, ":*)"),
        };
        f.write_str("(")?;
        f.write_str(text)?;
        f.write_str(end)
    }
}

impl Serialize for ToolRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A list of tool rules, as read from `allowed-tools` or `disallowed-tools`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ToolRules(Vec<ToolRule>);

impl ToolRules {
    /// Reads a rule list written as one string, separated by spaces or commas (the two
    /// forms people write). Separators inside parentheses belong to the specifier:
    /// `Bash(git commit -m *), Read` is two rules.
    ///
    /// Returns the rules it could read and an error for each entry it could not.
    pub fn parse_lenient(text: &str) -> (ToolRules, Vec<ModelError>) {
        let entries = split_entries(text);
        let mut rules = Vec::with_capacity(entries.len());
        let mut errors = Vec::new();
        for entry in entries {
            match entry.parse::<ToolRule>() {
                Ok(rule) => rules.push(rule),
                Err(e) => errors.push(e),
            }
        }
        (ToolRules(rules), errors)
    }

    /// Reads a YAML-list form: each item one rule (items may themselves hold several
    /// comma- or space-separated rules, as some authors write).
    pub fn parse_items<'a>(
        items: impl IntoIterator<Item = &'a str>,
    ) -> (ToolRules, Vec<ModelError>) {
        let mut all = ToolRules::default();
        let mut errors = Vec::new();
        for item in items {
            let (rules, errs) = ToolRules::parse_lenient(item);
            all.0.extend(rules.0);
            errors.extend(errs);
        }
        (all, errors)
    }

    /// The rules in order.
    pub fn rules(&self) -> &[ToolRule] {
        &self.0
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any rule matches the call.
    pub fn any_matches(&self, tool: &str, argument: Option<&str>) -> bool {
        self.0.iter().any(|rule| rule.matches(tool, argument))
    }

    /// The first rule that matches the call.
    pub fn first_match(&self, tool: &str, argument: Option<&str>) -> Option<&ToolRule> {
        self.0.iter().find(|rule| rule.matches(tool, argument))
    }

    /// Whether any rule names `tool`, whatever its specifier.
    pub fn names_tool(&self, tool: &str) -> bool {
        self.0.iter().any(|rule| rule.matches_tool(tool))
    }

    /// Every rule with `${SKILL_DIR}` expanded.
    #[must_use]
    pub fn expand_skill_dir(&self, skill_dir: &str) -> ToolRules {
        ToolRules(
            self.0
                .iter()
                .map(|r| r.expand_skill_dir(skill_dir))
                .collect(),
        )
    }
}

impl IntoIterator for ToolRules {
    type Item = ToolRule;
    type IntoIter = std::vec::IntoIter<ToolRule>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<ToolRule> for ToolRules {
    fn from_iter<I: IntoIterator<Item = ToolRule>>(iter: I) -> ToolRules {
        ToolRules(iter.into_iter().collect())
    }
}

/// Splits at whitespace and commas outside parentheses. Unbalanced parentheses keep the rest
/// of the text in one entry, so the error names it whole. A `(` after nothing but blanks
/// belongs to the entry before it: `Bash (git status:*)` is one rule, never a bare `Bash`
/// (which would allow every command) and an unreadable `(git status:*)`.
fn split_entries(text: &str) -> Vec<&str> {
    let mut entries: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    let mut start = None;
    // The start of the entry just ended, while only blanks followed it.
    let mut previous: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match c {
            '(' => {
                if depth == 0 && start.is_none() {
                    if let Some(p) = previous.take() {
                        entries.pop();
                        start = Some(p);
                    }
                }
                depth += 1;
                start.get_or_insert(i);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                start.get_or_insert(i);
            }
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if let Some(s) = start.take() {
                    entries.push(&text[s..i]);
                    previous = Some(s);
                }
                if c == ',' {
                    previous = None;
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
        if start.is_some() {
            previous = None;
        }
    }
    if let Some(s) = start {
        entries.push(&text[s..]);
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<String> {
        let (rules, errors) = ToolRules::parse_lenient(text);
        assert!(errors.is_empty(), "{errors:?}");
        rules.rules().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn reads_space_comma_and_mixed_forms() {
        assert_eq!(parse("Read Grep  Glob"), ["Read", "Grep", "Glob"]);
        assert_eq!(parse("Read, Grep,Glob"), ["Read", "Grep", "Glob"]);
        assert_eq!(
            parse("Bash(git commit -m *), Read Bash(npm run test:*)"),
            ["Bash(git commit -m *)", "Read", "Bash(npm run test:*)"]
        );
        assert_eq!(parse(""), Vec::<String>::new());
    }

    #[test]
    fn reports_unreadable_entries() {
        let (rules, errors) = ToolRules::parse_lenient("Read Bash(git");
        assert_eq!(rules.rules().len(), 1);
        assert_eq!(errors.len(), 1);
        assert!("(x)".parse::<ToolRule>().is_err());
    }

    /// A rule's text is its display, each form of specifier, and as written.
    #[test]
    fn a_rule_s_text_is_as_written() {
        for written in [
            "Read",
            "mcp__server*",
            "Bash(git status)",
            "Bash(git status:*)",
            "Bash(npm run *)",
            "Bash(npm*)",
            "Read(docs/é/**)",
            "Bash()",
        ] {
            let rule: ToolRule = written.parse().unwrap();
            assert_eq!(rule.text(), written);
            assert_eq!(rule.text(), rule.to_string());
        }
    }

    /// A common tool's name is held without a copy, and nothing tells it from one copied:
    /// every case of every common name, and names near them, keep their bytes, compare,
    /// hash and match as written.
    #[test]
    fn a_common_tool_s_name_is_kept_as_written() {
        use std::hash::BuildHasher;
        let hasher = std::collections::hash_map::RandomState::new();
        for common in COMMON_TOOLS {
            let lower = common.to_ascii_lowercase();
            let upper = common.to_ascii_uppercase();
            let near = format!("{common}x");
            for name in [common, lower.as_str(), upper.as_str(), near.as_str()] {
                let rule: ToolRule = format!("{name}(a b:*)").parse().unwrap();
                let copied = ToolRule {
                    tool: std::borrow::Cow::Owned(name.to_owned()),
                    ..rule.clone()
                };
                assert_eq!(rule.tool(), name);
                assert_eq!(rule, copied);
                assert_eq!(hasher.hash_one(&rule), hasher.hash_one(&copied));
                assert_eq!(rule.text(), format!("{name}(a b:*)"));
                assert!(rule.matches(name, Some("a b c")), "{name}");
                assert_eq!(
                    rule.matches(common, Some("a b c")),
                    name.eq_ignore_ascii_case(common),
                    "{name}"
                );
            }
            assert!(matches!(
                common.parse::<ToolRule>().unwrap().tool,
                std::borrow::Cow::Borrowed(_)
            ));
        }
    }

    #[test]
    fn matching_forms() {
        let rule = |s: &str| s.parse::<ToolRule>().unwrap();
        assert!(rule("Read").matches("READ", None));
        assert!(rule("Read").matches("read", Some("/etc/passwd")));
        assert!(!rule("Read(/a)").matches("Read", None));
        assert!(rule("Read(/a)").matches("Read", Some("/a")));
        assert!(!rule("Read(/a)").matches("Read", Some("/a/b")));
        assert!(rule("Bash(git *)").matches("Bash", Some("git log")));
        assert!(!rule("Bash(git *)").matches("Bash", Some("git")));
        assert!(rule("Bash(git:*)").matches("Bash", Some("git")));
        assert!(rule("Bash(git:*)").matches("Bash", Some("git\tlog")));
        assert!(!rule("Bash(git:*)").matches("Bash", Some("gitk")));
        assert!(rule("mcp__github__*").matches("mcp__GitHub__create_issue", None));
        assert!(!rule("mcp__github__*").matches("mcp__gitlab__x", None));
    }

    #[test]
    fn expands_skill_dir() {
        let rule: ToolRule = "Bash(python ${SKILL_DIR}/scripts/run.py:*)"
            .parse()
            .unwrap();
        let rule = rule.expand_skill_dir("/skills/pdf");
        assert!(rule.matches("Bash", Some("python /skills/pdf/scripts/run.py --x")));
        // Issue 37: Claude Code's `${CLAUDE_SKILL_DIR}` names the same folder.
        let rule: ToolRule = "Read(${CLAUDE_SKILL_DIR}/references/*)".parse().unwrap();
        let rule = rule.expand_skill_dir("/skills/pdf");
        assert!(rule.matches("Read", Some("/skills/pdf/references/a.md")));
    }
}
