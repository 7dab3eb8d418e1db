//! The `Executor` (shared by every session) and the `Session`: the stack of active skills
//! and every operation on it, each decided and audited.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use skills_index::{IndexError, SkillIndex};
use skills_model::{Skill, SkillRecord};
use skills_storage::{read_bounded, ReadError};

use crate::audit::{AuditEvent, AuditKind, AuditSink, NullSink};
use crate::enforce::{decide, CompiledRules, Decision};
use crate::{run_script, Delivery, ExecError, Policy, ScriptOutput, ScriptRequest};

/// Serves sessions over one index, one policy and one audit sink. Cheap to clone; share it
/// across threads.
#[derive(Debug, Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    index: Arc<SkillIndex>,
    policy: Policy,
    sink: Arc<dyn AuditSink>,
}

/// Configures an [`Executor`].
#[derive(Debug)]
pub struct ExecutorBuilder {
    index: Arc<SkillIndex>,
    policy: Policy,
    sink: Arc<dyn AuditSink>,
}

impl ExecutorBuilder {
    /// The policy (default: [`Policy::default`]).
    pub fn policy(mut self, policy: Policy) -> ExecutorBuilder {
        self.policy = policy;
        self
    }

    /// Where audit events are recorded (default: nowhere but `tracing`).
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> ExecutorBuilder {
        self.sink = sink;
        self
    }

    /// The executor.
    pub fn build(self) -> Executor {
        Executor {
            inner: Arc::new(Inner {
                index: self.index,
                policy: self.policy,
                sink: self.sink,
            }),
        }
    }
}

impl Executor {
    /// A builder over `index`.
    pub fn builder(index: Arc<SkillIndex>) -> ExecutorBuilder {
        ExecutorBuilder {
            index,
            policy: Policy::default(),
            sink: Arc::new(NullSink),
        }
    }

    /// Opens a session.
    pub fn session(&self, context: SessionContext) -> Session {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = context.id.clone().unwrap_or_else(|| {
            format!(
                "session-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            )
        });
        Session {
            exec: Arc::clone(&self.inner),
            id,
            context,
            stack: Mutex::new(Vec::new()),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The index.
    pub fn index(&self) -> &SkillIndex {
        &self.inner.index
    }
}

/// Who a session works for. Build one with [`SessionContext::builder`].
#[derive(Debug, Clone, Default)]
pub struct SessionContext {
    id: Option<String>,
    agent: Option<String>,
    tenant: Option<String>,
    environment: Option<String>,
    correlation_id: Option<String>,
    task_id: Option<String>,
}

/// Configures a [`SessionContext`].
#[derive(Debug, Clone, Default)]
pub struct SessionContextBuilder {
    context: SessionContext,
}

impl SessionContext {
    /// An empty context (a generated id, no agent, tenant or environment).
    pub fn builder() -> SessionContextBuilder {
        SessionContextBuilder::default()
    }
}

impl SessionContextBuilder {
    /// The session id (default: generated).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.context.id = Some(id.into());
        self
    }
    /// The agent type (matched against a skill's `scope.agents`).
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.context.agent = Some(agent.into());
        self
    }
    /// The tenant (matched against `scope.tenants`).
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.context.tenant = Some(tenant.into());
        self
    }
    /// The environment (matched against `scope.environments`).
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.context.environment = Some(environment.into());
        self
    }
    /// The host's correlation id, copied into audit events.
    pub fn correlation_id(mut self, id: impl Into<String>) -> Self {
        self.context.correlation_id = Some(id.into());
        self
    }
    /// The task id, copied into audit events.
    pub fn task_id(mut self, id: impl Into<String>) -> Self {
        self.context.task_id = Some(id.into());
        self
    }
    /// The context.
    pub fn build(self) -> SessionContext {
        self.context
    }
}

#[derive(Debug, Clone)]
struct Active {
    skill: Arc<Skill>,
    rules: CompiledRules,
}

impl Active {
    /// Whether `name` (bare or qualified) names this skill.
    fn is_named(&self, name: &str) -> bool {
        let r = &self.skill.record;
        r.name.as_str() == name || r.qualified_name() == name
    }
}

/// How `skills_load` treats skills already active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Push onto the stack (skills already active keep their place).
    Add,
    /// Replace the whole stack (the default).
    Replace,
}

/// One agent's conversation: a stack of active skills, most recent last.
#[derive(Debug)]
pub struct Session {
    exec: Arc<Inner>,
    id: String,
    context: SessionContext,
    stack: Mutex<Vec<Active>>,
}

/// Ends a task: when dropped, every skill of the session is deactivated (audited), whatever
/// happened (a panic or an early return included).
#[derive(Debug)]
pub struct TaskGuard<'a> {
    session: &'a Session,
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.session.unload_all() {
            tracing::warn!(session = %self.session.id, error = %e, "ending the task could not record every deactivation");
            // The task is over whatever the sink says: nothing stays active for the next
            // one. (With the sink down, every later call is refused anyway.)
            let removed = std::mem::take(&mut *self.session.stack.lock());
            for a in removed.iter().rev() {
                self.session.run_hooks(a, false);
            }
        }
    }
}

fn relative_parts(path: &str) -> Result<Vec<&str>, String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Err("absolute paths are refused: give a path relative to the skill folder".into());
    }
    let mut parts = Vec::new();
    for comp in p.components() {
        match comp {
            Component::Normal(s) => parts.push(s.to_str().ok_or("the path is not UTF-8")?),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err("`..` is refused: paths stay inside the skill folder".into())
            }
            _ => return Err("absolute paths are refused".into()),
        }
    }
    if parts.is_empty() {
        return Err("the path names no file".into());
    }
    Ok(parts)
}

impl Session {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The context.
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    fn event(&self, kind: AuditKind) -> AuditEvent {
        let mut e = AuditEvent::now(kind, &self.id);
        e.correlation_id.clone_from(&self.context.correlation_id);
        e.agent_id.clone_from(&self.context.agent);
        e.task_id.clone_from(&self.context.task_id);
        e.tenant_id.clone_from(&self.context.tenant);
        e
    }

    /// Records an event: `tracing` first, then the sink. A sink failure is an error, so the
    /// caller fails closed.
    fn emit(&self, event: &AuditEvent) -> Result<(), ExecError> {
        match serde_json::to_string(event) {
            Ok(json) => tracing::info!(target: "agent_skills::audit", "{json}"),
            Err(e) => {
                tracing::warn!(target: "agent_skills::audit", error = %e, "unserialisable audit event")
            }
        }
        self.exec
            .sink
            .record(event)
            .map_err(|e| ExecError::Audit(e.to_string()))
    }

    /// Whether the session's context may see `record` (its `scope`).
    pub fn can_see(&self, record: &SkillRecord) -> bool {
        let c = &self.context;
        record.frontmatter.scope.as_deref().is_none_or(|scope| {
            scope.admits(
                c.agent.as_deref(),
                c.tenant.as_deref(),
                c.environment.as_deref(),
            )
        })
    }

    /// The skills this session may see, sorted by name.
    pub fn visible(&self) -> Vec<Arc<SkillRecord>> {
        self.exec
            .index
            .snapshot()
            .skills()
            .filter(|r| self.can_see(r))
            .cloned()
            .collect()
    }

    /// The active skills, bottom of the stack first.
    pub fn active(&self) -> Vec<Arc<Skill>> {
        self.stack
            .lock()
            .iter()
            .map(|a| Arc::clone(&a.skill))
            .collect()
    }

    fn resolve(
        &self,
        snapshot: &skills_index::Snapshot,
        name: &str,
    ) -> Result<Arc<SkillRecord>, ExecError> {
        match snapshot.get(name) {
            Some(r) if self.can_see(r) => Ok(Arc::clone(r)),
            _ => {
                let visible: Vec<Arc<SkillRecord>> = snapshot
                    .skills()
                    .filter(|r| self.can_see(r))
                    .cloned()
                    .collect();
                let suggestion =
                    skills_model::closest_name(name, visible.iter().map(|r| r.name.as_str()));
                Err(ExecError::NotFound {
                    name: name.to_owned(),
                    suggestion,
                })
            }
        }
    }

    /// `skills_load`: activates `names` (and their required composition dependencies).
    /// Returns the receipt.
    pub fn load(&self, names: &[String], mode: LoadMode) -> Result<Value, ExecError> {
        if names.is_empty() {
            return Err(ExecError::BadInput(
                "name at least one skill to load".into(),
            ));
        }
        let snapshot = self.exec.index.snapshot();
        let mut plan: Vec<Arc<SkillRecord>> = Vec::new();
        let mut visiting = HashSet::new();
        for name in names {
            self.plan(&snapshot, name, None, &mut plan, &mut visiting)?;
        }
        let policy = &self.exec.policy;
        let mut warnings = Vec::new();
        for r in &plan {
            for dep in r
                .frontmatter
                .tool_binding
                .iter()
                .flat_map(|b| &b.dependencies)
            {
                let provided = policy
                    .host_tools
                    .as_ref()
                    .is_none_or(|tools| tools.iter().any(|t| t.eq_ignore_ascii_case(&dep.tool)));
                if !provided {
                    if dep.required {
                        return Err(ExecError::ToolBindingMissing {
                            skill: r.name.to_string(),
                            tool: dep.tool.clone(),
                        });
                    }
                    warnings.push(format!(
                        "{} can use the tool {:?}, which this host does not provide",
                        r.name, dep.tool
                    ));
                }
            }
            if r.frontmatter
                .hooks
                .as_deref()
                .is_some_and(|h| !h.is_empty())
                && !policy.trusts(r.layer)
            {
                return Err(ExecError::Untrusted {
                    skill: r.name.to_string(),
                    layer: r.layer.to_string(),
                });
            }
        }
        // Read bodies and compile rules before taking the stack lock: file I/O never blocks
        // this session's tool checks. (Bodies are cached per snapshot generation.)
        let mut prepared: Vec<Active> = Vec::with_capacity(plan.len());
        for r in &plan {
            let skill = self
                .exec
                .index
                .load(&r.qualified_name())
                .map_err(|e| match e {
                    IndexError::NotFound { name, suggestion } => {
                        ExecError::NotFound { name, suggestion }
                    }
                    other => ExecError::Load(other.to_string()),
                })?;
            let rules = CompiledRules::compile(&skill);
            prepared.push(Active { skill, rules });
        }
        let mut stack = self.stack.lock();
        // The names of the stack after the load, in order: for `add` the stack as it is,
        // then the plan's new skills; for `replace` the plan alone.
        let mut new_names: Vec<String> = match mode {
            LoadMode::Replace => Vec::new(),
            LoadMode::Add => stack
                .iter()
                .map(|a| a.skill.record.name.to_string())
                .collect(),
        };
        // Only skills not on the stack yet are activated: one that stays keeps its place
        // in `add` and is not activated (or pushed) a second time in `replace`.
        let mut to_activate = Vec::new();
        for r in &plan {
            if !new_names.iter().any(|n| n == r.name.as_str()) {
                new_names.push(r.name.to_string());
                if !stack.iter().any(|a| a.skill.record.name == r.name) {
                    to_activate.push(Arc::clone(r));
                }
            }
        }
        if new_names.len() > policy.max_active {
            return Err(ExecError::TooManyActive {
                cap: policy.max_active,
                requested: new_names.len(),
            });
        }
        let (kept, dropped): (Vec<Active>, Vec<Active>) = stack
            .iter()
            .cloned()
            .partition(|a| new_names.iter().any(|n| n == a.skill.record.name.as_str()));
        let all_records: Vec<Arc<SkillRecord>> = kept
            .iter()
            .map(|a| Arc::clone(&a.skill.record))
            .chain(to_activate.iter().cloned())
            .collect();
        for r in &all_records {
            for conflict in r.frontmatter.composition.iter().flat_map(|c| &c.conflicts) {
                if conflict != r.name.as_str() && new_names.iter().any(|n| n == conflict) {
                    return Err(ExecError::Conflict {
                        skill: r.name.to_string(),
                        with: conflict.clone(),
                    });
                }
            }
        }
        let loaded: Vec<Active> = prepared
            .into_iter()
            .filter(|a| to_activate.iter().any(|r| r.name == a.skill.record.name))
            .collect();
        // Deactivate what a replace drops, then activate; audit before the stack changes.
        let mut hook_results = Vec::new();
        for a in dropped.iter().rev() {
            self.emit(&self.skill_event(AuditKind::SkillDeactivated, a))?;
        }
        let mut activated = Vec::new();
        for a in &loaded {
            self.emit(&self.skill_event(AuditKind::SkillActivated, a))?;
            activated.push(a.skill.record.name.to_string());
        }
        let mut next = kept;
        next.extend(loaded.iter().cloned());
        // Replace keeps the order of the plan for the skills it keeps (for add, this is
        // already the order).
        next.sort_by_key(|a| {
            new_names
                .iter()
                .position(|n| n == a.skill.record.name.as_str())
        });
        *stack = next;
        let receipt_stack = stack.clone();
        drop(stack);
        // Hooks run after their events are recorded and outside the stack lock, so a slow
        // hook never blocks this session's tool checks.
        for a in dropped.iter().rev() {
            hook_results.extend(self.run_hooks(a, false));
        }
        for a in &loaded {
            hook_results.extend(self.run_hooks(a, true));
        }
        let delivery = policy.delivery;
        let active: Vec<Value> = receipt_stack
            .iter()
            .map(|a| {
                receipt_entry(
                    &a.skill,
                    delivery == Delivery::ToolResult
                        && activated.contains(&a.skill.record.name.to_string()),
                )
            })
            .collect();
        let mut receipt = json!({ "active_skills": active });
        if !warnings.is_empty() {
            receipt["warnings"] = json!(warnings);
        }
        if !hook_results.is_empty() {
            receipt["hooks"] = Value::Array(hook_results);
        }
        Ok(receipt)
    }

    /// Adds `name` and its dependencies to `plan` (dependencies first).
    fn plan(
        &self,
        snapshot: &skills_index::Snapshot,
        name: &str,
        required_by: Option<&str>,
        plan: &mut Vec<Arc<SkillRecord>>,
        visiting: &mut HashSet<String>,
    ) -> Result<(), ExecError> {
        let record = match (self.resolve(snapshot, name), required_by) {
            (Ok(r), _) => r,
            (Err(_), Some(by)) => {
                return Err(ExecError::DependencyMissing {
                    skill: by.to_owned(),
                    dependency: name.to_owned(),
                })
            }
            (Err(e), None) => return Err(e),
        };
        if plan.iter().any(|r| r.name == record.name) || !visiting.insert(record.name.to_string()) {
            return Ok(());
        }
        for dep in record
            .frontmatter
            .composition
            .iter()
            .flat_map(|c| &c.dependencies)
        {
            if dep.optional {
                if snapshot
                    .get(&dep.skill_name)
                    .is_some_and(|r| self.can_see(r))
                {
                    self.plan(
                        snapshot,
                        &dep.skill_name,
                        Some(record.name.as_str()),
                        plan,
                        visiting,
                    )?;
                }
            } else {
                self.plan(
                    snapshot,
                    &dep.skill_name,
                    Some(record.name.as_str()),
                    plan,
                    visiting,
                )?;
            }
        }
        plan.push(record);
        Ok(())
    }

    fn skill_event(&self, kind: AuditKind, a: &Active) -> AuditEvent {
        let mut e = self.event(kind);
        e.skill_name = Some(a.skill.record.name.to_string());
        e.allowed_tools = a.rules.allowed_list();
        e
    }

    /// Runs `hooks.pre` (activation) or `hooks.post` (deactivation); results are audited and
    /// returned for the receipt. Trust was checked at load.
    fn run_hooks(&self, a: &Active, pre: bool) -> Vec<Value> {
        let Some(hooks) = a.skill.record.frontmatter.hooks.as_deref() else {
            return Vec::new();
        };
        let list = if pre { &hooks.pre } else { &hooks.post };
        let mut results = Vec::new();
        for hook in list {
            let started = Instant::now();
            let record = &a.skill.record;
            let forbidden = record
                .frontmatter
                .security
                .as_ref()
                .and_then(|s| s.executes_commands)
                == Some(false);
            let outcome = if forbidden {
                // A manifest that says the skill runs no commands covers its hooks too.
                Err(ExecError::ScriptsForbidden(record.name.to_string()))
            } else {
                self.script_path(&a.rules.dir, hook, false)
                    .and_then(|script| self.spawn(&script, &[], &[], &a.rules.dir, None))
            };
            let mut e = self.event(AuditKind::HookExecuted);
            e.skill_name = Some(a.skill.record.name.to_string());
            e.tool_name = Some(hook.clone());
            e.duration_ms = Some(elapsed_ms(started));
            let result = match &outcome {
                Ok(out) => {
                    if out.exit_code != Some(0) {
                        e.error = Some(format!(
                            "exit code {:?}, timed out: {}",
                            out.exit_code, out.timed_out
                        ));
                    }
                    json!({"hook": hook, "stage": if pre { "pre" } else { "post" }, "exit_code": out.exit_code, "timed_out": out.timed_out})
                }
                Err(err) => {
                    e.error = Some(err.to_string());
                    json!({"hook": hook, "stage": if pre { "pre" } else { "post" }, "error": err.to_string()})
                }
            };
            if let Err(err) = self.emit(&e) {
                tracing::warn!(error = %err, "hook audit failed");
            }
            results.push(result);
        }
        results
    }

    /// `skills_unload`: removes `names`, which must be the top of the stack.
    pub fn unload(&self, names: &[String]) -> Result<Value, ExecError> {
        let mut stack = self.stack.lock();
        // A skill is named by its bare or its qualified name, as `skills_load` takes them.
        let named = |a: &Active| names.iter().any(|n| a.is_named(n));
        for name in names {
            if !stack.iter().any(|a| a.is_named(name)) {
                return Err(ExecError::NotActive(format!("{name:?} is not active")));
            }
        }
        let lowest = stack.iter().position(named).unwrap_or(stack.len());
        let must_first: Vec<String> = stack[lowest..]
            .iter()
            .filter(|a| !named(a))
            .map(|a| a.skill.record.name.to_string())
            .collect();
        if !must_first.is_empty() {
            return Err(ExecError::UnloadOrder { must_first });
        }
        let removed: Vec<Active> = stack[lowest..].to_vec();
        for a in removed.iter().rev() {
            self.emit(&self.skill_event(AuditKind::SkillDeactivated, a))?;
        }
        stack.truncate(lowest);
        let remaining: Vec<String> = stack
            .iter()
            .map(|a| a.skill.record.name.to_string())
            .collect();
        drop(stack);
        let hooks: Vec<Value> = removed
            .iter()
            .rev()
            .flat_map(|a| self.run_hooks(a, false))
            .collect();
        let unloaded: Vec<String> = removed
            .iter()
            .rev()
            .map(|a| a.skill.record.name.to_string())
            .collect();
        let mut out = json!({"unloaded": unloaded, "active_skills": remaining});
        if !hooks.is_empty() {
            out["hooks"] = Value::Array(hooks);
        }
        Ok(out)
    }

    /// Deactivates every skill (`skills_unload {"all": true}`).
    pub fn unload_all(&self) -> Result<Value, ExecError> {
        let names: Vec<String> = self
            .stack
            .lock()
            .iter()
            .map(|a| a.skill.record.name.to_string())
            .collect();
        if names.is_empty() {
            return Ok(json!({"unloaded": [], "active_skills": []}));
        }
        self.unload(&names)
    }

    /// A guard that deactivates everything when the task ends.
    pub fn task(&self) -> TaskGuard<'_> {
        TaskGuard { session: self }
    }

    /// The active skill named `name`, or the most recent one.
    fn target(&self, name: Option<&str>) -> Result<Active, ExecError> {
        let stack = self.stack.lock();
        match name {
            Some(n) => stack
                .iter()
                .rev()
                .find(|a| a.is_named(n))
                .cloned()
                .ok_or_else(|| {
                    ExecError::NotActive(format!(
                        "{n:?} is not active: load it first with skills_load"
                    ))
                }),
            None => stack.last().cloned().ok_or_else(|| {
                ExecError::NotActive("no skill is active: load one with skills_load first".into())
            }),
        }
    }

    /// `skills_read`: a file of an active skill, as text or base64.
    pub fn read(&self, skill: Option<&str>, path: &str) -> Result<Value, ExecError> {
        let started = Instant::now();
        let target = self.target(skill);
        let result = target
            .as_ref()
            .map_err(clone_err)
            .and_then(|a| self.read_in(a, path));
        let mut e = self.event(AuditKind::SkillFileRead);
        e.tool_name = Some(path.to_owned());
        e.duration_ms = Some(elapsed_ms(started));
        // The skill read from, also when the read is refused.
        e.skill_name = target
            .as_ref()
            .ok()
            .map(|a| a.skill.record.name.to_string())
            .or(skill.map(str::to_owned));
        if let Err(err) = &result {
            e.error = Some(err.to_string());
        }
        self.emit(&e)?;
        result
    }

    fn read_in(&self, a: &Active, path: &str) -> Result<Value, ExecError> {
        let invalid = |reason: String| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        };
        let parts = relative_parts(path).map_err(invalid)?;
        if self.exec.policy.narrow_reads
            && !(parts.len() == 2 && ["scripts", "references", "assets"].contains(&parts[0]))
        {
            return Err(invalid(
                "only files directly under scripts/, references/ and assets/ can be read".into(),
            ));
        }
        let file = self.inside(&a.rules.dir, &parts, path)?;
        let limit = self.exec.policy.read_limit;
        let bytes = match read_bounded(&file, limit) {
            Ok(b) => b,
            Err(ReadError::TooLarge { size, .. }) => {
                return Err(ExecError::FileTooLarge {
                    path: path.to_owned(),
                    size,
                    limit,
                })
            }
            Err(other) => return Err(invalid(other.to_string())),
        };
        let size = bytes.len();
        Ok(match String::from_utf8(bytes) {
            Ok(text) => json!({"path": path, "encoding": "text", "size": size, "content": text}),
            Err(e) => json!({
                "path": path,
                "encoding": "base64",
                "size": size,
                "content": base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            }),
        })
    }

    /// Joins `parts` to `dir` and checks that the canonical path stays inside `dir`.
    fn inside(&self, dir: &Path, parts: &[&str], shown: &str) -> Result<PathBuf, ExecError> {
        let invalid = |reason: &str| ExecError::InvalidPath {
            path: shown.to_owned(),
            reason: reason.to_owned(),
        };
        let joined: PathBuf = parts.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
        let canonical_dir =
            std::fs::canonicalize(dir).map_err(|_| invalid("the skill folder is gone"))?;
        let canonical =
            std::fs::canonicalize(&joined).map_err(|_| invalid("no such file in the skill"))?;
        if !canonical.starts_with(&canonical_dir) {
            return Err(invalid(
                "it resolves outside the skill folder (a link that escapes is refused)",
            ));
        }
        Ok(canonical)
    }

    /// The canonical path of a script under the skill's `scripts/` (or anywhere in the
    /// skill, for hooks).
    fn script_path(
        &self,
        dir: &Path,
        path: &str,
        must_be_in_scripts: bool,
    ) -> Result<PathBuf, ExecError> {
        let parts = relative_parts(path).map_err(|reason| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        })?;
        if must_be_in_scripts && (parts.len() < 2 || parts[0] != "scripts") {
            return Err(ExecError::InvalidPath {
                path: path.to_owned(),
                reason: "only files under the skill's scripts/ folder can be run".into(),
            });
        }
        let script = self.inside(dir, &parts, path)?;
        if must_be_in_scripts {
            // An empty path would contain everything: a `scripts/` that cannot be resolved
            // (gone since the script was) refuses the run.
            let scripts = std::fs::canonicalize(dir.join("scripts")).ok();
            if !scripts.is_some_and(|s| script.starts_with(s)) {
                return Err(ExecError::InvalidPath {
                    path: path.to_owned(),
                    reason: "it resolves outside the skill's scripts/ folder".into(),
                });
            }
        }
        Ok(script)
    }

    fn spawn(
        &self,
        script: &Path,
        args: &[String],
        env: &[(String, String)],
        workdir: &Path,
        timeout: Option<Duration>,
    ) -> Result<ScriptOutput, ExecError> {
        let policy = &self.exec.policy;
        let request = ScriptRequest {
            script,
            args,
            env,
            workdir,
            // The call may shorten the host's timeout, never lengthen it.
            timeout: timeout.map_or(policy.script_timeout, |t| t.min(policy.script_timeout)),
            output_limit: policy.output_limit,
        };
        Ok(run_script(&request)?)
    }

    /// `skills_run_script`: runs a file under an active skill's `scripts/`.
    #[allow(clippy::too_many_arguments)]
    pub fn run_script(
        &self,
        skill: Option<&str>,
        path: &str,
        args: &[String],
        env: &[(String, String)],
        workdir: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<Value, ExecError> {
        let started = Instant::now();
        let target = self.target(skill);
        let result = target
            .as_ref()
            .map_err(clone_err)
            .and_then(|a| self.run_in(a, path, args, env, workdir, timeout));
        let mut e = self.event(AuditKind::ScriptExecuted);
        e.tool_name = Some(path.to_owned());
        e.skill_name = target
            .as_ref()
            .ok()
            .map(|a| a.skill.record.name.to_string())
            .or(skill.map(str::to_owned));
        e.duration_ms = Some(elapsed_ms(started));
        match &result {
            Ok(out) if out.exit_code != Some(0) => {
                e.error = Some(format!(
                    "exit code {:?}, timed out: {}",
                    out.exit_code, out.timed_out
                ));
            }
            Ok(_) => {}
            Err(err) => e.error = Some(err.to_string()),
        }
        self.emit(&e)?;
        let out = result?;
        let mut v = serde_json::to_value(&out).map_err(|e| ExecError::Load(e.to_string()))?;
        v["path"] = json!(path);
        Ok(v)
    }

    fn run_in(
        &self,
        a: &Active,
        path: &str,
        args: &[String],
        env: &[(String, String)],
        workdir: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<ScriptOutput, ExecError> {
        let record = &a.skill.record;
        if let Some((name, _)) = env.iter().find(|(k, _)| hijacks_interpreter(k)) {
            return Err(ExecError::BadInput(format!(
                "the environment variable {name:?} cannot be passed to a script: names are upper-case letters, digits and underscores, and none that the shell, an interpreter or the loader reads as code, options or a search path"
            )));
        }
        if !self.exec.policy.trusts(record.layer) {
            return Err(ExecError::Untrusted {
                skill: record.name.to_string(),
                layer: record.layer.to_string(),
            });
        }
        if record
            .frontmatter
            .security
            .as_ref()
            .and_then(|s| s.executes_commands)
            == Some(false)
        {
            return Err(ExecError::ScriptsForbidden(record.name.to_string()));
        }
        let script = self.script_path(&a.rules.dir, path, true)?;
        let dir =
            std::fs::canonicalize(&a.rules.dir).map_err(|e| ExecError::Load(e.to_string()))?;
        let workdir = match workdir {
            None => dir.clone(),
            Some(w) => {
                let bad = |reason: &str| ExecError::InvalidPath {
                    path: w.to_owned(),
                    reason: reason.to_owned(),
                };
                let candidate = if Path::new(w).is_absolute() {
                    PathBuf::from(w)
                } else {
                    dir.join(w)
                };
                let resolved =
                    std::fs::canonicalize(&candidate).map_err(|_| bad("no such folder"))?;
                let allowed = resolved.starts_with(&dir)
                    || self
                        .exec
                        .policy
                        .workdirs
                        .iter()
                        .filter_map(|d| std::fs::canonicalize(d).ok())
                        .any(|d| resolved.starts_with(d));
                if !allowed || !resolved.is_dir() {
                    return Err(bad("the working folder must be inside the skill folder or an area the host allows"));
                }
                resolved
            }
        };
        self.spawn(&script, args, env, &workdir, timeout)
    }

    /// The bare decision for a host tool call, without its audit event: for measuring and
    /// for hosts that want to preview a call. A call that will run goes through
    /// [`check_tool`](Session::check_tool), which records the decision.
    pub fn decide(&self, tool: &str, primary_arg: Option<&str>) -> Decision {
        let stack = self.stack.lock();
        self.decide_on(&stack, tool, primary_arg)
    }

    fn decide_on(&self, stack: &[Active], tool: &str, arg: Option<&str>) -> Decision {
        let default_allow = self.exec.policy.default_decision == crate::DefaultDecision::Allow;
        decide(stack.iter().map(|a| &a.rules), tool, arg, default_allow)
    }

    /// Decides a host tool call and audits the decision. `input` is the call's input; its
    /// primary argument is found by the policy (`command` for `Bash`, `file_path` or `path`
    /// for `Read`, `Write`, `Edit`), and when it holds several of those fields each is
    /// decided, the call allowed only if all are. If the audit cannot be written, the call
    /// is denied.
    pub fn check_tool(&self, tool: &str, input: &Value) -> Decision {
        let fields = self.primary_fields(tool);
        let stack = self.stack.lock();
        // Every declared field the input holds is checked (the host's tool may read any of
        // them); the first denial wins. A field that is not a string cannot be checked.
        let mut decision = None;
        for value in fields.iter().filter_map(|f| input.get(f)) {
            let d = self.decide_on(&stack, tool, value.as_str());
            if !d.allowed {
                decision = Some(d);
                break;
            }
            decision.get_or_insert(d);
        }
        let decision = decision.unwrap_or_else(|| self.decide_on(&stack, tool, None));
        let kind = if decision.script_read {
            AuditKind::ScriptReadBlocked
        } else if decision.allowed {
            AuditKind::ToolExecutionInSkill
        } else {
            AuditKind::ToolRestrictionViolated
        };
        let mut e = self.event(kind);
        e.tool_name = Some(tool.to_owned());
        e.tool_allowed = Some(decision.allowed);
        e.skill_name = stack.last().map(|a| a.skill.record.name.to_string());
        let allowed: Vec<String> = stack
            .iter()
            .filter_map(|a| a.rules.allowed_list())
            .flatten()
            .collect();
        e.allowed_tools = (!allowed.is_empty()).then_some(allowed);
        if !decision.allowed {
            e.error = Some(decision.reason.clone());
        }
        drop(stack);
        match self.emit(&e) {
            Ok(()) => decision,
            Err(err) => Decision {
                allowed: false,
                reason: err.to_string(),
                script_read: false,
            },
        }
    }

    /// The input fields that hold `tool`'s primary argument (none when undeclared).
    fn primary_fields(&self, tool: &str) -> &[String] {
        self.exec
            .policy
            .primary_args
            .get(&tool.to_ascii_lowercase())
            .map_or(&[], Vec::as_slice)
    }

    /// The top-level instructions for the next model call: the base block, the available
    /// skills, and (when instructions are delivered at top level) the active skills.
    pub fn instructions(&self, budget: Option<usize>) -> String {
        let visible = self.visible();
        let available: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
        let active = self.active();
        let active: Vec<&Skill> = if self.exec.policy.delivery == Delivery::TopLevel {
            active.iter().map(|s| &**s).collect()
        } else {
            Vec::new()
        };
        crate::instructions(&available, &active, budget)
    }
}

fn clone_err(e: &ExecError) -> ExecError {
    match e {
        ExecError::NotActive(m) => ExecError::NotActive(m.clone()),
        other => ExecError::Load(other.to_string()),
    }
}

/// Whether a call may set this environment variable for a script. An allow-list of shape
/// (`[A-Z][A-Z0-9_]*`) minus every name an interpreter, the shell or the dynamic loader
/// reads as code, a search path or options, and the names that move a tool's configuration
/// (`XDG_CONFIG_HOME` as well as `HOME`: git's configuration runs commands) or name a
/// program to start: a model passes data to a script, never code to what runs it.
fn hijacks_interpreter(name: &str) -> bool {
    const EXACT: [&str; 28] = [
        "ENV",
        "PATH",
        "HOME",
        "IFS",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "CDPATH",
        "GCONV_PATH",
        "TMPDIR",
        "LOCPATH",
        // Programs that other programs start, and the configuration they read.
        "SHELL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "ZDOTDIR",
        "PROMPT_COMMAND",
        "CURL_HOME",
        "WGETRC",
        "CLASSPATH",
        "PHPRC",
        "GLIBC_TUNABLES",
        "RUSTFLAGS",
        "TERMINFO",
    ];
    const PREFIXES: [&str; 23] = [
        "LD_", "DYLD_", "BASH", "PYTHON", "PERL", "RUBY", "NODE_", "GIT_", "JAVA_", "JDK_", "GEM_",
        "NPM_", "XDG_", "OPENSSL_", "LUA_", "PHP_", "CARGO_", "RUSTC", "BUNDLE_", "PIP_", "SSH_",
        "TCL", "MALLOC_",
    ];
    let shaped = name.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    !shaped || EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Whether a frontmatter property is at its default (left out of receipts).
fn is_unset(key: &str, value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(|x| is_unset("", x)),
        Value::Number(n) => key == "priority" && n.as_i64() == Some(0),
        _ => false,
    }
}

fn receipt_entry(skill: &Skill, with_body: bool) -> Value {
    let r = &skill.record;
    let mut properties = match serde_json::to_value(&*r.frontmatter) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    properties.retain(|k, v| k != "name" && !is_unset(k, v));
    // The index keeps the description on the record, not in the frontmatter.
    properties.insert("description".to_owned(), json!(r.description));
    let mut entry = json!({
        "name": r.name,
        "qualified_name": r.qualified_name(),
        "location": r.path,
        "root_dir": r.dir(),
        "digest": skill.digest,
        "properties": properties,
    });
    if with_body {
        entry["base_path"] = json!(r.dir());
        entry["body"] = json!(skill.body);
    }
    entry
}
