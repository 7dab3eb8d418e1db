//! The request catalogue: one definition per request (its name, input and output types,
//! audience, whether it may run programs, its description, and the call on a [`Session`]
//! it becomes), and everything derived from the one list of them, [`REQUESTS`]: dispatch,
//! the runtime tools' definitions, the documented schemas, the host-only list, the runtime
//! tools' list and which requests may run programs.
//!
//! Adding a request is one type implementing [`Request`] and one line in [`REQUESTS`].

use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use skills_executor::{
    Cancellation, CheckResult, ExecError, FileContent, Hello, Instructions, LoadMode, LoadReceipt,
    PluginRegistered, PluginUnregistered, Reloaded, ScriptCall, ScriptRun, SearchQuery,
    SearchResults, ServerInfo, Session, SkillContent, SkillList, UnavailableSkills, UnloadReceipt,
};
use skills_model::SkillRecord;

use crate::input::{
    parse, CheckInput, HostActivateInput, Input, InstructionsInput, LoadInput, ModeInput, NoInput,
    ReadInput, RegisterInput, RunInput, SearchInput, SkillInput, UnavailableInput, UnloadInput,
    UnregisterInput,
};
use crate::output::{check_result, AsText, AsTree, Output};
use crate::schema::{input_schema, output_schema, RequestSchema, ToolDefinition};

/// Who a request is for.
#[derive(Debug, Clone, Copy)]
enum Audience {
    /// A runtime tool a model calls through the host: `tool_definitions` lists it and the
    /// MCP server serves it.
    Model,
    /// The host's own code (`hello`, `check_tool`...), never offered to a model.
    Host,
    /// The host's own code only: a host must never forward it from a model's tool call.
    HostOnly,
}

impl Audience {
    /// `==`, in a constant.
    const fn is(self, other: Audience) -> bool {
        self as u8 == other as u8
    }
}

/// Whether a request may start a program (a script, or a hook of a skill it activates or
/// deactivates).
#[derive(Debug, Clone, Copy)]
enum Programs {
    /// It starts none.
    None,
    /// It may start one.
    MayRun,
}

/// One request of the protocol.
trait Request {
    /// Its name on the wire.
    const NAME: &'static str;
    /// Who it is for.
    const AUDIENCE: Audience;
    /// Whether it may start a program.
    const PROGRAMS: Programs = Programs::None;
    /// What it does (for a runtime tool, what the model reads).
    const DESCRIPTION: &'static str;
    /// Its input, as the wire gives it.
    type Input: DeserializeOwned + JsonSchema;
    /// Its output, as the session returns it.
    type Output: Serialize + JsonSchema;

    /// The call on `session` the request becomes.
    fn call(
        session: &Session,
        input: Self::Input,
        cancel: Option<Cancellation>,
    ) -> Result<Self::Output, ExecError>;

    /// The output as `O` writes it: through a tree, unless its keys are declared sorted.
    fn output<O: Output>(output: Self::Output) -> O::Out {
        O::tree(output)
    }

    /// Its description in the runtime tools' definitions, which may name the skills the
    /// session sees (`visible`).
    fn description(_visible: &[&SkillRecord]) -> String {
        Self::DESCRIPTION.to_owned()
    }
}

/// A request answered from its input as it arrived, in the form `Out`.
type Answer<Out> = for<'a> fn(&Session, Input<'a>, Option<Cancellation>) -> Result<Out, ExecError>;

/// A request of the catalogue, its types erased.
struct Entry {
    name: &'static str,
    audience: Audience,
    programs: Programs,
    tree: Answer<Value>,
    text: Answer<String>,
    description: fn(&[&SkillRecord]) -> String,
    input_schema: fn() -> Value,
    output_schema: fn() -> Value,
}

impl Entry {
    const fn of<R: Request>() -> Entry {
        Entry {
            name: R::NAME,
            audience: R::AUDIENCE,
            programs: R::PROGRAMS,
            tree: answer::<R, AsTree>,
            text: answer::<R, AsText>,
            description: R::description,
            input_schema: input_schema::<R::Input>,
            output_schema: output_schema::<R::Output>,
        }
    }
}

/// Request `R`: its input read into its type, called, and its output written as `O`.
fn answer<R: Request, O: Output>(
    session: &Session,
    input: Input<'_>,
    cancel: Option<Cancellation>,
) -> Result<O::Out, ExecError> {
    let input = parse::<R::Input>(R::NAME, input)?;
    answer_parsed::<R, O>(session, input, cancel)
}

/// Request `R` with its input already read: called, and its output written as `O`.
fn answer_parsed<R: Request, O: Output>(
    session: &Session,
    input: R::Input,
    cancel: Option<Cancellation>,
) -> Result<O::Out, ExecError> {
    Ok(R::output::<O>(R::call(session, input, cancel)?))
}

/// `check_tool`'s name.
pub(crate) const CHECK_TOOL: &str = CheckTool::NAME;

/// `check_tool` for the JSON-lines framing, its input read with the line
/// ([`crate::wire`]'s one pass): what [`answer_text`] does for it once the input is read.
pub(crate) fn answer_check_text(
    session: &Session,
    input: CheckInput,
    cancel: Option<Cancellation>,
) -> Result<String, ExecError> {
    session.sync()?;
    answer_parsed::<CheckTool, AsText>(session, input, cancel)
}

/// Every request, in documentation order: the one list of them.
const REQUESTS: &[Entry] = &[
    Entry::of::<HelloRequest>(),
    Entry::of::<SkillsList>(),
    Entry::of::<SkillsSearch>(),
    Entry::of::<SkillsLoad>(),
    Entry::of::<SkillsUnload>(),
    Entry::of::<SkillsRead>(),
    Entry::of::<SkillsRunScript>(),
    Entry::of::<SkillTool>(),
    Entry::of::<CheckTool>(),
    Entry::of::<ToolDefinitions>(),
    Entry::of::<InstructionsRequest>(),
    Entry::of::<RegisterPlugin>(),
    Entry::of::<UnregisterPlugin>(),
    Entry::of::<Reload>(),
    Entry::of::<HostActivate>(),
    Entry::of::<SkillsUnavailable>(),
];

/// Requests for the host's own code. A host must never forward them from a model's tool
/// calls; `tool_definitions` never lists them.
pub const HOST_ONLY: [&str; count(Audience::HostOnly)] = names(Audience::HostOnly);

/// The runtime tools a model calls (what `tool_definitions` lists, and what the MCP server
/// serves as tools).
pub const RUNTIME_TOOLS: [&str; count(Audience::Model)] = names(Audience::Model);

/// How many requests are for `audience`.
const fn count(audience: Audience) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < REQUESTS.len() {
        if REQUESTS[i].audience.is(audience) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names of the requests for `audience`, in catalogue order.
const fn names<const N: usize>(audience: Audience) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < REQUESTS.len() {
        if REQUESTS[i].audience.is(audience) {
            out[n] = REQUESTS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// No two requests share a name (checked when compiling).
const _: () = {
    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    let mut i = 0;
    while i < REQUESTS.len() {
        let mut j = i + 1;
        while j < REQUESTS.len() {
            assert!(
                !same(REQUESTS[i].name, REQUESTS[j].name),
                "a request named twice"
            );
            j += 1;
        }
        i += 1;
    }
};

/// The catalogue's entry for request `name`.
fn entry(name: &str) -> Result<&'static Entry, ExecError> {
    REQUESTS
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| ExecError::UnknownTool(name.to_owned()))
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
    cancel: Option<Cancellation>,
) -> Result<Value, ExecError> {
    // Follow the index first: the skills of a plugin that left are deactivated (audited).
    session.sync()?;
    (entry(name)?.tree)(session, Input::Tree(input), cancel)
}

/// [`call_cancellable`] for the JSON-lines framing: the input as text, the output as text.
pub(crate) fn answer_text(
    session: &Session,
    name: &str,
    input: Input<'_>,
    cancel: Option<Cancellation>,
) -> Result<String, ExecError> {
    session.sync()?;
    (entry(name)?.text)(session, input, cancel)
}

/// Whether request `name` may start a program (a script or a hook): the MCP server bounds
/// how many such calls of one session run at once.
pub fn may_run_programs(name: &str) -> bool {
    REQUESTS
        .iter()
        .any(|e| e.name == name && matches!(e.programs, Programs::MayRun))
}

/// The runtime tools' definitions, for the host to pass to its model. Host-only requests
/// are never listed.
pub fn tool_definitions(session: &Session) -> Vec<ToolDefinition> {
    let visible = session.visible();
    let records: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
    REQUESTS
        .iter()
        .filter(|e| e.audience.is(Audience::Model))
        .map(|e| ToolDefinition {
            name: e.name.to_owned(),
            description: (e.description)(&records),
            input_schema: (e.input_schema)(),
        })
        .collect()
}

/// Every request with the JSON Schemas of its input and output, in documentation order.
pub fn schemas() -> Vec<RequestSchema> {
    REQUESTS
        .iter()
        .map(|e| RequestSchema {
            name: e.name,
            host_only: e.audience.is(Audience::HostOnly),
            input: (e.input_schema)(),
            output: (e.output_schema)(),
        })
        .collect()
}

/// What `hello` answers.
pub fn hello() -> Hello {
    Hello {
        protocol: crate::PROTOCOL_VERSION.to_owned(),
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

/// A count the wire gives as a `u64`, as the session takes it.
fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// `hello`.
struct HelloRequest;

impl Request for HelloRequest {
    const NAME: &'static str = "hello";
    const AUDIENCE: Audience = Audience::Host;
    const DESCRIPTION: &'static str =
        "Say which protocol version and optional parts this server has.";
    type Input = NoInput;
    type Output = Hello;
    fn call(_: &Session, _: NoInput, _: Option<Cancellation>) -> Result<Hello, ExecError> {
        Ok(hello())
    }
}

/// `skills_list`.
struct SkillsList;

impl Request for SkillsList {
    const NAME: &'static str = "skills_list";
    const AUDIENCE: Audience = Audience::Model;
    const DESCRIPTION: &'static str = "List the skills available in this session, with their descriptions and whether each is active.";
    type Input = NoInput;
    type Output = SkillList;
    fn call(
        session: &Session,
        _: NoInput,
        _: Option<Cancellation>,
    ) -> Result<SkillList, ExecError> {
        Ok(session.list())
    }
}

/// `skills_search`.
struct SkillsSearch;

impl Request for SkillsSearch {
    const NAME: &'static str = "skills_search";
    const AUDIENCE: Audience = Audience::Model;
    const DESCRIPTION: &'static str = "Search the skills available in this session by what the task is about (words like \"fill a pdf form\"); returns the best matches, best first, with their names and descriptions. Use it when no skill listed fits: the list may not show every skill.";
    type Input = SearchInput;
    type Output = SearchResults;
    fn call(
        session: &Session,
        input: SearchInput,
        _: Option<Cancellation>,
    ) -> Result<SearchResults, ExecError> {
        session.search(&SearchQuery {
            query: input.query,
            limit: input.limit.map(size),
            layer: input.layer,
            tag: input.tag,
            explain: input.explain,
        })
    }
}

/// `skills_load`.
struct SkillsLoad;

impl Request for SkillsLoad {
    const NAME: &'static str = "skills_load";
    const AUDIENCE: Audience = Audience::Model;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str = "Activate skills by name before following their instructions. mode \"replace\" (default) replaces the active skills; \"add\" pushes onto them.";
    type Input = LoadInput;
    type Output = LoadReceipt;
    fn call(
        session: &Session,
        input: LoadInput,
        _: Option<Cancellation>,
    ) -> Result<LoadReceipt, ExecError> {
        let mode = match input.mode {
            ModeInput::Replace => LoadMode::Replace,
            ModeInput::Add => LoadMode::Add,
        };
        session.load(&input.names, mode)
    }
}

/// `skills_unload`.
struct SkillsUnload;

impl Request for SkillsUnload {
    const NAME: &'static str = "skills_unload";
    const AUDIENCE: Audience = Audience::Model;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str =
        "Deactivate skills. Named skills must be the most recently loaded ones; or pass all: true.";
    type Input = UnloadInput;
    type Output = UnloadReceipt;
    fn call(
        session: &Session,
        input: UnloadInput,
        _: Option<Cancellation>,
    ) -> Result<UnloadReceipt, ExecError> {
        match (input.all, input.names.is_empty()) {
            (true, _) => session.unload_all(),
            (false, false) => session.unload(&input.names),
            (false, true) => Err(ExecError::BadInput(
                "name skills to unload, or pass all: true".into(),
            )),
        }
    }
}

/// `skills_read`.
struct SkillsRead;

impl Request for SkillsRead {
    const NAME: &'static str = "skills_read";
    const AUDIENCE: Audience = Audience::Model;
    const DESCRIPTION: &'static str = "Read a file of an active skill (a reference or an asset), by a path relative to the skill folder. Scripts are run with skills_run_script, not read.";
    type Input = ReadInput;
    type Output = FileContent;
    fn call(
        session: &Session,
        input: ReadInput,
        _: Option<Cancellation>,
    ) -> Result<FileContent, ExecError> {
        session.read(input.skill.as_deref(), &input.path)
    }
}

/// `skills_run_script`.
struct SkillsRunScript;

impl Request for SkillsRunScript {
    const NAME: &'static str = "skills_run_script";
    const AUDIENCE: Audience = Audience::Model;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str = "Run a script from an active skill's scripts/ folder. Arguments are passed as they are, with no shell.";
    type Input = RunInput;
    type Output = ScriptRun;
    fn call(
        session: &Session,
        input: RunInput,
        cancel: Option<Cancellation>,
    ) -> Result<ScriptRun, ExecError> {
        let timeout = match input.timeout_ms {
            Some(0) => {
                return Err(ExecError::BadInput(format!(
                "{}: timeout_ms is at least 1 (milliseconds); leave it out for the host's timeout",
                Self::NAME
            )))
            }
            ms => ms.map(Duration::from_millis),
        };
        session.run_script(&ScriptCall {
            skill: input.skill,
            path: input.path,
            args: input.args,
            env: input.env.into_iter().collect(),
            workdir: input.workdir,
            timeout,
            cancel,
        })
    }
}

/// `skill`.
struct SkillTool;

impl Request for SkillTool {
    const NAME: &'static str = "skill";
    const AUDIENCE: Audience = Audience::Model;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str =
        "Load a skill by name and return its instructions (the skills available are listed).";
    type Input = SkillInput;
    type Output = SkillContent;
    fn call(
        session: &Session,
        input: SkillInput,
        _: Option<Cancellation>,
    ) -> Result<SkillContent, ExecError> {
        session.skill(&input.name)
    }
    fn description(visible: &[&SkillRecord]) -> String {
        skills_executor::skill_tool_description(visible, false, Some(16_000))
    }
}

/// `check_tool`.
struct CheckTool;

impl Request for CheckTool {
    const NAME: &'static str = "check_tool";
    const AUDIENCE: Audience = Audience::Host;
    const DESCRIPTION: &'static str =
        "Ask whether a host tool may run with the input the model gave it.";
    type Input = CheckInput;
    type Output = CheckResult;
    fn call(
        session: &Session,
        input: CheckInput,
        _: Option<Cancellation>,
    ) -> Result<CheckResult, ExecError> {
        Ok(check_result(session.check_tool(&input.tool, &input.input)))
    }
    // The hot path: written straight to text by the JSON-lines framing.
    fn output<O: Output>(output: CheckResult) -> O::Out {
        O::check(output)
    }
}

/// `tool_definitions`.
struct ToolDefinitions;

impl Request for ToolDefinitions {
    const NAME: &'static str = "tool_definitions";
    const AUDIENCE: Audience = Audience::Host;
    const DESCRIPTION: &'static str = "The runtime tools, in the form LLM APIs take.";
    type Input = NoInput;
    type Output = Vec<ToolDefinition>;
    fn call(
        session: &Session,
        _: NoInput,
        _: Option<Cancellation>,
    ) -> Result<Vec<ToolDefinition>, ExecError> {
        Ok(tool_definitions(session))
    }
}

/// `instructions`.
struct InstructionsRequest;

impl Request for InstructionsRequest {
    const NAME: &'static str = "instructions";
    const AUDIENCE: Audience = Audience::Host;
    const DESCRIPTION: &'static str =
        "The system-prompt text: the available skills, within a character budget.";
    type Input = InstructionsInput;
    type Output = Instructions;
    fn call(
        session: &Session,
        input: InstructionsInput,
        _: Option<Cancellation>,
    ) -> Result<Instructions, ExecError> {
        Ok(session.instructions(input.budget.map(size)))
    }
}

/// `register_plugin`.
struct RegisterPlugin;

impl Request for RegisterPlugin {
    const NAME: &'static str = "register_plugin";
    const AUDIENCE: Audience = Audience::HostOnly;
    const DESCRIPTION: &'static str =
        "Register a plugin's skill folder or URL root (untrusted unless the host trusts it).";
    type Input = RegisterInput;
    type Output = PluginRegistered;
    fn call(
        session: &Session,
        input: RegisterInput,
        _: Option<Cancellation>,
    ) -> Result<PluginRegistered, ExecError> {
        match (&input.root, &input.server) {
            (Some(root), None) => session.register_plugin(&input.id, std::path::Path::new(root)),
            (None, Some(server)) => session.register_plugin_server(&input.id, server),
            _ => Err(ExecError::BadInput(
                "register_plugin takes one of \"root\" (a folder) and \"server\" (a declared MCP server's label, or its https:// URL)".into(),
            )),
        }
    }
}

/// `unregister_plugin`.
struct UnregisterPlugin;

impl Request for UnregisterPlugin {
    const NAME: &'static str = "unregister_plugin";
    const AUDIENCE: Audience = Audience::HostOnly;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str =
        "Unregister a plugin registered over the protocol and deactivate its skills.";
    type Input = UnregisterInput;
    type Output = PluginUnregistered;
    fn call(
        session: &Session,
        input: UnregisterInput,
        _: Option<Cancellation>,
    ) -> Result<PluginUnregistered, ExecError> {
        session.unregister_plugin(&input.id)
    }
}

/// `reload`.
struct Reload;

impl Request for Reload {
    const NAME: &'static str = "reload";
    const AUDIENCE: Audience = Audience::HostOnly;
    const DESCRIPTION: &'static str = "Read the skill roots again.";
    type Input = NoInput;
    type Output = Reloaded;
    fn call(session: &Session, _: NoInput, _: Option<Cancellation>) -> Result<Reloaded, ExecError> {
        Ok(session.reload())
    }
}

/// `host_activate`.
struct HostActivate;

impl Request for HostActivate {
    const NAME: &'static str = "host_activate";
    const AUDIENCE: Audience = Audience::HostOnly;
    const PROGRAMS: Programs = Programs::MayRun;
    const DESCRIPTION: &'static str = "Activate skills on the user's behalf, pinned for the task.";
    type Input = HostActivateInput;
    type Output = LoadReceipt;
    fn call(
        session: &Session,
        input: HostActivateInput,
        _: Option<Cancellation>,
    ) -> Result<LoadReceipt, ExecError> {
        session.host_activate(&input.names)
    }
}

/// `skills_unavailable`.
struct SkillsUnavailable;

impl Request for SkillsUnavailable {
    const NAME: &'static str = "skills_unavailable";
    const AUDIENCE: Audience = Audience::HostOnly;
    const DESCRIPTION: &'static str = "Say which tools the host offers, and list the skills whose needs are unmet here and why (never for the model).";
    type Input = UnavailableInput;
    type Output = UnavailableSkills;
    fn call(
        session: &Session,
        input: UnavailableInput,
        _: Option<Cancellation>,
    ) -> Result<UnavailableSkills, ExecError> {
        if let Some(tools) = input.host_tools {
            session.set_host_tools(tools);
        }
        Ok(session.unavailable())
    }
}
