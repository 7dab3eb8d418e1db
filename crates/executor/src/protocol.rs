//! The protocol layer: every request and response on the wire, in one place, for every
//! transport. A request (a tool name and its JSON input) becomes a typed call on a
//! [`Session`]; its typed result or error becomes the response. `skillctl session` only
//! moves lines through [`respond_line`]; the MCP server calls [`call`] for the same tools.
//!
//! The input of each request is a Rust type deriving `Deserialize` and `JsonSchema`, and
//! the output is the typed value the session returns, so the schemas served by
//! `tool_definitions` and documented in PROTOCOL.md come from the code ([`schemas`]).

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use skills_index::{ChangeEvent, ChangeKind};
use skills_model::SkillRecord;

use crate::{CheckResult, ExecError, Hello, LoadMode, ScriptCall, ServerInfo, Session, Verdict};

/// The protocol version `hello` reports. It changes only when a request, field or code
/// changes meaning or goes away; additions keep it.
pub const PROTOCOL_VERSION: &str = "1";

/// Requests for the host's own code. A host must never forward them from a model's tool
/// calls; `tool_definitions` never lists them.
pub const HOST_ONLY: [&str; 4] = [
    "register_plugin",
    "unregister_plugin",
    "reload",
    "host_activate",
];

/// The runtime tools a model calls (what `tool_definitions` lists, and what the MCP server
/// serves as tools).
pub const RUNTIME_TOOLS: [&str; 7] = [
    "skills_list",
    "skills_search",
    "skills_load",
    "skills_unload",
    "skills_read",
    "skills_run_script",
    "skill",
];

/// A tool as LLM APIs describe one: a name (letters, digits, underscores), a description
/// and a JSON Schema for its input.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
}

/// `skills_list`, `reload`, `hello`: no input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoInput {}

/// How `skills_load` treats skills already active.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ModeInput {
    /// Replace the active skills (the host's pinned ones stay).
    #[default]
    Replace,
    /// Push onto the active skills.
    Add,
}

/// `skills_load`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LoadInput {
    /// Skill names (bare, or qualified as layer:name or plugin-id:name).
    #[serde(alias = "skills")]
    #[schemars(length(min = 1))]
    names: Vec<String>,
    /// "replace" (default) replaces the active skills; "add" pushes onto them.
    #[serde(default)]
    mode: ModeInput,
}

/// `skills_unload`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UnloadInput {
    /// Skills to deactivate; they must be the most recently loaded ones.
    #[serde(default, alias = "skills")]
    names: Vec<String>,
    /// Deactivate every skill the model loaded.
    #[serde(default)]
    all: bool,
}

/// `skills_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// The active skill to read from. Default: the most recently loaded skill.
    #[serde(default)]
    skill: Option<String>,
    /// Relative path, such as references/guide.md.
    path: String,
}

/// `skills_run_script`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunInput {
    /// The active skill. Default: the most recently loaded skill.
    #[serde(default)]
    skill: Option<String>,
    /// Relative path under scripts/, such as scripts/extract.py.
    path: String,
    /// Arguments, passed as they are (no shell).
    #[serde(default)]
    args: Vec<String>,
    /// Environment variables for the script (upper-case names; some are refused).
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Working folder, relative to the skill folder.
    #[serde(default)]
    workdir: Option<String>,
    /// A timeout shorter than the host's, in milliseconds.
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
}

/// `skills_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    /// Words describing the task, such as "fill a pdf form".
    query: String,
    /// At most this many results (default 10, at most 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u64>,
    /// Only skills of this layer: enterprise, personal, project or plugin.
    #[serde(default)]
    layer: Option<String>,
    /// Only skills with this tag.
    #[serde(default)]
    tag: Option<String>,
}

/// `skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillInput {
    /// The skill to load.
    name: String,
}

/// `check_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckInput {
    /// The host tool about to run (Bash, Read, Write...).
    tool: String,
    /// Its input, as the model gave it.
    #[serde(default, deserialize_with = "unique_keys")]
    input: Value,
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
struct InstructionsInput {
    /// A character budget for the available-skills list.
    #[serde(default)]
    budget: Option<u64>,
}

/// `register_plugin` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RegisterInput {
    /// The plugin id (its skills are reachable as id:name).
    id: String,
    /// The plugin's skill folder.
    root: String,
}

/// `unregister_plugin` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UnregisterInput {
    /// The plugin id.
    id: String,
}

/// `host_activate` (host only).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HostActivateInput {
    /// Skill names to activate on the user's behalf, pinned for the task.
    #[serde(alias = "skills")]
    #[schemars(length(min = 1))]
    names: Vec<String>,
}

/// A request's input as it arrived: a parsed tree (the Rust API, MCP) or JSON text (the
/// JSON-lines transport, which so reads each input once, straight into its type).
enum Input<'a> {
    Tree(Value),
    Text(&'a RawValue),
}

fn parse<T: for<'de> Deserialize<'de>>(request: &str, input: Input<'_>) -> Result<T, ExecError> {
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
            if text == "null" || (text.contains("\"names\"") && text.contains("\"skills\"")) {
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

/// What a request's output becomes: a tree ([`call`]) or JSON text ([`respond_line`]).
trait Output {
    type Out;
    /// Any result, through a tree, so its keys come out sorted as they always have.
    fn tree<T: Serialize>(value: T) -> Self::Out;
    /// A result whose fields are declared in alphabetical order (nested ones too): written
    /// straight to text, in the same key order (`check_tool`'s, the hot path).
    fn sorted<T: Serialize>(value: T) -> Self::Out;
}

/// Outputs as trees, for [`call`].
struct AsTree;

impl Output for AsTree {
    type Out = Value;
    fn tree<T: Serialize>(value: T) -> Value {
        // The result types are plain data: serialising them cannot fail.
        serde_json::to_value(value).unwrap_or(Value::Null)
    }
    fn sorted<T: Serialize>(value: T) -> Value {
        Self::tree(value)
    }
}

/// Outputs as JSON text, for [`respond_line`].
struct AsText;

impl Output for AsText {
    type Out = Box<RawValue>;
    fn tree<T: Serialize>(value: T) -> Box<RawValue> {
        Self::sorted(AsTree::tree(value))
    }
    fn sorted<T: Serialize>(value: T) -> Box<RawValue> {
        serde_json::value::to_raw_value(&value).unwrap_or_else(|_| null_id().to_owned())
    }
}

/// Calls request `name` with its JSON input on `session` and returns its JSON output.
/// Every transport goes through here.
pub fn call(session: &Session, name: &str, input: Value) -> Result<Value, ExecError> {
    call_cancellable(session, name, input, None)
}

/// [`call`], with a cancellation that stops a script the call runs (`skills_run_script`).
pub fn call_cancellable(
    session: &Session,
    name: &str,
    input: Value,
    cancel: Option<crate::Cancellation>,
) -> Result<Value, ExecError> {
    dispatch::<AsTree>(session, name, Input::Tree(input), cancel)
}

/// Every request, by name: the one place a request becomes a call.
fn dispatch<O: Output>(
    session: &Session,
    name: &str,
    input: Input<'_>,
    cancel: Option<crate::Cancellation>,
) -> Result<O::Out, ExecError> {
    // Follow the index first: the skills of a plugin that left are deactivated (audited).
    session.sync()?;
    Ok(match name {
        "hello" => {
            parse::<NoInput>(name, input)?;
            O::tree(hello())
        }
        "skills_list" => {
            parse::<NoInput>(name, input)?;
            O::tree(session.list())
        }
        "skills_search" => {
            let input: SearchInput = parse(name, input)?;
            O::tree(
                session.search(&crate::SearchQuery {
                    query: input.query,
                    limit: input
                        .limit
                        .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
                    layer: input.layer,
                    tag: input.tag,
                })?,
            )
        }
        "skills_load" => {
            let input: LoadInput = parse(name, input)?;
            let mode = match input.mode {
                ModeInput::Replace => LoadMode::Replace,
                ModeInput::Add => LoadMode::Add,
            };
            O::tree(session.load(&input.names, mode)?)
        }
        "skills_unload" => {
            let input: UnloadInput = parse(name, input)?;
            match (input.all, input.names.is_empty()) {
                (true, _) => O::tree(session.unload_all()?),
                (false, false) => O::tree(session.unload(&input.names)?),
                (false, true) => {
                    return Err(ExecError::BadInput(
                        "name skills to unload, or pass all: true".into(),
                    ))
                }
            }
        }
        "skills_read" => {
            let input: ReadInput = parse(name, input)?;
            O::tree(session.read(input.skill.as_deref(), &input.path)?)
        }
        "skills_run_script" => {
            let input: RunInput = parse(name, input)?;
            O::tree(session.run_script(&ScriptCall {
                skill: input.skill,
                path: input.path,
                args: input.args,
                env: input.env.into_iter().collect(),
                workdir: input.workdir,
                timeout: match input.timeout_ms {
                    Some(0) => {
                        return Err(ExecError::BadInput(format!(
                            "{name}: timeout_ms is at least 1 (milliseconds); leave it out for the host's timeout"
                        )))
                    }
                    ms => ms.map(Duration::from_millis),
                },
                cancel,
            })?)
        }
        "skill" => {
            let input: SkillInput = parse(name, input)?;
            O::tree(session.skill(&input.name)?)
        }
        "check_tool" => {
            let input: CheckInput = parse(name, input)?;
            O::sorted(check_result(session.check_tool(&input.tool, &input.input)))
        }
        "tool_definitions" => {
            parse::<NoInput>(name, input)?;
            O::tree(tool_definitions(session))
        }
        "instructions" => {
            let input: InstructionsInput = parse(name, input)?;
            let budget = input
                .budget
                .map(|b| usize::try_from(b).unwrap_or(usize::MAX));
            O::tree(session.instructions(budget))
        }
        "register_plugin" => {
            let input: RegisterInput = parse(name, input)?;
            O::tree(session.register_plugin(&input.id, std::path::Path::new(&input.root))?)
        }
        "unregister_plugin" => {
            let input: UnregisterInput = parse(name, input)?;
            O::tree(session.unregister_plugin(&input.id)?)
        }
        "reload" => {
            parse::<NoInput>(name, input)?;
            O::tree(session.reload())
        }
        "host_activate" => {
            let input: HostActivateInput = parse(name, input)?;
            O::tree(session.host_activate(&input.names)?)
        }
        other => return Err(ExecError::UnknownTool(other.to_owned())),
    })
}

/// A decision as `check_tool` answers it.
fn check_result(d: crate::Decision) -> CheckResult {
    CheckResult {
        decision: if d.allowed {
            Verdict::Allow
        } else {
            Verdict::Deny
        },
        reason: d.reason,
        skill: d.skill,
        rule: d.rule,
    }
}

/// What `hello` answers.
pub fn hello() -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION.to_owned(),
        server: ServerInfo {
            name: "agent-skills".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        capabilities: [
            "events",
            "check_tool",
            "host_activate",
            "plugins",
            "pinned_versions",
        ]
        .map(str::to_owned)
        .to_vec(),
    }
}

/// A request as it arrives: `{"id": ANY, "tool": NAME, "input": {...}}`. The id is kept as
/// its raw bytes, to be echoed byte for byte.
#[derive(Deserialize)]
struct WireRequest<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// A request's id alone, for answering a request that is otherwise malformed: read only
/// when the line is one JSON object that names its id at most once.
#[derive(Deserialize)]
struct WireId<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// `{"id":ID,"ok":true,"output":OUTPUT}`: both already JSON text, written as they are.
fn ok_response(id: &RawValue, output: &RawValue) -> String {
    let (id, output) = (id.get(), output.get());
    let mut line = String::with_capacity(id.len() + output.len() + 28);
    line.push_str("{\"id\":");
    line.push_str(id);
    line.push_str(",\"ok\":true,\"output\":");
    line.push_str(output);
    line.push('}');
    line
}

#[derive(Serialize)]
struct WireErr<'a> {
    id: &'a RawValue,
    ok: bool,
    error: WireError<'a>,
}

#[derive(Serialize)]
struct WireError<'a> {
    code: &'a str,
    message: &'a str,
}

fn null_id() -> &'static RawValue {
    // `null` is valid JSON: this cannot fail.
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).unwrap_or_default())
}

/// A request's id as its answer echoes it: byte for byte, but for a carriage return, which
/// can stand in a JSON text only as whitespace between tokens and is written as a space,
/// so that the answer stays one line to a reader that also ends lines at `\r`.
fn wire_id(raw: Option<&RawValue>) -> std::borrow::Cow<'_, RawValue> {
    let id = or_null(raw);
    if !id.get().contains('\r') {
        return std::borrow::Cow::Borrowed(id);
    }
    RawValue::from_string(id.get().replace('\r', " ")).map_or(
        std::borrow::Cow::Borrowed(null_id()),
        std::borrow::Cow::Owned,
    )
}

/// A request's id or input as given, or `null` when it is missing.
fn or_null(raw: Option<&RawValue>) -> &RawValue {
    match raw {
        Some(raw) => raw,
        None => null_id(),
    }
}

pub use skills_model::{cut_text, MESSAGE_MAX};

/// An error as a transport shows it to a client: its stable code, then its message, cut
/// to [`MESSAGE_MAX`].
pub fn error_text(error: &ExecError) -> String {
    cut_text(&format!("{}: {error}", error.code()), MESSAGE_MAX).into_owned()
}

/// The response line (without its newline) for an error outside any request's handling
/// (a line that is not JSON, too long, not UTF-8).
pub fn error_line(code: &str, message: &str) -> String {
    error_response(null_id(), code, message)
}

fn error_response(id: &RawValue, code: &str, message: &str) -> String {
    serde_json::to_string(&WireErr {
        id,
        ok: false,
        error: WireError {
            code,
            message: &cut_text(message, MESSAGE_MAX),
        },
    })
    .unwrap_or_default()
}

/// Answers one request line (without its newline) with one response line (without its
/// newline). Never fails: a malformed request gets an error response.
pub fn respond_line(session: &Session, line: &str) -> String {
    respond_line_in(session, line, None)
}

/// [`respond_line`], with a cancellation that stops a script the line runs.
fn respond_line_in(session: &Session, line: &str, cancel: Option<&crate::Cancellation>) -> String {
    // An object: a struct's fields would also be read from an array, in order.
    if !line.trim_start().starts_with('{') {
        return error_line("SKILL_BAD_REQUEST", "a request is a JSON object");
    }
    let request: WireRequest<'_> = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            // A request that names its id once is answered with it, whatever else is wrong
            // with it (a field given twice): a host waiting on that id hears of it.
            let named = serde_json::from_str::<WireId<'_>>(line).ok();
            return error_response(
                &wire_id(named.and_then(|r| r.id)),
                "SKILL_BAD_REQUEST",
                &format!("not a JSON request: {e}"),
            );
        }
    };
    let id = &*wire_id(request.id);
    // Borrowed from the line unless the name holds escapes.
    let tool: Option<std::borrow::Cow<'_, str>> =
        request
            .tool
            .and_then(|t| match serde_json::from_str::<&str>(t.get()) {
                Ok(name) => Some(std::borrow::Cow::Borrowed(name)),
                Err(_) => serde_json::from_str::<String>(t.get())
                    .ok()
                    .map(std::borrow::Cow::Owned),
            });
    let Some(tool) = tool else {
        return error_response(
            id,
            "SKILL_BAD_REQUEST",
            "a request needs \"tool\" (a string) and \"input\"",
        );
    };
    let input = Input::Text(or_null(request.input));
    match dispatch::<AsText>(session, &tool, input, cancel.cloned()) {
        Ok(output) => ok_response(id, &output),
        Err(e) => error_response(id, e.code(), &e.to_string()),
    }
}

/// The bytes of answers past which [`respond_batch_part`] hands back what it has answered: a
/// batch of a thousand script runs, each answering with megabytes of escaped output, held
/// them all (gigabytes) before the first was written.
pub const BATCH_ANSWER_BYTES: usize = 16 << 20;

/// Answers a batch of pipelined request lines, in order, as [`respond_line`] answers each,
/// with the audit events of their `check_tool` decisions written together (one write for a
/// batch, or for each part of [`respond_batch_part`] when its answers are large, instead
/// of one per decision: [`Session::hold_decisions`]).
/// No answer may reach the host before this returns. When the events cannot be written,
/// every `check_tool` of the batch that held one is answered as a denial that says why,
/// as a single `check_tool` is when its event cannot be written.
///
/// Every line is answered, and every answer held until the last: a host that writes
/// answers as they come, and may be handed batches whose answers are large (scripts'
/// output), answers with [`respond_batch_part`] instead.
pub fn respond_batch(session: &Session, lines: &[&str]) -> Vec<String> {
    let mut answers = Vec::with_capacity(lines.len());
    while answers.len() < lines.len() {
        answers.extend(respond_batch_part(session, &lines[answers.len()..], None));
    }
    answers
}

/// [`respond_batch`] for the first lines of `lines`: it stops once its answers reach
/// [`BATCH_ANSWER_BYTES`] (a part holds that much and one answer more, at most) and hands
/// back the answers of the lines it answered, at least one whenever there is a line (and it
/// is not cancelled); the caller writes them and asks again for the rest
/// (`lines[answers.len()..]`). The events of a part are written before it returns. `cancel`
/// stops a script a line runs, and once cancelled no further line is answered (a host's
/// session ending on a signal).
pub fn respond_batch_part(
    session: &Session,
    lines: &[&str],
    cancel: Option<&crate::Cancellation>,
) -> Vec<String> {
    let held = session.hold_decisions();
    let mut answers = Vec::with_capacity(lines.len());
    let mut holding = Vec::new();
    let mut bytes = 0usize;
    for (i, line) in lines.iter().enumerate() {
        if cancel.is_some_and(crate::Cancellation::is_cancelled) {
            break;
        }
        let before = session.held_decisions();
        let answer = respond_line_in(session, line, cancel);
        bytes = bytes.saturating_add(answer.len());
        answers.push(answer);
        if session.held_decisions() != before {
            holding.push(i);
        }
        if bytes >= BATCH_ANSWER_BYTES {
            break;
        }
    }
    if let Err(e) = held.release() {
        for i in holding {
            let request = serde_json::from_str::<WireRequest<'_>>(lines[i]).ok();
            let id = wire_id(request.as_ref().and_then(|r| r.id));
            let refused = check_result(crate::Decision::refused(e.to_string()));
            let output = AsText::sorted(refused);
            answers[i] = ok_response(&id, &output);
        }
    }
    answers
}

fn input_schema<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
        // LLM APIs want an object schema with its properties, even when there are none.
        map.entry("properties").or_insert_with(|| json!({}));
    }
    schema
}

fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}

/// The runtime tools' definitions, for the host to pass to its model. Host-only requests
/// are never listed.
pub fn tool_definitions(session: &Session) -> Vec<ToolDefinition> {
    let visible = session.visible();
    let records: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
    let def = |name: &str, description: String, input_schema: Value| ToolDefinition {
        name: name.to_owned(),
        description,
        input_schema,
    };
    vec![
        def(
            "skills_list",
            "List the skills available in this session, with their descriptions and whether each is active.".into(),
            input_schema::<NoInput>(),
        ),
        def(
            "skills_search",
            "Search the skills available in this session by what the task is about (words like \"fill a pdf form\"); returns the best matches, best first, with their names and descriptions. Use it when no skill listed fits: the list may not show every skill.".into(),
            input_schema::<SearchInput>(),
        ),
        def(
            "skills_load",
            "Activate skills by name before following their instructions. mode \"replace\" (default) replaces the active skills; \"add\" pushes onto them.".into(),
            input_schema::<LoadInput>(),
        ),
        def(
            "skills_unload",
            "Deactivate skills. Named skills must be the most recently loaded ones; or pass all: true.".into(),
            input_schema::<UnloadInput>(),
        ),
        def(
            "skills_read",
            "Read a file of an active skill (a reference or an asset), by a path relative to the skill folder. Scripts are run with skills_run_script, not read.".into(),
            input_schema::<ReadInput>(),
        ),
        def(
            "skills_run_script",
            "Run a script from an active skill's scripts/ folder. Arguments are passed as they are, with no shell.".into(),
            input_schema::<RunInput>(),
        ),
        def(
            "skill",
            crate::skill_tool_description(&records, false, Some(16_000)),
            input_schema::<SkillInput>(),
        ),
    ]
}

/// One request's schemas, as documented in PROTOCOL.md.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestSchema {
    /// The request's name.
    pub name: &'static str,
    /// Whether it is for the host's code only.
    pub host_only: bool,
    /// JSON Schema of its input.
    pub input: Value,
    /// JSON Schema of its output.
    pub output: Value,
}

/// Every request with the JSON Schemas of its input and output, in documentation order.
pub fn schemas() -> Vec<RequestSchema> {
    let r = |name: &'static str, input: Value, output: Value| RequestSchema {
        name,
        host_only: HOST_ONLY.contains(&name),
        input,
        output,
    };
    vec![
        r("hello", input_schema::<NoInput>(), output_schema::<Hello>()),
        r(
            "skills_list",
            input_schema::<NoInput>(),
            output_schema::<crate::SkillList>(),
        ),
        r(
            "skills_search",
            input_schema::<SearchInput>(),
            output_schema::<crate::SearchResults>(),
        ),
        r(
            "skills_load",
            input_schema::<LoadInput>(),
            output_schema::<crate::LoadReceipt>(),
        ),
        r(
            "skills_unload",
            input_schema::<UnloadInput>(),
            output_schema::<crate::UnloadReceipt>(),
        ),
        r(
            "skills_read",
            input_schema::<ReadInput>(),
            output_schema::<crate::FileContent>(),
        ),
        r(
            "skills_run_script",
            input_schema::<RunInput>(),
            output_schema::<crate::ScriptRun>(),
        ),
        r(
            "skill",
            input_schema::<SkillInput>(),
            output_schema::<crate::SkillContent>(),
        ),
        r(
            "check_tool",
            input_schema::<CheckInput>(),
            output_schema::<CheckResult>(),
        ),
        r(
            "tool_definitions",
            input_schema::<NoInput>(),
            output_schema::<Vec<ToolDefinition>>(),
        ),
        r(
            "instructions",
            input_schema::<InstructionsInput>(),
            output_schema::<crate::Instructions>(),
        ),
        r(
            "register_plugin",
            input_schema::<RegisterInput>(),
            output_schema::<crate::PluginRegistered>(),
        ),
        r(
            "unregister_plugin",
            input_schema::<UnregisterInput>(),
            output_schema::<crate::PluginUnregistered>(),
        ),
        r(
            "reload",
            input_schema::<NoInput>(),
            output_schema::<crate::Reloaded>(),
        ),
        r(
            "host_activate",
            input_schema::<HostActivateInput>(),
            output_schema::<crate::LoadReceipt>(),
        ),
    ]
}

/// The JSON Schemas of the event lines and of audit events, as documented in PROTOCOL.md.
pub fn event_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("event", output_schema::<Event>()),
        ("audit", output_schema::<crate::AuditEvent>()),
    ]
}

/// A line the session writes without being asked (with `--events`): it has no `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The skills this session may see changed.
    SkillsChanged {
        /// The index generation that holds the change.
        generation: u64,
        /// Qualified names of skills that appeared.
        added: Vec<String>,
        /// Qualified names of skills whose files or frontmatter changed.
        changed: Vec<String>,
        /// Qualified names of skills that are gone.
        removed: Vec<String>,
    },
    /// An active skill changed on disk; the session serves and enforces the pinned
    /// version until it is loaded again.
    ActiveSkillOutdated {
        /// Its qualified name.
        skill: String,
        /// The digest in force.
        pinned: String,
        /// The digest on disk (absent when the file is gone).
        #[serde(skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
}

/// The events one publication of the index means for `session`: what changed among the
/// skills it may see, then each active skill that became outdated.
pub fn events(session: &Session, batch: &[ChangeEvent]) -> Vec<Event> {
    // Judged by the records the events carry: a removed skill is in no snapshot, and a
    // change can hide a skill from this session (for it, removed) or show it one (added).
    // What it may not see before or after is not mentioned.
    let seen = |e: &ChangeEvent| {
        let before = e.previous.as_deref().map(|p| session.can_see(p));
        (before, session.can_see(&e.record))
    };
    let (mut added, mut changed, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let mut said = HashSet::new();
    let generation = batch.iter().map(|e| e.generation).max().unwrap_or(0);
    for e in batch {
        // Which skill a name stands for is worked out per session (one it may not see
        // takes no name from one it may), so the index's shadowing, worked out over every
        // skill, says nothing of this session's: a change of what a name stands for to it
        // shows as the skill added, removed or changed that caused it.
        if matches!(e.event, ChangeKind::Shadowed | ChangeKind::Unshadowed) {
            continue;
        }
        let (list, which) = match (e.event, seen(e)) {
            (ChangeKind::Added, (_, true)) | (_, (Some(false), true)) => (&mut added, 0),
            (ChangeKind::Removed, (_, true)) | (_, (Some(true), false)) => (&mut removed, 2),
            (ChangeKind::Added | ChangeKind::Removed, (_, false)) | (_, (_, false)) => continue,
            (_, (_, true)) => (&mut changed, 1),
        };
        if said.insert((which, e.qualified_name.as_str())) {
            list.push(e.qualified_name.clone());
        }
    }
    let mut out = Vec::new();
    if !(added.is_empty() && changed.is_empty() && removed.is_empty()) {
        out.push(Event::SkillsChanged {
            generation,
            added,
            changed,
            removed,
        });
    }
    out.extend(
        session
            .newly_outdated()
            .into_iter()
            .map(|o| Event::ActiveSkillOutdated {
                skill: o.skill,
                pinned: o.pinned,
                current: o.current,
            }),
    );
    out
}

/// Serialises an event line (without its newline).
pub fn event_line(event: &Event) -> String {
    serde_json::to_string(event).unwrap_or_default()
}

#[cfg(test)]
mod output_order {
    use super::*;

    /// `check_tool`'s result goes to text without a tree: its keys must come out in the
    /// order a tree gives them (alphabetical), or hosts would see the bytes change.
    #[test]
    fn a_sorted_result_is_the_same_text_as_its_tree() {
        let full = CheckResult {
            decision: Verdict::Deny,
            reason: "why".into(),
            skill: Some("s".into()),
            rule: Some("Bash(git status:*)".into()),
        };
        let bare = CheckResult {
            decision: Verdict::Allow,
            reason: "why".into(),
            skill: None,
            rule: None,
        };
        for result in [full, bare] {
            let text = AsText::sorted(result.clone());
            let tree = serde_json::to_string(&AsTree::tree(result)).unwrap();
            assert_eq!(text.get(), tree);
        }
    }
}
