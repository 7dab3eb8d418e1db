//! Codex's metadata file beside a skill, `agents/openai.yaml`: of it the loader honours
//! `policy.allow_implicit_invocation` (false keeps the skill out of what the model is
//! offered, as Claude Code's `disable-model-invocation: true` does); the interface fields
//! are for Codex's own UI and are not read.

use crate::node::{Kind, Node, ScalarType};
use crate::yaml;

/// What the loader takes from `agents/openai.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexPolicy {
    /// `policy.allow_implicit_invocation`, when it is a boolean.
    pub allow_implicit_invocation: Option<bool>,
    /// `dependencies.tools[].value`: the tools (MCP servers, for `type: mcp`) the skill
    /// needs the host to offer.
    pub tools: Vec<String>,
}

/// Reads `agents/openai.yaml`. A file that is not UTF-8 or not YAML is an error with its
/// place, and so is a `policy` that is not a mapping or an `allow_implicit_invocation`
/// that is not a boolean (a policy that cannot be read must not read as "allowed"); a
/// missing `allow_implicit_invocation` is `None` (Codex's default is to allow).
///
/// ```
/// use skills_parser::read_codex_policy;
///
/// let policy = read_codex_policy(b"policy:\n  allow_implicit_invocation: false\n").unwrap();
/// assert_eq!(policy.allow_implicit_invocation, Some(false));
/// assert_eq!(read_codex_policy(b"interface:\n  display_name: X\n").unwrap().allow_implicit_invocation, None);
/// assert!(read_codex_policy(b"policy: [\n").is_err());
/// assert!(read_codex_policy(b"policy:\n  allow_implicit_invocation: no\n").is_err());
/// ```
pub fn read_codex_policy(bytes: &[u8]) -> Result<CodexPolicy, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let limits = yaml::Limits {
        max_depth: crate::DEFAULT_MAX_DEPTH,
        max_nodes: crate::DEFAULT_MAX_NODES,
    };
    let root = yaml::parse_full(text, limits)
        .map_err(|e| format!("{}:{}: {}", e.line, e.col, e.message))?;
    let tools = root.as_ref().map(dependency_tools).unwrap_or_default();
    let Some(policy) = root.as_ref().and_then(|r| get(r, "policy")) else {
        return Ok(CodexPolicy {
            tools,
            ..CodexPolicy::default()
        });
    };
    let wrong = |what: &str, node: &Node<'_>| format!("{}:{}: {what}", node.line, node.col);
    let empty = matches!(&policy.kind, Kind::Scalar(s) if s.resolve() == ScalarType::Null);
    if empty {
        return Ok(CodexPolicy {
            tools,
            ..CodexPolicy::default()
        });
    }
    if !matches!(policy.kind, Kind::Map(_)) {
        return Err(wrong("`policy` is not a mapping", policy));
    }
    let allow = match get(policy, "allow_implicit_invocation") {
        None => None,
        Some(v) => match &v.kind {
            Kind::Scalar(s) if s.resolve() == ScalarType::Bool => {
                Some(s.text.eq_ignore_ascii_case("true"))
            }
            _ => {
                return Err(wrong(
                    "`policy.allow_implicit_invocation` is not true or false",
                    v,
                ))
            }
        },
    };
    Ok(CodexPolicy {
        allow_implicit_invocation: allow,
        tools,
    })
}

/// `dependencies.tools`: each entry's `value` (`{type: mcp, value: NAME, ...}`); entries
/// without one are passed over.
///
/// ```
/// let yaml = b"dependencies:\n  tools:\n    - type: mcp\n      value: docs\n      transport: streamable_http\n";
/// assert_eq!(skills_parser::read_codex_policy(yaml).unwrap().tools, ["docs"]);
/// ```
fn dependency_tools(root: &Node<'_>) -> Vec<String> {
    let Some(Kind::Seq(items)) = get(root, "dependencies")
        .and_then(|d| get(d, "tools"))
        .map(|t| &t.kind)
    else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match &get(item, "value")?.kind {
            Kind::Scalar(s) if !s.text.is_empty() => Some(s.text.to_string()),
            _ => None,
        })
        .collect()
}

fn get<'n, 'a>(node: &'n Node<'a>, key: &str) -> Option<&'n Node<'a>> {
    match &node.kind {
        Kind::Map(entries) => entries.iter().find_map(|(k, v)| match &k.kind {
            Kind::Scalar(s) if s.text == key => Some(v),
            _ => None,
        }),
        _ => None,
    }
}
