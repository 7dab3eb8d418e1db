//! The MCP server handler: one executor session per MCP session, the runtime tools through
//! the protocol layer, skill files as resources, user-invocable skills as prompts, and
//! `list_changed` notifications when the index publishes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    GetSkillRequestParams, GetSkillResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use skills_executor::{Encoding, Executor, Session, SessionContext};
use skills_model::SkillRecord;

use crate::logs::{LogQueue, LogSink};
use crate::uri::{layer_segment, parse_uri, uri};
use crate::{complete, extension};
use skills_protocol as protocol;

/// One MCP session's server: its own executor session, ended (every skill deactivated,
/// audited) when the MCP session ends.
#[derive(Debug)]
pub(crate) struct SkillsServer {
    executor: Executor,
    session: Arc<Session>,
    subscribed: Arc<Mutex<HashSet<String>>>,
    /// Dropped with the server: the thread that follows the index then ends.
    following: Mutex<Option<crossbeam_channel::Sender<()>>>,
    /// The tool calls running now, so that the session's end stops them and waits for
    /// their records before it deactivates anything.
    calls: Arc<Calls>,
    /// The places of the calls that may run a program ([`protocol::may_run_programs`]),
    /// each of which holds a blocking thread for as long as the program runs.
    programs: Arc<tokio::sync::Semaphore>,
    /// The session's end, run once: by the transport before it returns, or when rmcp
    /// drops the server, whichever comes first.
    ending: Arc<Ending>,
    /// The level `logging/setLevel` asked for, and the messages waiting for the client
    /// (taken by the task that sends them, once the client is initialized).
    logs: Arc<LogSink>,
    log_queue: Mutex<Option<LogQueue>>,
}

/// The end of one MCP session's executor session: its running calls stopped and their
/// runs recorded, then every skill deactivated with its post hooks run, all audited.
#[derive(Debug)]
pub(crate) struct Ending {
    session: Arc<Session>,
    calls: Arc<Calls>,
    /// Whether the end has run; held while it runs, so that a second caller returns only
    /// once the first has finished.
    ended: Mutex<bool>,
}

impl Ending {
    /// Ends the session once; blocks while its calls end and its post hooks run (each
    /// bounded by the policy's script timeout).
    fn end(&self) {
        let mut ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
        if *ended {
            return;
        }
        self.calls.end();
        if let Err(e) = self.session.end_task() {
            tracing::warn!(session = self.session.id(), error = %e, "ending the MCP session could not record every deactivation");
        }
        *ended = true;
    }
}

/// The sessions one transport serves, so that it ends each one still open, and waits for
/// its end, before it returns: rmcp drops a server whenever its last task lets go of it,
/// and a process that exits meanwhile would cut off its post hooks and their records.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endings(Arc<Mutex<Vec<Weak<Ending>>>>);

impl Endings {
    fn add(&self, ending: &Arc<Ending>) {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|e| e.strong_count() > 0);
        all.push(Arc::downgrade(ending));
    }

    /// Ends every session still open (one whose end is under way is waited for), on a
    /// blocking thread.
    pub(crate) async fn end_all(&self) {
        let open: Vec<Arc<Ending>> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        if open.is_empty() {
            return;
        }
        let ended = tokio::task::spawn_blocking(move || {
            for ending in open {
                ending.end();
            }
        })
        .await;
        if let Err(e) = ended {
            tracing::warn!(error = %e, "ending the MCP sessions failed");
        }
    }
}

/// The most calls of one MCP session that may run a program at once (a script, or a skill's
/// hooks: pre at a load, post at an unload or a replace; [`protocol::may_run_programs`]),
/// each holding a blocking thread while the program runs, up to the policy's script
/// timeout. One more is answered at once with `MCP_BUSY` rather than queued, so that a
/// client learns it has too many running, a queue does not hold requests unseen behind
/// programs that run for minutes, and the session's other calls (lists, reads, searches)
/// find blocking threads free.
pub const MAX_PROGRAM_CALLS: usize = 16;

/// The tool calls of one MCP session that are running.
#[derive(Debug, Default)]
struct Calls {
    /// Each running call's canceller, by a number of its own; `None` once the session ends
    /// (no call starts after that).
    running: Mutex<Option<HashMap<u64, Arc<skills_executor::Canceller>>>>,
    next: std::sync::atomic::AtomicU64,
    /// Told when a call ends.
    ended: std::sync::Condvar,
}

/// A running call's place in [`Calls`], given back when it ends (dropped).
struct Running {
    calls: Arc<Calls>,
    id: u64,
}

impl Calls {
    /// Registers a call; `None` once the session has ended.
    fn start(calls: &Arc<Calls>, canceller: Arc<skills_executor::Canceller>) -> Option<Running> {
        let id = calls
            .next
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        calls
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()?
            .insert(id, canceller);
        Some(Running {
            calls: Arc::clone(calls),
            id,
        })
    }

    /// Refuses new calls, cancels the running ones (a script and its descendants are
    /// killed) and waits until each has ended, its record written.
    fn end(&self) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        for canceller in running.iter().flat_map(|r| r.values()) {
            canceller.cancel();
        }
        while running.as_ref().is_some_and(|r| !r.is_empty()) {
            running = self
                .ended
                .wait(running)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *running = None;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self
            .calls
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = running.as_mut() {
            r.remove(&self.id);
        }
        self.calls.ended.notify_all();
    }
}

impl SkillsServer {
    /// A server for one MCP session, whose end `endings` can run.
    pub(crate) fn new(
        executor: &Executor,
        context: SessionContext,
        endings: &Endings,
    ) -> SkillsServer {
        let session = Arc::new(executor.session(context));
        let calls = Arc::new(Calls {
            running: Mutex::new(Some(HashMap::new())),
            ..Calls::default()
        });
        let ending = Arc::new(Ending {
            session: Arc::clone(&session),
            calls: Arc::clone(&calls),
            ended: Mutex::new(false),
        });
        endings.add(&ending);
        let (logs, log_queue) = LogSink::register();
        SkillsServer {
            logs,
            log_queue: Mutex::new(Some(log_queue)),
            executor: executor.clone(),
            session,
            subscribed: Arc::new(Mutex::new(HashSet::new())),
            following: Mutex::new(None),
            calls,
            programs: Arc::new(tokio::sync::Semaphore::new(MAX_PROGRAM_CALLS)),
            ending,
        }
    }
}

impl Drop for SkillsServer {
    fn drop(&mut self) {
        // A script still running when the client goes is stopped, and its run recorded,
        // before its skill is deactivated. That waits (on a call running hooks, which are
        // not cancelled, for as long as they run), so on a worker of a multi-threaded
        // runtime it waits in `block_in_place`: the worker's other tasks move to another
        // thread meanwhile. (The transport ends every session before it returns too; the
        // first to start the end runs it, and the other waits for it.)
        let end = || self.ending.end();
        let multi = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi {
            tokio::task::block_in_place(end);
        } else {
            end();
        }
    }
}

/// The most resources one MCP session may subscribe to.
const MAX_SUBSCRIPTIONS: usize = 1024;

/// The longest `skill://` URI a session may subscribe to, in bytes (a path the system can
/// open, and the layer and name before it).
const MAX_URI: usize = 8192;

/// About how many resources one page of `resources/list` holds: a page ends after the
/// skill whose files reach it (a skill's files are never split), and the cursor names the
/// next skill. Each page opens only its own skills' files.
const RESOURCES_PAGE: usize = 1000;

fn not_found(message: String) -> ErrorData {
    ErrorData::resource_not_found(cut(&message), None)
}

/// The answer to a `resources/list` cursor this server did not give: the cursor shown, cut
/// to 64 bytes on a character boundary.
fn not_a_cursor(method: &str, cursor: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "not a cursor of {method}: {:?}",
            protocol::cut_text(cursor, 64)
        ),
        None,
    )
}

/// A message that may echo a client's input, cut to what an answer carries.
fn cut(message: &str) -> String {
    protocol::cut_text(message, protocol::MESSAGE_MAX).into_owned()
}

/// Progress notifications, each second, while a tool call runs, when the client asked for
/// them (the task is aborted when the call ends).
fn progress_while_running(
    context: &RequestContext<RoleServer>,
) -> Option<tokio::task::JoinHandle<()>> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    Some(tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        let mut seconds = 0.0;
        loop {
            tick.tick().await;
            let mut param = rmcp::model::ProgressNotificationParam::new(token.clone(), seconds);
            param.message = Some(format!("running for {seconds:.0} s"));
            if peer.notify_progress(param).await.is_err() {
                return;
            }
            seconds += 1.0;
        }
    }))
}

/// A tool call's answer: its output as text and, when it is an object, as structured
/// content; or its error as text.
fn tool_result(result: Result<Value, skills_executor::ExecError>) -> CallToolResult {
    match result {
        Ok(output) => {
            let text = serde_json::to_string(&output).unwrap_or_default();
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            if output.is_object() {
                result.structured_content = Some(output);
            }
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(protocol::error_text(&e))]),
    }
}

/// The prompt name of a skill: its bare name when it holds it, `<layer>.<name>` otherwise.
fn prompt_name(record: &SkillRecord, resolved: bool) -> String {
    if resolved {
        record.name.to_string()
    } else {
        format!("{}.{}", layer_segment(record), record.name)
    }
}

impl SkillsServer {
    /// The prompts of this session, by the name each is listed under: the skills a user
    /// may invoke. A name two skills would share (a skill named `personal.deploy` beside
    /// the shadowed `personal:deploy`) is listed for neither, so that a name always stands
    /// for the one skill listed under it.
    fn prompts(&self) -> Vec<(String, Arc<SkillRecord>)> {
        let named: Vec<(String, Arc<SkillRecord>)> = self
            .visible()
            .into_iter()
            .filter(|(r, _)| r.user_invocable())
            .map(|(r, resolved)| (prompt_name(&r, resolved), r))
            .collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (name, _) in &named {
            *seen.entry(name.as_str()).or_default() += 1;
        }
        let shared: HashSet<String> = seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(name, _)| name.to_owned())
            .collect();
        for name in &shared {
            tracing::warn!(prompt = %name, "two skills would be listed under one prompt name: neither is");
        }
        named
            .into_iter()
            .filter(|(name, _)| !shared.contains(name))
            .collect()
    }

    /// A place among the calls of tool `name` that may run a program, when it may
    /// ([`MAX_PROGRAM_CALLS`]); when none is free, the answer `MCP_BUSY`.
    fn program_place(
        &self,
        name: &str,
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, CallToolResult> {
        if !protocol::may_run_programs(name) {
            return Ok(None);
        }
        match Arc::clone(&self.programs).try_acquire_owned() {
            Ok(place) => Ok(Some(place)),
            Err(_) => {
                let busy = crate::McpError::Busy;
                let text = format!("{}: {busy}", busy.code());
                Err(CallToolResult::error(vec![ContentBlock::text(text)]))
            }
        }
    }

    /// The skills this session sees, each with whether it holds its name for the session:
    /// first the record each name stands for to it (`Snapshot::skills_for`: one it may
    /// not see takes no name from one it may), then the others it sees.
    fn visible(&self) -> Vec<(Arc<SkillRecord>, bool)> {
        let snapshot = self.executor.index().snapshot();
        let sees = |r: &SkillRecord| self.session.can_see(r);
        let mut out: Vec<(Arc<SkillRecord>, bool)> = snapshot
            .skills_for(&sees)
            .map(|r| (Arc::clone(r), true))
            .collect();
        let holding: HashSet<*const SkillRecord> =
            out.iter().map(|(r, _)| Arc::as_ptr(r)).collect();
        out.extend(
            snapshot
                .records()
                .iter()
                .filter(|r| sees(r) && !holding.contains(&Arc::as_ptr(r)))
                .map(|r| (Arc::clone(r), false)),
        );
        out
    }

    /// The skills served over MCP's skills extension, as `skills_list` offers them: the
    /// record each name stands for to this session, not `disable-model-invocation`.
    fn served_records(&self) -> Vec<Arc<SkillRecord>> {
        self.visible()
            .into_iter()
            .filter(|(r, resolved)| *resolved && r.model_invocable())
            .map(|(r, _)| r)
            .collect()
    }

    /// Sends the `list_changed` notifications (and `resources/updated` for subscribed
    /// URIs of changed skills) whenever the index publishes a change this session sees.
    fn follow(&self, peer: Peer<RoleServer>) {
        let batches = self.executor.index().subscribe_batches();
        let session = Arc::clone(&self.session);
        let subscribed = Arc::clone(&self.subscribed);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<String>>();
        let (stop_tx, stop) = crossbeam_channel::bounded::<()>(0);
        *self
            .following
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(stop_tx);
        let spawned = std::thread::Builder::new()
            .name("skills-mcp-follow".into())
            .spawn(move || loop {
                let batch = crossbeam_channel::select! {
                    recv(batches) -> b => match b {
                        Ok(b) => b,
                        Err(_) => return,
                    },
                    recv(stop) -> _ => return,
                };
                {
                    let events = protocol::events(&session, &batch);
                    let changed: Vec<String> = events
                        .iter()
                        .flat_map(|e| match e {
                            protocol::Event::SkillsChanged {
                                added,
                                changed,
                                removed,
                                ..
                            } => added
                                .iter()
                                .chain(changed)
                                .chain(removed)
                                .cloned()
                                .collect(),
                            protocol::Event::ActiveSkillOutdated { skill, .. } => {
                                vec![skill.clone()]
                            }
                        })
                        .collect();
                    if !changed.is_empty() && tx.send(changed).is_err() {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            // The session goes on; its client is not told of changes (it can list again).
            tracing::warn!(error = %e, "cannot start the thread that follows the index; this MCP session gets no list_changed notifications");
            return;
        }
        tokio::spawn(async move {
            while let Some(changed) = rx.recv().await {
                let ok = peer.notify_tool_list_changed().await.is_ok()
                    && peer.notify_resource_list_changed().await.is_ok()
                    && peer.notify_prompt_list_changed().await.is_ok();
                if !ok {
                    return;
                }
                let uris: Vec<String> = subscribed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .filter(|u| parse_uri(u).is_some_and(|(q, _)| changed.contains(&q)))
                    .cloned()
                    .collect();
                for uri in uris {
                    let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(param).await.is_err() {
                        return;
                    }
                }
            }
        });
    }
}

impl ServerHandler for SkillsServer {
    // `logging/setLevel` is deprecated for 2026-07-28 (SEP-2577), which this server does
    // not negotiate; every version it does negotiate has it.
    #[allow(deprecated)]
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_completions()
            .enable_logging()
            .enable_skills_with_directory_read()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(
                "agent-skills",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.session.instructions(None).instructions)
    }

    /// The handshake starts the session: the policy's options that loosen the defaults are
    /// recorded (`policy_override`) before it is answered, or it fails (fail closed). Not
    /// when the server is made: rmcp makes one also to read a tool's schema.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let session = Arc::clone(&self.session);
        tokio::task::spawn_blocking(move || session.audit_policy_overrides())
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(|e| {
                ErrorData::internal_error(
                    cut(&format!("the session's options cannot be audited: {e}")),
                    None,
                )
            })?;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // Sessions hold the active skills; the stateless protocol (2026-07-28) has none.
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.follow(context.peer.clone());
        let queue = self
            .log_queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(queue) = queue {
            crate::logs::forward(context.peer.clone(), queue);
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.logs.set_level(&request);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let info = match &request.r#ref {
            Reference::Prompt(p) => {
                let listed: Vec<String> = self.prompts().into_iter().map(|(n, _)| n).collect();
                complete::prompt(&listed, &p.name, &request.argument)?
            }
            Reference::Resource(r) => {
                let visible = self.visible();
                let session = Arc::clone(&self.session);
                let (uri, argument, context) = (
                    r.uri.clone(),
                    request.argument.clone(),
                    request.context.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    complete::template(&session, &visible, &uri, &argument, context.as_ref())
                })
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))??
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "an unknown kind of reference",
                    None,
                ))
            }
        };
        Ok(CompleteResult::new(info))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = protocol::tool_definitions(&self.session)
            .into_iter()
            .map(|d| {
                let schema = match d.input_schema {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !protocol::RUNTIME_TOOLS.contains(&name.as_str()) {
            return Err(ErrorData::invalid_params(
                cut(&format!("no tool named {name:?}")),
                None,
            ));
        }
        // A place among the calls that may run a program, held until the call's blocking
        // work ends (past the client's cancellation of it).
        let place = match self.program_place(&name) {
            Ok(place) => place,
            Err(busy) => return Ok(busy.into()),
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        let session = Arc::clone(&self.session);
        // The client's cancellation stops a running script (and every descendant).
        let (canceller, cancellation) = skills_executor::cancellation();
        let canceller = Arc::new(canceller);
        let Some(running) = Calls::start(&self.calls, Arc::clone(&canceller)) else {
            return Err(ErrorData::internal_error("the MCP session is ending", None));
        };
        let ct = context.ct.clone();
        let watch_cancel = tokio::spawn(async move {
            ct.cancelled().await;
            canceller.cancel();
        });
        let progress = progress_while_running(&context);
        let result = tokio::task::spawn_blocking(move || {
            let result = protocol::call_cancellable(&session, &name, input, Some(cancellation));
            drop(running);
            drop(place);
            result
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        watch_cancel.abort();
        if let Some(p) = progress {
            p.abort();
        }
        Ok(tool_result(result?).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let visible = self.visible();
        // The cursor is the place of the next skill among the visible ones.
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= visible.len())
                .ok_or_else(|| not_a_cursor("resources/list", &cursor))?,
        };
        let session = Arc::clone(&self.session);
        // Listing a skill's files reads its folder: off the runtime's workers.
        let (resources, next) = tokio::task::spawn_blocking(move || {
            let executor = session.executor();
            let mut resources = Vec::new();
            let mut next = None;
            for (i, (record, _)) in visible.into_iter().enumerate().skip(start) {
                if resources.len() >= RESOURCES_PAGE {
                    next = Some(i.to_string());
                    break;
                }
                resources.push(
                    Resource::new(
                        uri(&record, "SKILL.md"),
                        format!("{} SKILL.md", record.name),
                    )
                    .with_description(record.description.clone()),
                );
                if let Ok(skill) = executor.index().load_record(&record) {
                    // Only what a read serves: never a script, a link into `scripts/` or
                    // out of the folder, or a file over the read limit.
                    for file in session.servable_files(&skill) {
                        resources.push(Resource::new(
                            uri(&record, &file.path),
                            format!("{} {}", record.name, file.path),
                        ));
                    }
                }
            }
            (resources, next)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(complete::TEMPLATE, "skill file"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (skill, path) = parse_uri(&request.uri)
            .ok_or_else(|| not_found(format!("not a skill:// URI: {}", request.uri)))?;
        let session = Arc::clone(&self.session);
        let read = tokio::task::spawn_blocking(move || {
            session.read_unloaded(&skill, &path, "resources/read")
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        match read {
            Ok(file) => {
                let contents = match file.encoding {
                    Encoding::Text => ResourceContents::text(file.content, request.uri),
                    Encoding::Base64 => ResourceContents::blob(file.content, request.uri),
                };
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(e) => Err(not_found(protocol::error_text(&e))),
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (skill, _) = parse_uri(&request.uri)
            .ok_or_else(|| not_found(format!("not a skill:// URI: {}", request.uri)))?;
        if request.uri.len() > MAX_URI {
            return Err(ErrorData::invalid_params(
                format!("a skill:// URI is at most {MAX_URI} bytes"),
                None,
            ));
        }
        if !self
            .visible()
            .iter()
            .any(|(r, _)| r.qualified_name() == skill)
        {
            return Err(not_found(format!("no such skill: {}", request.uri)));
        }
        let mut subscribed = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains(&request.uri) {
            return Err(ErrorData::invalid_params(
                format!("this session holds {MAX_SUBSCRIPTIONS} subscriptions, the most it may: unsubscribe from one first"),
                None,
            ));
        }
        subscribed.insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let records = self.served_records();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= records.len())
                .ok_or_else(|| not_a_cursor("skills/list", &cursor))?,
        };
        let session = Arc::clone(&self.session);
        // Each entry's manifest reads the skill's files: off the runtime's workers.
        tokio::task::spawn_blocking(move || extension::list(&session, &records, start))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let records = self.served_records();
        let session = Arc::clone(&self.session);
        tokio::task::spawn_blocking(move || extension::get(&session, &records, &request.uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let records = self.served_records();
        let session = Arc::clone(&self.session);
        tokio::task::spawn_blocking(move || {
            extension::directory(&session, &records, &request.uri, request.cursor.as_deref())
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .prompts()
            .into_iter()
            .map(|(name, r)| {
                let mut argument = PromptArgument::new("arguments");
                if let Some(hint) = r.frontmatter.argument_hint() {
                    argument = argument.with_description(hint.to_string());
                }
                Prompt::new(name, Some(r.description.clone()), Some(vec![argument]))
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        // The skill listed under that name, and no other (two skills of one layer may
        // share a qualified name: the record itself is read).
        let record = self
            .prompts()
            .into_iter()
            .find(|(listed, _)| *listed == request.name)
            .map(|(_, r)| r)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    cut(&format!(
                        "SKILL_NOT_FOUND: no prompt named {:?}",
                        request.name
                    )),
                    None,
                )
            })?;
        let arguments = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("arguments"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let session = Arc::clone(&self.session);
        let content = tokio::task::spawn_blocking(move || {
            session.instructions_of_record(&record, "prompts/get")
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(|e| ErrorData::invalid_params(protocol::error_text(&e), None))?;
        let mut text = format!(
            "Follow the instructions of the skill {} (its folder: {}).\n\n{}",
            content.name, content.base_path, content.content
        );
        if let Some(arguments) = arguments {
            text.push_str(&format!("\n\nArguments: {arguments}\n"));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }
}

#[cfg(test)]
mod tests {
    use super::not_a_cursor;
    use crate::uri::{decoded, encoded, parse_uri};

    // Regression (attack review): a listed URI held a file's name raw, so `#` and `?` cut
    // it for a client that parses URIs, and its encoded form named nothing.
    #[test]
    fn a_resource_uri_is_encoded_and_read_back() {
        let cases = [
            ("references/guide.md", "references/guide.md"),
            (
                "references/my notes #1?.md",
                "references/my%20notes%20%231%3F.md",
            ),
            ("assets/é.png", "assets/%C3%A9.png"),
            ("references/100%.md", "references/100%25.md"),
        ];
        for (path, uri_path) in cases {
            assert_eq!(encoded(path, "/"), uri_path);
            assert_eq!(decoded(uri_path).as_deref(), Some(path));
            let uri = format!("skill://personal/notes/{uri_path}");
            assert_eq!(
                parse_uri(&uri),
                Some(("personal:notes".to_owned(), path.to_owned()))
            );
        }
        for bad in [
            "skill://personal/notes/a%2",
            "skill://personal/notes/a%zz",
            "skill://personal/notes/%FF",
            "skill://personal/no%2Ftes/SKILL.md",
            "skill://personal/a%3Ab/SKILL.md",
        ] {
            assert_eq!(parse_uri(bad), None, "{bad}");
        }
    }

    // Regression (attack): `u8::from_str_radix` takes a leading sign, so `%+1` decoded as
    // the byte 0x01 and named a file no listed URI names.
    #[test]
    fn a_percent_escape_is_two_hex_digits_and_nothing_else() {
        for bad in ["%+1", "a%+f.md", "%-1", "% 1", "%1"] {
            assert_eq!(decoded(bad), None, "{bad}");
        }
        assert_eq!(
            parse_uri("skill://personal/notes/a%+1.md"),
            None,
            "a sign in an escape"
        );
        assert_eq!(decoded("%2b%2B").as_deref(), Some("++"));
    }

    // Regression (attack): the cursor was shown as `cursor.get(..64).unwrap_or("")`, so a
    // cursor shorter than 64 bytes was shown as "".
    #[test]
    fn a_bad_cursor_is_shown_cut_on_a_character_boundary() {
        let shown = |cursor: &str| not_a_cursor("resources/list", cursor).message.into_owned();
        assert_eq!(shown("7"), r#"not a cursor of resources/list: "7""#);
        let long = format!("{}é{}", "x".repeat(63), "y".repeat(100));
        assert_eq!(
            shown(&long),
            format!("not a cursor of resources/list: \"{}...\"", "x".repeat(63))
        );
    }
}
