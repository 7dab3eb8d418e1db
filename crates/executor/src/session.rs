//! The `Session`: one agent's conversation over an [`Executor`](crate::Executor). This
//! module holds what every operation shares: the audit events, what the session may see,
//! and how it follows the index (outdated active skills, plugins that left). The
//! operations live beside it: the stack in `stack.rs`, file reads in `files.rs`, scripts
//! and hooks in `run.rs`, decisions in `check.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use skills_model::{Skill, SkillRecord};

use crate::active::Active;
use crate::audit::{AuditEvent, AuditKind};
use crate::executor::Inner;
use crate::{Delivery, ExecError, Instructions, Outdated, SessionContext};

impl crate::Executor {
    /// Opens a session.
    pub fn session(&self, context: SessionContext) -> Session {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = context.id.clone().unwrap_or_else(|| {
            format!(
                "session-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            )
        });
        Session::new(Arc::clone(self.inner()), id, context)
    }
}

/// One agent's conversation: a stack of active skills, most recent last.
#[derive(Debug)]
pub struct Session {
    pub(crate) exec: Arc<Inner>,
    pub(crate) id: String,
    pub(crate) context: SessionContext,
    pub(crate) stack: Mutex<Vec<Active>>,
    /// The index generation this session last followed.
    seen_generation: AtomicU64,
    /// Qualified name → the on-disk digest last reported outdated (reported once each).
    reported: Mutex<HashMap<String, Option<String>>>,
    /// The events of `check_tool` decisions held for a batch ([`Session::hold_decisions`]):
    /// this session's own, and only for the thread that holds them.
    held: Mutex<Vec<HeldBatch>>,
    /// What this session sees of the search index it last searched: its searches are
    /// scored over the skills it may see ([`Session::search`]).
    pub(crate) audience: skills_index::AudienceMemo,
}

/// Events held for a batch: the holding thread, the events in call order (with their
/// JSON), their size, and how many decisions have been held in all.
#[derive(Debug)]
struct HeldBatch {
    thread: std::thread::ThreadId,
    events: Vec<(AuditEvent, String)>,
    bytes: usize,
    count: u64,
}

/// Held events past this size are written at once rather than at the release.
const MAX_HELD: usize = 1 << 20;

impl Session {
    pub(crate) fn new(exec: Arc<Inner>, id: String, context: SessionContext) -> Session {
        let generation = exec.index.snapshot().generation();
        Session {
            exec,
            id,
            context,
            stack: Mutex::new(Vec::new()),
            seen_generation: AtomicU64::new(generation),
            reported: Mutex::new(HashMap::new()),
            held: Mutex::new(Vec::new()),
            audience: skills_index::AudienceMemo::default(),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The context.
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    pub(crate) fn event(&self, kind: AuditKind) -> AuditEvent {
        let mut e = AuditEvent::now(kind, &self.id);
        e.correlation_id.clone_from(&self.context.correlation_id);
        e.agent_id.clone_from(&self.context.agent);
        e.task_id.clone_from(&self.context.task_id);
        e.tenant_id.clone_from(&self.context.tenant);
        e
    }

    /// Records an event: `tracing` first, then the sink. A sink failure is an error, so the
    /// caller fails closed.
    pub(crate) fn emit(&self, event: &AuditEvent) -> Result<(), ExecError> {
        let event = &*event.bounded();
        // A call made while this thread holds decisions: their events go first, so the
        // trail keeps the order of the calls. If they cannot be written, this call fails;
        // they stay held, for the release to write or refuse.
        let me = std::thread::current().id();
        if let Some(batch) = self.held.lock().iter_mut().find(|b| b.thread == me) {
            if !batch.events.is_empty() {
                self.exec
                    .sink
                    .record_batch(&batch.events)
                    .map_err(ExecError::Audit)?;
                batch.events.clear();
                batch.bytes = 0;
            }
        }
        // Serialised once, and only when `tracing` takes it; the sink reuses those bytes.
        if tracing::enabled!(target: "agent_skills::audit", tracing::Level::INFO) {
            match serde_json::to_string(event) {
                Ok(json) => {
                    tracing::info!(target: "agent_skills::audit", "{json}");
                    return self
                        .exec
                        .sink
                        .record_json(event, &json)
                        .map_err(ExecError::Audit);
                }
                Err(e) => {
                    tracing::warn!(target: "agent_skills::audit", error = %e, "unserialisable audit event");
                }
            }
        }
        self.exec.sink.record(event).map_err(ExecError::Audit)
    }

    /// Records the event of a `check_tool` decision: held while this thread holds
    /// decisions ([`hold_decisions`](Self::hold_decisions)), else as [`emit`](Self::emit).
    pub(crate) fn emit_decision(&self, event: &AuditEvent) -> Result<(), ExecError> {
        let event = &*event.bounded();
        let me = std::thread::current().id();
        let mut held = self.held.lock();
        let Some(batch) = held.iter_mut().find(|b| b.thread == me) else {
            drop(held);
            return self.emit(event);
        };
        let json = serde_json::to_string(event).map_err(|e| ExecError::Audit(e.into()))?;
        tracing::info!(target: "agent_skills::audit", "{json}");
        batch.bytes += json.len() + 1;
        batch.events.push((event.clone(), json));
        batch.count += 1;
        if batch.bytes > MAX_HELD {
            // Too much to keep: write what is held now. On an error this decision is
            // refused and its event dropped; the earlier ones stay held.
            if let Err(e) = self.exec.sink.record_batch(&batch.events) {
                if let Some((_, json)) = batch.events.pop() {
                    batch.bytes -= json.len() + 1;
                }
                return Err(ExecError::Audit(e));
            }
            batch.events.clear();
            batch.bytes = 0;
        }
        Ok(())
    }

    /// Holds the events of `check_tool` decisions made on this thread until
    /// [`HeldDecisions::release`], which writes them at once. The caller must not let a
    /// held decision take effect (answer it to a host) before `release` returns `Ok`; when
    /// it fails, every decision held since must be refused. Calls on other threads are
    /// not held. Transports that answer a batch of pipelined requests use it
    /// (`skills_protocol::respond_batch`).
    pub fn hold_decisions(&self) -> HeldDecisions<'_> {
        let me = std::thread::current().id();
        let mut held = self.held.lock();
        // Held already on this thread: one batch, released by the outer release.
        let nested = held.iter().any(|b| b.thread == me);
        if !nested {
            held.push(HeldBatch {
                thread: me,
                events: Vec::new(),
                bytes: 0,
                count: 0,
            });
        }
        HeldDecisions {
            session: self,
            thread: me,
            outer: !nested,
        }
    }

    /// How many decisions this thread has held since [`hold_decisions`](Self::hold_decisions)
    /// (0 when it holds none).
    pub fn held_decisions(&self) -> u64 {
        let me = std::thread::current().id();
        self.held
            .lock()
            .iter()
            .find(|b| b.thread == me)
            .map_or(0, |b| b.count)
    }

    /// Whether anything takes audit events: a sink that keeps them, or a `tracing`
    /// subscriber of `agent_skills::audit`. When nothing does, hot paths skip building them.
    pub(crate) fn audited(&self) -> bool {
        !self.exec.sink.discards()
            || tracing::enabled!(target: "agent_skills::audit", tracing::Level::INFO)
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

    /// Whether the model may be offered `record` in this session: its scope admits the
    /// session, and it is not marked `disable-model-invocation`. (The listing and searches
    /// first resolve each name among what the scope admits, then keep what this admits.)
    pub fn offers_model(&self, record: &SkillRecord) -> bool {
        self.can_see(record) && record.model_invocable()
    }

    /// The skills the model may be offered in this session, sorted by name: those its scope
    /// admits, less those marked `disable-model-invocation` (the host still activates
    /// those, with `host_activate`, on a user's request).
    pub fn visible(&self) -> Vec<Arc<SkillRecord>> {
        let snapshot = self.exec.index.snapshot();
        let sees = |r: &SkillRecord| self.can_see(r);
        snapshot
            .skills_for(&sees)
            .filter(|r| r.model_invocable())
            .cloned()
            .collect()
    }

    /// The active skills, bottom of the stack first, each as pinned at its load.
    pub fn active(&self) -> Vec<Arc<Skill>> {
        self.stack
            .lock()
            .iter()
            .map(|a| Arc::clone(&a.skill))
            .collect()
    }

    /// The top-level instructions for the next model call: the base block, the available
    /// skills, and (when instructions are delivered at top level) the active skills, from
    /// the bytes pinned when each was loaded. Active skills that changed on disk are listed
    /// in `outdated` (and said in the text).
    pub fn instructions(&self, budget: Option<usize>) -> Instructions {
        let outdated = self.outdated();
        let visible = self.visible();
        let available: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
        let active = self.active();
        let active: Vec<&Skill> = if self.exec.policy.delivery == Delivery::TopLevel {
            active.iter().map(|s| &**s).collect()
        } else {
            Vec::new()
        };
        let mut instructions = crate::instructions(&available, &active, budget);
        for o in &outdated {
            instructions.push_str(&format!(
                "\nThe active skill {} changed on disk since it was loaded; its loaded version stays in force until it is loaded again.\n",
                o.skill
            ));
        }
        Instructions {
            instructions,
            outdated,
        }
    }

    /// The active skills whose `SKILL.md` on disk differs from the bytes pinned at load.
    /// Reads each active skill's file: an edit the index kept its last good record for (one
    /// that no longer parses) leaves the indexed record as it was.
    pub fn outdated(&self) -> Vec<Outdated> {
        let snapshot = self.exec.index.snapshot();
        let stack = self.stack.lock();
        let mut out = Vec::new();
        for a in stack.iter() {
            let qualified = a.skill.record.qualified_name();
            let current = match snapshot.get_for(&qualified, &|r| self.can_see(r)) {
                Some(r) if r.path == a.skill.record.path => {
                    let digest = file_digest(&r.path);
                    if digest.as_deref() == Some(a.skill.digest.as_str()) {
                        continue;
                    }
                    digest
                }
                // The name stands for another skill now, one this session may not see
                // (whose digest it is not told), or for none: only the loaded file's own
                // change is reported, with no digest.
                _ => {
                    if file_digest(&a.skill.record.path).as_deref() == Some(&a.skill.digest) {
                        continue;
                    }
                    None
                }
            };
            out.push(Outdated {
                skill: qualified,
                pinned: a.skill.digest.clone(),
                current,
            });
        }
        out
    }

    /// Follows the index: when it has published since the last call, deactivates
    /// (audited) the active skills of plugins that were unregistered. Cheap otherwise.
    pub fn sync(&self) -> Result<(), ExecError> {
        let generation = self.exec.index.snapshot().generation();
        if self.seen_generation.swap(generation, Ordering::AcqRel) == generation {
            return Ok(());
        }
        self.drop_unregistered_plugins()
    }

    /// The active skills that became outdated since they were last reported (each
    /// reported once per version on disk).
    pub fn newly_outdated(&self) -> Vec<Outdated> {
        let outdated = self.outdated();
        let mut reported = self.reported.lock();
        let fresh: Vec<Outdated> = outdated
            .into_iter()
            .filter(|o| reported.get(&o.skill) != Some(&o.current))
            .collect();
        for o in &fresh {
            reported.insert(o.skill.clone(), o.current.clone());
        }
        fresh
    }

    /// The executor this session belongs to.
    pub fn executor(&self) -> crate::Executor {
        crate::Executor::from_inner(Arc::clone(&self.exec))
    }

    /// Rescans every root (`reload`) and returns once the new snapshot is published.
    pub fn reload(&self) -> crate::Reloaded {
        self.executor().reload()
    }

    /// Records that an option loosening the defaults (`--trust`, `--allow-skill-writes`)
    /// is in force for this session (`policy_override`).
    pub fn audit_policy_override(&self, option: &str) -> Result<(), ExecError> {
        let mut e = self.event(AuditKind::PolicyOverride);
        e.option = Some(option.to_owned());
        self.emit(&e)
    }

    /// Records every option of the policy that loosens the defaults
    /// ([`Policy::overrides`](crate::Policy::overrides)), one `policy_override` each: the
    /// one place a session's start records them, whatever serves it (`skillctl session`,
    /// `skillctl mcp` over stdio or HTTP). A host calls it before answering the session's
    /// first request; an error means the record could not be written, and the session
    /// must not be served.
    pub fn audit_policy_overrides(&self) -> Result<(), ExecError> {
        for option in self.exec.policy.overrides() {
            self.audit_policy_override(&option)?;
        }
        Ok(())
    }

    pub(crate) fn forget_reported(&self, qualified: &str) {
        self.reported.lock().remove(qualified);
    }

    /// Deactivates the active skills of a plugin that is no longer registered.
    fn drop_unregistered_plugins(&self) -> Result<(), ExecError> {
        let gone: Vec<String> = {
            let stack = self.stack.lock();
            if !stack.iter().any(|a| a.skill.record.plugin.is_some()) {
                return Ok(());
            }
            let roots = self.exec.index.roots();
            stack
                .iter()
                .filter_map(|a| a.skill.record.plugin.as_deref())
                .filter(|id| !roots.iter().any(|r| r.plugin.as_deref() == Some(*id)))
                .map(str::to_owned)
                .collect()
        };
        for id in gone {
            self.deactivate_plugin(&id)?;
        }
        Ok(())
    }
}

/// `sha256:<hex>` of a file, read with the index's bound; `None` when it cannot be read.
pub(crate) fn file_digest(path: &std::path::Path) -> Option<String> {
    let bytes = skills_storage::read_bounded(path, skills_index::DEFAULT_SKILL_FILE_LIMIT).ok()?;
    Some(skills_index::skill_digest(&bytes))
}

/// Decisions held by [`Session::hold_decisions`]: released by writing their events.
#[derive(Debug)]
#[must_use = "held decisions must be released before they take effect"]
pub struct HeldDecisions<'s> {
    session: &'s Session,
    /// The thread whose decisions are held.
    thread: std::thread::ThreadId,
    /// Whether this hold began the batch (a nested hold leaves it to the outer one).
    outer: bool,
}

impl HeldDecisions<'_> {
    /// This hold's events: the whole batch, taken out of the session, for the hold that
    /// began it; the events held so far, with the batch kept open, for a nested one.
    fn take(&self) -> Vec<(AuditEvent, String)> {
        let mut held = self.session.held.lock();
        let Some(at) = held.iter().position(|b| b.thread == self.thread) else {
            return Vec::new();
        };
        if self.outer {
            held.swap_remove(at).events
        } else {
            held[at].bytes = 0;
            std::mem::take(&mut held[at].events)
        }
    }

    /// Writes the held events in one batch. On an error none is recorded (for the JSON-lines
    /// file), and every decision held since [`Session::hold_decisions`] must be refused.
    pub fn release(self) -> Result<(), ExecError> {
        let events = self.take();
        if events.is_empty() {
            return Ok(());
        }
        self.session
            .exec
            .sink
            .record_batch(&events)
            .map_err(ExecError::Audit)
    }
}

impl Drop for HeldDecisions<'_> {
    fn drop(&mut self) {
        // Dropped without a release (a panic mid-batch): its decisions were never answered,
        // and their events are not written. After a release there is nothing left.
        if self.outer {
            self.take();
        }
    }
}
