//! The input of every request: one Rust type per request deriving `Deserialize` and
//! `JsonSchema` (so its schema comes from the code), and [`parse`], which reads a
//! request's input, as a tree or as JSON text, into its type.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use skills_executor::ExecError;

/// `skills_list`, `reload`, `hello`: no input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoInput {}

/// How `skills_load` treats skills already active.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ModeInput {
    /// Replace the active skills (the host's pinned ones stay).
    #[default]
    Replace,
    /// Push onto the active skills.
    Add,
}

/// `skills_load`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadInput {
    /// Skill names (bare, or qualified as layer:name or plugin-id:name).
    #[serde(alias = "skills")]
    #[schemars(length(min = 1))]
    pub(crate) names: Vec<String>,
    /// "replace" (default) replaces the active skills; "add" pushes onto them.
    #[serde(default)]
    pub(crate) mode: ModeInput,
}

/// `skills_unload`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnloadInput {
    /// Skills to deactivate; they must be the most recently loaded ones.
    #[serde(default, alias = "skills")]
    pub(crate) names: Vec<String>,
    /// Deactivate every skill the model loaded.
    #[serde(default)]
    pub(crate) all: bool,
}

/// `skills_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// The active skill to read from. Default: the most recently loaded skill.
    #[serde(default)]
    pub(crate) skill: Option<String>,
    /// Relative path, such as references/guide.md.
    pub(crate) path: String,
}

/// `skills_run_script`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunInput {
    /// The active skill. Default: the most recently loaded skill.
    #[serde(default)]
    pub(crate) skill: Option<String>,
    /// Relative path under scripts/, such as scripts/extract.py.
    pub(crate) path: String,
    /// Arguments, passed as they are (no shell).
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Environment variables for the script (upper-case names; some are refused).
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// Working folder, relative to the skill folder.
    #[serde(default)]
    pub(crate) workdir: Option<String>,
    /// A timeout shorter than the host's, in milliseconds.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) timeout_ms: Option<u64>,
}

/// `skills_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchInput {
    /// Words describing the task, such as "fill a pdf form".
    pub(crate) query: String,
    /// At most this many results (default 10, at most 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub(crate) limit: Option<u64>,
    /// Only skills of this layer: enterprise, personal, project or plugin.
    #[serde(default)]
    pub(crate) layer: Option<String>,
    /// Only skills with this tag.
    #[serde(default)]
    pub(crate) tag: Option<String>,
    /// Also say, for each result, which words of the query matched which of its fields
    /// and what each added to its score.
    #[serde(default)]
    pub(crate) explain: bool,
}

/// `skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillInput {
    /// The skill to load.
    pub(crate) name: String,
}

/// `check_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckInput {
    /// The host tool about to run (Bash, Read, Write...).
    pub(crate) tool: String,
    /// Its input, as the model gave it.
    #[serde(default, deserialize_with = "unique_keys")]
    pub(crate) input: Value,
}

/// A JSON value read from text whose objects repeat no key, at any depth: `check_tool`'s
/// tool input, and any input read as a tree first (see [`parse`]). The host runs
/// the tool input it parses itself: where an object names a key twice, one JSON reader
/// keeps the first and another the last (serde_json's `Value`), and a judge keeping one
/// could allow `{"command": "rm -rf /", "command": "git status"}` for a host that runs the
/// other. Refused, so the judged input is the only reading there is.
fn unique_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    UniqueKeys::deserialize(d).map(|v| v.0)
}

/// See [`unique_keys`].
struct UniqueKeys(Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<UniqueKeys, D::Error> {
        d.deserialize_any(UniqueKeysVisitor).map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object (JSON readers differ on which one counts)"
                )));
            }
            let UniqueKeys(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// `instructions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InstructionsInput {
    /// A character budget for the available-skills list.
    #[serde(default)]
    pub(crate) budget: Option<u64>,
}

/// `register_plugin` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegisterInput {
    /// The plugin id (its skills are reachable as id:name).
    pub(crate) id: String,
    /// The plugin's skill folder, or a well-known index's URL (`https://HOST[/PATH]`;
    /// `http://` only on loopback) when the host reads URL roots (or give `server`).
    #[serde(default)]
    pub(crate) root: Option<String>,
    /// An MCP server serving the skills extension, in place of `root`: the label the host
    /// declared (`--mcp-server LABEL=...`), or a streamable-HTTP URL (`https://`; `http://`
    /// only on loopback) when the host reaches servers by URL. A peer never starts a program.
    #[serde(default)]
    pub(crate) server: Option<String>,
}

/// `skills_unavailable` (host only).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnavailableInput {
    /// The tools the host offers its model, for this session from now on (in place of
    /// `--host-tool`); absent, they stay as they were.
    #[serde(default)]
    pub(crate) host_tools: Option<Vec<String>>,
}

/// `unregister_plugin` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnregisterInput {
    /// The plugin id.
    pub(crate) id: String,
}

/// `host_activate` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostActivateInput {
    /// Skill names to activate on the user's behalf, pinned for the task.
    #[serde(alias = "skills")]
    #[schemars(length(min = 1))]
    pub(crate) names: Vec<String>,
}

/// A request's input as it arrived: a parsed tree (the Rust API, MCP) or JSON text (the
/// JSON-lines transport, which so reads each input once, straight into its type).
pub(crate) enum Input<'a> {
    Tree(Value),
    Text(&'a RawValue),
}

/// Whether an input's text holds both `"names"` and `"skills"` (read as a tree first, by the
/// rules of [`parse`]): searched for with `memchr`'s vector code, the first of them in every
/// request's input.
fn names_both_ways(text: &str) -> bool {
    use std::sync::LazyLock;
    static NAMES: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("\"names\""));
    static SKILLS: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("\"skills\""));
    NAMES.find(text.as_bytes()).is_some() && SKILLS.find(text.as_bytes()).is_some()
}

pub(crate) fn parse<T: for<'de> Deserialize<'de>>(
    request: &str,
    input: Input<'_>,
) -> Result<T, ExecError> {
    // An object, or nothing: a struct's fields would also be read from an array, in order.
    let not_an_object = || ExecError::BadInput(format!("{request}: the input is a JSON object"));
    let input = match input {
        Input::Tree(input) => {
            if !(input.is_object() || input.is_null()) {
                return Err(not_an_object());
            }
            input
        }
        Input::Text(text) => {
            let text = text.get();
            if !(text.starts_with('{') || text == "null") {
                return Err(not_an_object());
            }
            // A missing or null input, and the rare input that may name both `names` and
            // `skills`, are decided on the tree, by the rules below.
            if text == "null" || names_both_ways(text) {
                // Read as the typed path reads a tool's input: no key twice in an object.
                serde_json::from_str::<UniqueKeys>(text)
                    .map_err(|e| ExecError::BadInput(format!("{request}: {e}")))?
                    .0
            } else {
                return serde_json::from_str(text)
                    .map_err(|e| ExecError::BadInput(format!("{request}: {e}")));
            }
        }
    };
    let input = if input.is_null() { json!({}) } else { input };
    if input.get("names").is_some() && input.get("skills").is_some() {
        return Err(ExecError::BadInput(format!(
            "{request}: give \"names\" or its alias \"skills\", not both"
        )));
    }
    serde_json::from_value(input).map_err(|e| ExecError::BadInput(format!("{request}: {e}")))
}
