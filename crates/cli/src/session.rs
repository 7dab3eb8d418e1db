//! `skillctl session`: the executor's protocol over JSON lines, so a host in any language
//! can drive it. One request per line on stdin, one response per line on stdout, and with
//! `--events` event lines (no `id`) when the skills change. This module only moves lines:
//! every request is answered by `skills_protocol`.

use std::io::{BufRead as _, BufReader, BufWriter, Read as _, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use parking_lot::Mutex;
use skills_executor::{
    AllowedToolsMode, AuditSink, DefaultDecision, Delivery, Executor, JsonlFileSink, NullSink,
    OtlpExporter, Policy, Session, SessionContext, SkillWrites,
};
use skills_model::Layer;
use skills_protocol as protocol;

use crate::roots::RootArgs;

/// What `check_tool` answers when no active skill restricts tools.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DecisionArg {
    /// Allow the call.
    Allow,
    /// Deny the call.
    Deny,
}

/// What a skill's `allowed-tools` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AllowedToolsModeArg {
    /// Only the listed tools, while the skill is active.
    Restrict,
    /// The listed tools are allowed; the rest get the default decision.
    Preapprove,
}

/// How active skills' instructions reach the model.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DeliveryArg {
    /// In the load's tool result.
    ToolResult,
    /// In `instructions` on every model call.
    TopLevel,
}

/// A `--trust` value: a layer, one plugin as `plugin:ID`, or a remote origin as
/// `url:https://HOST` or `mcp:LABEL`.
#[derive(Debug, Clone)]
pub(crate) enum TrustArg {
    Layer(Layer),
    Plugin(String),
    Origin(skills_model::RemoteOrigin),
}

fn parse_trust(s: &str) -> Result<TrustArg, String> {
    match s.split_once(':') {
        Some(("plugin", id)) if !id.is_empty() => Ok(TrustArg::Plugin(id.to_owned())),
        Some(("url" | "mcp", _)) => s.parse().map(TrustArg::Origin).map_err(|e| format!("{e}")),
        Some(_) => Err(format!(
            "{s:?}: expected a layer, plugin:ID, url:https://HOST or mcp:LABEL"
        )),
        None => s
            .parse::<Layer>()
            .map(TrustArg::Layer)
            .map_err(|e| e.to_string()),
    }
}

/// Who a session works for, matched against skills' `scope`.
#[derive(Debug, clap::Args)]
pub(crate) struct ContextArgs {
    /// The agent type (for skills' `scope`).
    #[arg(long)]
    agent: Option<String>,
    /// The tenant (for skills' `scope`).
    #[arg(long)]
    tenant: Option<String>,
    /// The environment (for skills' `scope`).
    #[arg(long)]
    environment: Option<String>,
}

impl ContextArgs {
    /// The session context these options describe.
    pub(crate) fn context(&self) -> SessionContext {
        let mut context = SessionContext::builder();
        if let Some(a) = &self.agent {
            context = context.agent(a);
        }
        if let Some(t) = &self.tenant {
            context = context.tenant(t);
        }
        if let Some(e) = &self.environment {
            context = context.environment(e);
        }
        context.build()
    }

    /// The context as words: `agent A, tenant T`, or `no agent, tenant or environment`.
    pub(crate) fn describe(&self) -> String {
        let parts: Vec<String> = [
            ("agent", &self.agent),
            ("tenant", &self.tenant),
            ("environment", &self.environment),
        ]
        .iter()
        .filter_map(|(what, v)| {
            v.as_deref()
                .map(|v| format!("{what} {}", crate::out::visible(v)))
        })
        .collect();
        if parts.is_empty() {
            "no agent, tenant or environment".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// The options every command that serves sessions shares (`session`, `mcp`).
#[derive(Debug, clap::Args)]
pub(crate) struct SessionOptions {
    #[command(flatten)]
    pub(crate) roots: RootArgs,
    /// Append audit events to this file (JSON lines).
    #[arg(long, value_name = "FILE")]
    audit: Option<std::path::PathBuf>,
    /// fsync the audit file after every event.
    #[arg(long)]
    audit_fsync: bool,
    /// Also export every audit event as an OpenTelemetry log record (OTLP over
    /// HTTP/protobuf) to URL (http://HOST:4318 sends to /v1/logs). Never holds up a call:
    /// what the export queue cannot take is dropped, counted and warned of.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Trust a layer, one plugin as plugin:ID, or a remote origin as url:https://HOST or
    /// mcp:LABEL, to run scripts and hooks (repeatable; project, plugins registered over
    /// the protocol and every remote origin are untrusted by default).
    #[arg(long, value_name = "LAYER", value_parser = parse_trust)]
    trust: Vec<TrustArg>,
    /// Declare a host tool that runs code, as Bash does (repeatable): check_tool denies it
    /// while a skill of an untrusted remote origin is active.
    #[arg(long, value_name = "TOOL")]
    code_execution_tool: Vec<String>,
    /// The cap on active skills.
    #[arg(long, default_value_t = 8)]
    max_active: usize,
    #[command(flatten)]
    context: ContextArgs,
    /// Declare a tool's primary argument for check_tool: TOOL=FIELD (repeatable).
    #[arg(long, value_name = "TOOL=FIELD")]
    primary_arg: Vec<String>,
    /// Declare a host tool whose FIELD holds a path (repeatable): every path rule and
    /// protection applies to it, as to Read, Write, Edit, MultiEdit, NotebookEdit, Grep,
    /// Glob and LS.
    #[arg(long, value_name = "TOOL=FIELD")]
    path_tool: Vec<String>,
    /// Let calls pass the environment variable NAME to any script (repeatable; skills add
    /// their own with security.scriptEnv).
    #[arg(long, value_name = "NAME")]
    script_env: Vec<String>,
    /// Authoring: let host write tools write inside skill folders (audited as
    /// policy_override).
    #[arg(long)]
    allow_skill_writes: bool,
    /// What check_tool answers when no active skill restricts tools (and, with
    /// --allowed-tools-mode preapprove, when no active skill pre-approves the call).
    #[arg(long, value_enum, default_value = "allow")]
    default_decision: DecisionArg,
    /// What a skill's allowed-tools means: restrict (only listed tools, the Agent Skills
    /// reading) or preapprove (listed tools are allowed, the rest get --default-decision:
    /// Claude Code's reading). Audited as policy_override when not restrict.
    #[arg(long, value_enum, default_value = "restrict")]
    allowed_tools_mode: AllowedToolsModeArg,
    /// How active skills' instructions reach the model: in the load's tool result, or in
    /// `instructions` on every call.
    #[arg(long, value_enum, default_value = "tool-result")]
    delivery: DeliveryArg,
    /// Do not follow the filesystem: the skills are those found at start (and `reload`).
    #[arg(long)]
    no_watch: bool,
    /// Grant the secrets of this dotenv file (NAME=value lines) to the scripts of trusted
    /// skills that declare them in requires.secrets. Refused at start unless it is a
    /// regular file of this user's that no one else may read (chmod 600).
    #[arg(long, value_name = "FILE")]
    secrets_file: Option<std::path::PathBuf>,
    /// Grant the secret NAME, its value taken from this environment (repeatable).
    #[arg(long, value_name = "NAME")]
    secret: Vec<String>,
    /// A tool this host offers the model (repeatable): skills that need a tool
    /// (tool-binding, requires_toolsets, agents/openai.yaml) are judged against them.
    #[arg(long, value_name = "NAME")]
    host_tool: Vec<String>,
    /// Offer skills whose needs are unmet here anyway, with a note (audited as
    /// policy_override).
    #[arg(long)]
    offer_unavailable: bool,
}

impl SessionOptions {
    /// The executor these options describe, over a watching index unless `--no-watch`.
    pub(crate) fn executor(&self) -> Result<Executor> {
        self.executor_serving(skills_executor::ScriptServing::Withheld)
    }

    /// The executor, with how MCP's skills extension serves skills with scripts
    /// (`skillctl mcp --serve-scripts`).
    pub(crate) fn executor_serving(
        &self,
        serving: skills_executor::ScriptServing,
    ) -> Result<Executor> {
        let built = self
            .roots
            .build(!self.no_watch, crate::roots::Pinning::Lock)?;
        let (index, servers) = (Arc::new(built.index), built.servers);
        let mut policy = Policy::builder()
            .script_serving(serving)
            .max_active(self.max_active)
            .default_decision(match self.default_decision {
                DecisionArg::Allow => DefaultDecision::Allow,
                DecisionArg::Deny => DefaultDecision::Deny,
            })
            .allowed_tools_mode(match self.allowed_tools_mode {
                AllowedToolsModeArg::Restrict => AllowedToolsMode::Restrict,
                AllowedToolsModeArg::Preapprove => AllowedToolsMode::Preapprove,
            })
            .delivery(match self.delivery {
                DeliveryArg::ToolResult => Delivery::ToolResult,
                DeliveryArg::TopLevel => Delivery::TopLevel,
            });
        for trust in &self.trust {
            policy = match trust {
                TrustArg::Layer(layer) => policy.trust(*layer),
                TrustArg::Plugin(id) => policy.trust_plugin(id),
                TrustArg::Origin(origin) => policy.trust_origin(origin.clone()),
            };
        }
        for tool in &self.code_execution_tool {
            anyhow::ensure!(
                skills_executor::is_plain_tool_name(tool),
                "--code-execution-tool {tool:?}: not a plain tool name (1 to 128 ASCII letters, digits, '_', '-', '.' or ':')"
            );
            policy = policy.code_execution_tool(tool);
        }
        for spec in &self.primary_arg {
            let (tool, field) = spec
                .split_once('=')
                .with_context(|| format!("--primary-arg {spec:?}: expected TOOL=FIELD"))?;
            anyhow::ensure!(
                skills_executor::is_plain_tool_name(tool),
                "--primary-arg {spec:?}: {tool:?} is not a plain tool name (1 to 128 ASCII letters, digits, '_', '-', '.' or ':'), and check_tool denies every call to such a tool"
            );
            policy = policy.primary_arg(tool, field);
        }
        for spec in &self.path_tool {
            let (tool, field) = spec
                .split_once('=')
                .with_context(|| format!("--path-tool {spec:?}: expected TOOL=FIELD"))?;
            anyhow::ensure!(
                skills_executor::is_plain_tool_name(tool),
                "--path-tool {spec:?}: {tool:?} is not a plain tool name (1 to 128 ASCII letters, digits, '_', '-', '.' or ':'), and check_tool denies every call to such a tool"
            );
            policy = policy.path_tool(tool, field);
        }
        if self.allow_skill_writes {
            policy = policy.skill_writes(SkillWrites::Allowed);
        }
        for name in &self.script_env {
            policy = policy.allow_script_env(name);
        }
        for (name, value) in crate::secrets::grants(self.secrets_file.as_deref(), &self.secret)? {
            policy = policy
                .grant_secret(&name, value)
                .with_context(|| format!("granting the secret {name}"))?;
        }
        if !self.host_tool.is_empty() {
            policy = policy.host_tools(&self.host_tool);
        }
        if self.offer_unavailable {
            policy = policy.unavailable(skills_executor::Unavailable::Offered);
        }
        // Scripts run under this very binary as their supervisor: every descendant dies
        // with the script.
        if let Ok(exe) = std::env::current_exe() {
            policy = policy.script_supervisor(exe);
        }
        let sink: Arc<dyn AuditSink> = match &self.audit {
            Some(path) => Arc::new(
                JsonlFileSink::open(path)
                    .with_context(|| format!("opening the audit file {}", path.display()))?
                    .with_fsync(self.audit_fsync),
            ),
            None => Arc::new(NullSink),
        };
        let mut executor = servers
            .iter()
            .fold(Executor::builder(index), |b, (label, source)| {
                b.mcp_server(label, Arc::clone(source))
            })
            .policy(policy.build())
            .audit_sink(sink)
            .url_roots(self.roots.url_roots())
            .mcp_urls(self.roots.mcp_urls());
        if let Some(url) = &self.otlp_endpoint {
            let exporter = OtlpExporter::builder(url)
                .service_name("skillctl")
                .build()
                .with_context(|| format!("--otlp-endpoint {url}"))?;
            executor = executor.audit_export(exporter);
        }
        Ok(executor.build())
    }

    /// Who the sessions work for.
    pub(crate) fn context(&self) -> SessionContext {
        self.context.context()
    }

    /// A session of `executor` for these options' context; the options in force that
    /// loosen the defaults are audited as `policy_override` (by the executor, as
    /// `skillctl mcp` audits each of its sessions).
    pub(crate) fn session(&self, executor: &Executor) -> Result<Session> {
        let session = executor.session(self.context.context());
        session
            .audit_policy_overrides()
            .context("auditing the session's options")?;
        Ok(session)
    }
}

/// Serve the runtime tools as JSON lines on stdin and stdout.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl session --audit audit.jsonl
  skillctl session --trust project --allowed-tools-mode preapprove --events

Exit status: 0 at the end of input, 2 usage error or the audit file cannot be opened")]
pub(crate) struct SessionArgs {
    #[command(flatten)]
    options: SessionOptions,
    /// Also write event lines (no `id`): skills_changed, active_skill_outdated.
    #[arg(long)]
    events: bool,
}

/// The longest request line served: 4 MiB.
const MAX_LINE: u64 = 4 << 20;

type Out = Mutex<BufWriter<std::io::Stdout>>;

fn write_line(out: &Out, line: &str, flush: bool) -> std::io::Result<()> {
    let mut out = out.lock();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    if flush {
        out.flush()?;
    }
    Ok(())
}

pub(crate) fn run(args: &SessionArgs) -> Result<ExitCode> {
    let executor = args.options.executor()?;
    let served = serve_session(args, &executor);
    flush_export(&executor);
    served
}

/// Gives the audit's OpenTelemetry export, if any, its drain time before the process
/// exits (the events of the session's end included): a process may exit before the last
/// handle on the exporter is dropped.
pub(crate) fn flush_export(executor: &Executor) {
    if let Some(exporter) = executor.audit_export() {
        if !exporter.flush(EXPORT_DRAIN) {
            tracing::warn!("the audit's OpenTelemetry export was not sent in full before exit");
        }
    }
}

/// Serves one session of `executor` until the end of input.
fn serve_session(args: &SessionArgs, executor: &Executor) -> Result<ExitCode> {
    let executor = executor.clone();
    let batches = args.events.then(|| executor.index().subscribe_batches());
    let session = args.options.session(&executor)?;
    // Whatever ends the loop (end of input, a broken pipe), the task guard deactivates
    // every skill, audited.
    let _task = session.task();
    let out: Out = Mutex::new(BufWriter::with_capacity(1 << 16, std::io::stdout()));
    let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
    // SIGTERM, SIGINT or SIGHUP end the session as the end of input does (every skill
    // deactivated, post hooks run, all audited), once a script running then is stopped
    // and its run recorded: the task guard below never runs when the process exits.
    let (signal_tx, signalled) = crossbeam_channel::bounded::<()>(1);
    ctrlc::set_handler(move || {
        let _ = signal_tx.try_send(());
    })
    .context("installing the signal handler")?;
    let (canceller, cancellation) = skills_executor::cancellation();
    let turn = Turn {
        cancel: cancellation,
        ending: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        {
            let (session, out, turn, stopped) = (&session, &out, &turn, stopped.clone());
            scope.spawn(move || {
                crossbeam_channel::select! {
                    recv(signalled) -> _ => {}
                    recv(stopped) -> _ => return,
                }
                end_on_signal(session, out, turn, &canceller);
            });
        }
        if let Some(batches) = batches {
            let (session, out) = (&session, &out);
            scope.spawn(move || loop {
                crossbeam_channel::select! {
                    recv(batches) -> batch => {
                        let Ok(batch) = batch else { break };
                        for event in protocol::events(session, &batch) {
                            if write_line(out, &protocol::event_line(&event), true).is_err() {
                                return;
                            }
                        }
                    }
                    recv(stopped) -> _ => break,
                }
            });
        }
        let result = serve(&session, &out, &turn);
        drop(stop);
        result
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What a session's end on a signal shares with the loop that answers: the cancellation
/// of the script a request runs, and whether the session is ending (no batch is answered
/// once it is).
struct Turn {
    cancel: skills_executor::Cancellation,
    ending: AtomicBool,
}

/// Ends the session on a signal: the batch under way is cancelled (the script running, if
/// any, stopped; no further line answered; no script started), its output waited for
/// (the output's lock, which an answer holds) for `SIGNAL_GRACE` at most, and the task
/// ended (deactivations, post hooks, audited) before the process exits.
fn end_on_signal(
    session: &Session,
    out: &Out,
    turn: &Turn,
    canceller: &skills_executor::Canceller,
) -> ! {
    turn.ending.store(true, Ordering::SeqCst);
    canceller.cancel();
    // The batch under way ends soon: no further line of it is answered, no script starts,
    // the one running is stopped. An answer that cannot be written (a host that stopped
    // reading) holds the output for ever: after `SIGNAL_GRACE` the session ends without it.
    let out = out.try_lock_for(SIGNAL_GRACE);
    if let Err(e) = session.end_task() {
        tracing::warn!(error = %e, "ending the session could not record every deactivation");
    }
    if let Some(mut out) = out {
        let _ = out.flush();
    }
    // The exit drops nothing: the exporter is given its drain time here.
    flush_export(&session.executor());
    std::process::exit(0);
}

/// How long a session ending on a signal waits for its audit export to be sent.
const EXPORT_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// How long a session ending on a signal waits for the batch under way to be answered.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A line read and not yet answered.
enum Pending {
    /// Answered already (a line too long, not UTF-8).
    Answered(String),
    /// A request, to be answered with the rest of its batch: its place in the batch's text.
    Request(std::ops::Range<usize>),
}

/// The lines read and not yet answered, in order, and the requests' text, one after
/// another (one buffer for a batch, not a string per line).
#[derive(Default)]
struct Batch {
    lines: Vec<Pending>,
    text: String,
}

/// At most this many requests are answered together.
const MAX_BATCH: usize = 1024;

/// At most this many bytes of request text are held for one batch (a thousand lines of
/// 4 MiB each were 4 GiB); a batch is answered once it holds this much.
const MAX_BATCH_BYTES: usize = 8 << 20;

/// How much a pipe to or from the host holds, where the system lets a session say.
#[cfg(target_os = "linux")]
const PIPE_BYTES: usize = 1 << 20;

/// Widens the pipes of standard input and output to [`PIPE_BYTES`]. A host that pipelines
/// its requests writes many before it reads the answers: with Linux's 64 KiB pipes, the
/// session and its host took turns, each waiting for the other to wake, every 500 requests
/// or so. Where the system refuses (a limit on a user's pipe memory) or a stream is no pipe,
/// it stays as it was.
#[cfg(target_os = "linux")]
fn widen_pipes() {
    for widened in [
        rustix::pipe::fcntl_setpipe_size(std::io::stdin(), PIPE_BYTES),
        rustix::pipe::fcntl_setpipe_size(std::io::stdout(), PIPE_BYTES),
    ] {
        if let Err(e) = widened {
            tracing::debug!(error = %e, "a standard stream's pipe stays as it was");
        }
    }
}

/// Answers request lines until the end of input. The lines already waiting are answered
/// as one batch ([`protocol::respond_batch_part`], in parts bounded in bytes: their
/// `check_tool` audit events written together, before any answer of the part leaves), and
/// the answers flushed when no further request is waiting.
fn serve(session: &Session, out: &Out, turn: &Turn) -> Result<()> {
    #[cfg(target_os = "linux")]
    widen_pipes();
    let mut stdin = BufReader::with_capacity(1 << 16, std::io::stdin());
    // Lines are read as bytes: a line that is not UTF-8 is a malformed request, answered
    // like any other, and the session goes on.
    let mut bytes = Vec::new();
    let mut batch = Batch::default();
    loop {
        bytes.clear();
        // A request line is bounded: a line that never ends cannot grow memory without limit.
        let read = (&mut stdin)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut bytes)
            .context("reading stdin")?;
        if read == 0 {
            break;
        }
        if bytes.len() as u64 > MAX_LINE {
            // Skip the rest of the line, then answer it.
            if !bytes.ends_with(b"\n") {
                let mut rest = Vec::new();
                while {
                    rest.clear();
                    let n = (&mut stdin)
                        .take(1 << 16)
                        .read_until(b'\n', &mut rest)
                        .context("reading stdin")?;
                    n > 0 && !rest.ends_with(b"\n")
                } {}
            }
            batch.lines.push(Pending::Answered(protocol::error_line(
                "SKILL_BAD_REQUEST",
                &format!("the request line is over {MAX_LINE} bytes"),
            )));
        } else {
            match std::str::from_utf8(&bytes) {
                Ok(line) if line.trim().is_empty() => {}
                Ok(line) => {
                    let start = batch.text.len();
                    batch.text.push_str(line.trim_end_matches(['\n', '\r']));
                    batch.lines.push(Pending::Request(start..batch.text.len()));
                }
                Err(e) => batch.lines.push(Pending::Answered(protocol::error_line(
                    "SKILL_BAD_REQUEST",
                    &format!("the request line is not UTF-8: {e}"),
                ))),
            }
        }
        // Answer before waiting for more input: a host that waits for its answers must
        // get them.
        if stdin.buffer().is_empty()
            || batch.lines.len() >= MAX_BATCH
            || batch.text.len() >= MAX_BATCH_BYTES
        {
            answer(session, out, turn, &mut batch)?;
        }
    }
    answer(session, out, turn, &mut batch)?;
    out.lock().flush()?;
    Ok(())
}

/// Answers the pending lines in order, writes the answers and flushes them.
fn answer(session: &Session, out: &Out, turn: &Turn, batch: &mut Batch) -> Result<()> {
    if batch.lines.is_empty() {
        return Ok(());
    }
    // Held while the batch is answered: a session ending on a signal waits for it.
    let mut out = out.lock();
    if turn.ending.load(Ordering::SeqCst) {
        batch.lines.clear();
        batch.text.clear();
        return Ok(());
    }
    let requests: Vec<&str> = batch
        .lines
        .iter()
        .filter_map(|p| match p {
            Pending::Request(at) => batch.text.get(at.clone()),
            Pending::Answered(_) => None,
        })
        .collect();
    // The protocol layer answers as many requests at a time as its byte budget allows;
    // each part is written before the next is asked for.
    let mut answers = std::collections::VecDeque::new();
    let mut asked = 0;
    for pending in batch.lines.drain(..) {
        let line = match pending {
            Pending::Answered(line) => line,
            Pending::Request(_) => {
                if answers.is_empty() && asked < requests.len() {
                    if turn.ending.load(Ordering::SeqCst) {
                        // A signal ends the session: the rest of the batch is not answered.
                        break;
                    }
                    let part = protocol::respond_batch_part(
                        session,
                        &requests[asked..],
                        Some(&turn.cancel),
                    );
                    if part.is_empty() {
                        // Cancelled before any line of it: the session is ending.
                        break;
                    }
                    asked += part.len();
                    answers.extend(part);
                }
                answers.pop_front().unwrap_or_default()
            }
        };
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    batch.text.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_trust, TrustArg};

    #[test]
    fn trust_reads_layers_plugins_and_remote_origins() {
        assert!(matches!(parse_trust("project"), Ok(TrustArg::Layer(_))));
        assert!(matches!(parse_trust("plugin:tools"), Ok(TrustArg::Plugin(id)) if id == "tools"));
        for (arg, origin) in [
            (
                "url:https://skills.example.com",
                "url:https://skills.example.com",
            ),
            (
                "url:https://Skills.Example.com/",
                "url:https://skills.example.com",
            ),
            ("mcp:tools", "mcp:tools"),
        ] {
            match parse_trust(arg) {
                Ok(TrustArg::Origin(o)) => assert_eq!(o.to_string(), origin),
                other => panic!("{arg}: {other:?}"),
            }
        }
        for bad in [
            "url:skills.example.com",
            "url:https://h/path",
            "mcp:",
            "host:x",
        ] {
            assert!(parse_trust(bad).is_err(), "{bad} accepted");
        }
    }
}
