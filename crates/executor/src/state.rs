//! `SessionState`: what every operation of a [`Session`](crate::Session) shares and works
//! on: the stack, the audit events (`event`, `emit`, decisions held for a batch), what the
//! session may see, which active skills changed on disk, and the stack's lookups (`target`,
//! `runtime_allowed`). The operations' modules (`stack.rs`, `files.rs`, `run.rs`,
//! `check.rs`, `search.rs`) take it; `session.rs` wraps it as the public `Session`.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use parking_lot::Mutex;
use skills_model::{Requires, Skill, SkillRecord, Unmet};

use crate::active::{allowed_by, Active};
use crate::audit::{AuditEvent, AuditKind};
use crate::executor::Inner;
use crate::{Delivery, ExecError, Instructions, Outdated, SessionContext, Unavailable};

/// The note a skill offered despite unmet needs carries in listings (the host's choice:
/// [`Unavailable::Offered`]); it says nothing of what is missing.
pub(crate) const UNAVAILABLE_NOTE: &str = "(Its needs may not be met on this machine.)";

/// `record` with [`UNAVAILABLE_NOTE`] after its description.
fn noted(record: &SkillRecord) -> Arc<SkillRecord> {
    let mut r = record.clone();
    r.description = format!("{} {UNAVAILABLE_NOTE}", r.description.trim_end());
    Arc::new(r)
}

/// What a session's operations share: its executor, id and context, the stack of active
/// skills (most recent last), and what it has followed and reported. [`Session`](crate::Session)
/// wraps it; the modules of the operations take it.
#[derive(Debug)]
pub(crate) struct SessionState {
    pub(crate) exec: Arc<Inner>,
    pub(crate) id: String,
    pub(crate) context: SessionContext,
    pub(crate) stack: Mutex<Vec<Active>>,
    /// The index generation this session last followed.
    pub(crate) seen_generation: AtomicU64,
    /// Qualified name → the on-disk digest last reported outdated (reported once each).
    reported: Mutex<HashMap<String, Option<String>>>,
    /// The events of `check_tool` decisions held for a batch
    /// ([`Session::hold_decisions`](crate::Session::hold_decisions)): this session's own,
    /// and only for the thread that holds them.
    held: Mutex<Vec<HeldBatch>>,
    /// What this session sees of the search index it last searched: its searches are
    /// scored over the skills it may see ([`Session::search`](crate::Session::search)).
    pub(crate) audience: skills_index::AudienceMemo,
    /// The tools the host said over the wire it offers (`skills_unavailable`), in place of
    /// the policy's.
    host_tools: Mutex<Option<Arc<[String]>>>,
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

impl SessionState {
    pub(crate) fn new(exec: Arc<Inner>, id: String, context: SessionContext) -> SessionState {
        let generation = exec.index.snapshot().generation();
        SessionState {
            exec,
            id,
            context,
            stack: Mutex::new(Vec::new()),
            seen_generation: AtomicU64::new(generation),
            reported: Mutex::new(HashMap::new()),
            held: Mutex::new(Vec::new()),
            audience: skills_index::AudienceMemo::default(),
            host_tools: Mutex::new(None),
        }
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

    /// The work of [`Session::hold_decisions`](crate::Session::hold_decisions).
    pub(crate) fn hold_decisions(&self) -> HeldDecisions<'_> {
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

    /// The work of [`Session::held_decisions`](crate::Session::held_decisions).
    pub(crate) fn held_decisions(&self) -> u64 {
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

    /// The work of [`Session::can_see`](crate::Session::can_see): its scope admits this
    /// session, and its needs are met here (or the policy offers it anyway).
    pub(crate) fn can_see(&self, record: &SkillRecord) -> bool {
        self.scoped(record)
            && (self.exec.policy.unavailable == Unavailable::Offered || self.available(record))
    }

    /// Whether the skill's `scope` admits this session.
    fn scoped(&self, record: &SkillRecord) -> bool {
        let c = &self.context;
        record.frontmatter.scope.as_deref().is_none_or(|scope| {
            scope.admits(
                c.agent.as_deref(),
                c.tenant.as_deref(),
                c.environment.as_deref(),
            )
        })
    }

    /// The work of [`Session::could_see`](crate::Session::could_see): [`Session::can_see`](crate::Session::can_see) for a
    /// record of a snapshot that may not be the current one (a change event's), whose
    /// needs that snapshot found `unavailable` (unmet) or not.
    pub(crate) fn could_see(&self, record: &SkillRecord, unavailable: bool) -> bool {
        if !self.scoped(record) || self.exec.policy.unavailable == Unavailable::Offered {
            return self.scoped(record);
        }
        let tools_met = Requires::of(&record.frontmatter).is_none_or(|needs| {
            needs
                .unmet_tools(self.offered_tools().as_deref())
                .is_empty()
        });
        !unavailable && tools_met
    }

    /// The tools the host offers: said over the wire, else the policy's.
    fn offered_tools(&self) -> Option<Arc<[String]>> {
        self.host_tools
            .lock()
            .clone()
            .or_else(|| self.exec.policy.host_tools.as_deref().map(Into::into))
    }

    /// Whether `record`'s needs are met here: nothing the index found missing when it
    /// published, and every tool it needs offered by the host.
    fn available(&self, record: &SkillRecord) -> bool {
        // Most skills need nothing: no snapshot is asked about them.
        Requires::of(&record.frontmatter).is_none() || self.unmet(record).is_empty()
    }

    /// The work of [`Session::unmet`](crate::Session::unmet).
    pub(crate) fn unmet(&self, record: &SkillRecord) -> Vec<Unmet> {
        let Some(needs) = Requires::of(&record.frontmatter) else {
            return Vec::new();
        };
        let mut unmet = self.exec.index.unmet(record);
        unmet.extend(needs.unmet_tools(self.offered_tools().as_deref()));
        unmet
    }

    /// The work of [`Session::set_host_tools`](crate::Session::set_host_tools).
    pub(crate) fn set_host_tools(&self, tools: Vec<String>) {
        *self.host_tools.lock() = Some(tools.into());
        // What this session sees has changed: its search statistics are worked out again.
        self.audience.forget();
    }

    /// The work of [`Session::unavailable`](crate::Session::unavailable): the skills whose
    /// scope admits this session and whose needs are unmet, first by precedence for each
    /// name.
    pub(crate) fn unavailable(&self) -> crate::UnavailableSkills {
        let snapshot = self.exec.index.snapshot();
        let c = &self.context;
        let scoped = |r: &SkillRecord| {
            r.frontmatter.scope.as_deref().is_none_or(|scope| {
                scope.admits(
                    c.agent.as_deref(),
                    c.tenant.as_deref(),
                    c.environment.as_deref(),
                )
            })
        };
        let skills = snapshot
            .skills_for(&scoped)
            .filter_map(|r| {
                let unmet = self.unmet(r);
                (!unmet.is_empty()).then(|| crate::UnavailableSkill {
                    name: r.name.to_string(),
                    qualified_name: r.qualified_name(),
                    unavailable: unmet.iter().map(ToString::to_string).collect(),
                })
            })
            .collect();
        crate::UnavailableSkills { skills }
    }

    /// The work of [`Session::offers_model`](crate::Session::offers_model).
    pub(crate) fn offers_model(&self, record: &SkillRecord) -> bool {
        self.can_see(record) && record.model_invocable()
    }

    /// Loads the skill `record` was resolved to, itself (not whichever skill now holds its
    /// qualified name, which may be one this session may not see), as its file now reads.
    /// Not found, with no suggestion, when it has left the index since it was resolved
    /// (the index's answer to a name suggests one from every skill it holds, those this
    /// session may not see included:
    /// `stack.rs::regression_a_skill_gone_since_its_resolution_suggests_nothing`), or when
    /// the version read no longer admits this session in its `scope` (the snapshot that resolved it
    /// read an older one: `session.rs::a_scope_written_since_the_index_read_it_governs_the_load`).
    pub(crate) fn load_resolved(&self, record: &SkillRecord) -> Result<Arc<Skill>, ExecError> {
        let skill = self.exec.index.load_record(record).map_err(|e| match e {
            skills_index::IndexError::NotFound { name, .. } => ExecError::not_found(name),
            other => other.into(),
        })?;
        if !self.can_see(&skill.record) {
            return Err(ExecError::not_found(record.qualified_name()));
        }
        // A granted secret's value written into a body (by a script, say) never reaches
        // the model's instructions.
        if let Some(body) = self.exec.policy.secrets.redact_text(&skill.body) {
            let mut redacted = (*skill).clone();
            redacted.body = body;
            return Ok(Arc::new(redacted));
        }
        Ok(skill)
    }

    /// The work of [`Session::visible`](crate::Session::visible).
    pub(crate) fn visible(&self) -> Vec<Arc<SkillRecord>> {
        let snapshot = self.exec.index.snapshot();
        let sees = |r: &SkillRecord| self.can_see(r);
        let offered = self.exec.policy.unavailable == Unavailable::Offered;
        snapshot
            .skills_for(&sees)
            .filter(|r| r.model_invocable())
            .map(|r| {
                if offered && !self.available(r) {
                    noted(r)
                } else {
                    Arc::clone(r)
                }
            })
            .collect()
    }

    /// The work of [`Session::active`](crate::Session::active).
    pub(crate) fn active(&self) -> Vec<Arc<Skill>> {
        self.stack
            .lock()
            .iter()
            .map(|a| Arc::clone(&a.skill))
            .collect()
    }

    /// The work of [`Session::instructions`](crate::Session::instructions).
    pub(crate) fn instructions(&self, budget: Option<usize>) -> Instructions {
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

    /// The work of [`Session::outdated`](crate::Session::outdated).
    pub(crate) fn outdated(&self) -> Vec<Outdated> {
        let snapshot = self.exec.index.snapshot();
        let stack = self.stack.lock();
        let mut out = Vec::new();
        for a in stack.iter() {
            let qualified = a.skill.record.qualified_name();
            let current = match snapshot.get_for(&qualified, &|r| self.can_see(r)) {
                Some(r) if r.path == a.skill.record.path => {
                    let digest = skill_file_digest(&snapshot, r);
                    if digest.as_deref() == Some(a.skill.digest.as_str()) {
                        continue;
                    }
                    digest
                }
                // The name stands for another skill now, one this session may not see
                // (whose digest it is not told), or for none: only the loaded file's own
                // change is reported, with no digest.
                _ => {
                    let now = skill_file_digest(&snapshot, &a.skill.record);
                    if now.as_deref() == Some(&a.skill.digest) {
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

    /// The work of [`Session::newly_outdated`](crate::Session::newly_outdated).
    pub(crate) fn newly_outdated(&self) -> Vec<Outdated> {
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

    /// The work of [`Session::executor`](crate::Session::executor).
    pub(crate) fn executor(&self) -> crate::Executor {
        crate::Executor::from_inner(Arc::clone(&self.exec))
    }

    /// The active skill named `name`, or the most recent one.
    pub(crate) fn target(&self, name: Option<&str>) -> Result<Active, ExecError> {
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

    /// Whether the model may call runtime tool `tool` (on `target`) while the active skills
    /// restrict tools: every skill with an `allowed-tools` must allow it, except the skill
    /// `own` (its own scripts, loading itself again) needs no permission from itself: that
    /// skill itself, not another of its name. Listing, reading the active skills' files and
    /// unloading are never restricted.
    pub(crate) fn runtime_allowed(
        &self,
        tool: &str,
        target: &str,
        own: Option<&SkillRecord>,
    ) -> Result<(), ExecError> {
        allowed_by(&self.stack.lock(), tool, target, own)
    }

    /// The work of [`Session::audit_policy_override`](crate::Session::audit_policy_override).
    pub(crate) fn audit_policy_override(&self, option: &str) -> Result<(), ExecError> {
        let mut e = self.event(AuditKind::PolicyOverride);
        e.option = Some(option.to_owned());
        self.emit(&e)
    }

    /// The work of [`Session::audit_policy_overrides`](crate::Session::audit_policy_overrides).
    pub(crate) fn audit_policy_overrides(&self) -> Result<(), ExecError> {
        for option in self.exec.policy.overrides() {
            self.audit_policy_override(&option)?;
        }
        Ok(())
    }

    pub(crate) fn forget_reported(&self, qualified: &str) {
        self.reported.lock().remove(qualified);
    }
}

/// `sha256:<hex>` of a file, read with the index's bound; `None` when it cannot be read.
/// The digest of `record`'s `SKILL.md` as it reads now: through its source when that is
/// not on disk (a remote index or server, memory), else from the file.
fn skill_file_digest(snapshot: &skills_index::Snapshot, record: &SkillRecord) -> Option<String> {
    match snapshot.place_off_disk(record) {
        Some(place) => {
            let file = place.file(skills_storage::SKILL_FILE);
            let bytes = place
                .source
                .read(&file, skills_index::DEFAULT_SKILL_FILE_LIMIT)
                .ok()?;
            Some(skills_index::skill_digest(&bytes))
        }
        None => file_digest(&record.path),
    }
}

pub(crate) fn file_digest(path: &std::path::Path) -> Option<String> {
    let bytes = skills_storage::read_bounded(path, skills_index::DEFAULT_SKILL_FILE_LIMIT).ok()?;
    Some(skills_index::skill_digest(&bytes))
}

/// Decisions held by [`Session::hold_decisions`](crate::Session::hold_decisions): released
/// by writing their events.
#[derive(Debug)]
#[must_use = "held decisions must be released before they take effect"]
pub struct HeldDecisions<'s> {
    session: &'s SessionState,
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
    /// file), and every decision held since
    /// [`Session::hold_decisions`](crate::Session::hold_decisions) must be refused.
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
