//! The skill stack: loading (with the plan of composition dependencies), what a load pins,
//! unloading by name wherever a skill is, the host's activations that the model cannot drop, and the
//! task guard that empties the stack whatever happens.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use skills_model::{Hooks, Skill, SkillRecord};

use crate::active::{hook_allowed, Activation, Active, StackKey};
use crate::audit::{AuditEvent, AuditKind};
use crate::state::SessionState;
use crate::{
    ActiveSkill, Delivery, ExecError, HookRun, ListedSkill, LoadReceipt, SkillContent, SkillList,
    UnloadReceipt,
};

impl Active {
    /// The skills that judge the post hooks of `leaving` (see `SessionState::run_hooks` (`run.rs`)): those
    /// the host pinned on `stack`, the stack they leave. A skill the model loaded does not:
    /// the model could load a restriction above a skill only to skip its cleanup, a post
    /// hook its load approved. Empty when none of `leaving` has a post hook the model's
    /// load made its own.
    fn judging(stack: &[Active], leaving: &[Active]) -> Vec<Active> {
        let judged = |a: &Active| {
            a.by == Activation::Model
                && a.skill
                    .record
                    .frontmatter
                    .hooks
                    .as_ref()
                    .is_some_and(|h| !h.post.is_empty())
        };
        if leaving.iter().any(judged) {
            stack
                .iter()
                .filter(|a| a.by == Activation::Host)
                .cloned()
                .collect()
        } else {
            Vec::new()
        }
    }

    fn name(&self) -> String {
        self.skill.record.name.to_string()
    }
}

/// How `skills_load` treats skills already active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Push onto the stack (skills already active keep their place).
    Add,
    /// Replace the whole stack (the default), except skills the host activated.
    Replace,
}

/// Ends a task: when dropped, every skill of the session is deactivated (audited), whatever
/// happened (a panic or an early return included).
#[derive(Debug)]
pub struct TaskGuard<'a> {
    session: &'a SessionState,
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.session.end_task() {
            tracing::warn!(session = %self.session.id, error = %e, "ending the task could not record every deactivation");
            // The task is over whatever the sink says: nothing stays active for the next
            // one. Post hooks do not run unaudited: with the sink down they are skipped.
            self.session.stack.lock().clear();
        }
    }
}

impl SessionState {
    /// The work of [`Session::load`](crate::Session::load).
    pub(crate) fn load(&self, names: &[String], mode: LoadMode) -> Result<LoadReceipt, ExecError> {
        self.model_load(names, mode, "skills_load")
    }

    /// A model's load through runtime tool `tool`; a load a rule refuses is recorded
    /// (`record_refusal`).
    fn model_load(
        &self,
        names: &[String],
        mode: LoadMode,
        tool: &str,
    ) -> Result<LoadReceipt, ExecError> {
        let result = self.activate(names, mode, Activation::Model);
        if let Err(err) = &result {
            self.record_refusal(AuditKind::SkillActivationRefused, tool, names, err)?;
        }
        result
    }

    /// Records a runtime call refused by a rule (an active skill's `allowed-tools`, a
    /// layer's trust, `disable-model-invocation`, the host's pin) as the decision it is,
    /// before the call returns: `kind` names what was refused, `error` says why, its code
    /// first. When the record cannot be written, the call fails with that error instead
    /// (the refusal stands either way). Other errors (a name that finds nothing, a bad
    /// input) are not decisions and are not recorded.
    fn record_refusal(
        &self,
        kind: AuditKind,
        tool: &str,
        names: &[String],
        err: &ExecError,
    ) -> Result<(), ExecError> {
        if !matches!(
            err,
            ExecError::ToolNotAllowed(_)
                | ExecError::ModelInvocationDisabled(_)
                | ExecError::Untrusted { .. }
                | ExecError::PinnedByHost(_)
                | ExecError::RequiredByActive { .. }
        ) {
            return Ok(());
        }
        let mut e = self.event(kind);
        e.tool_name = Some(tool.to_owned());
        e.skill_name = Some(names.join(", "));
        e.error = Some(format!("{}: {err}", err.code()));
        self.emit(&e)
    }

    /// The work of [`Session::host_activate`](crate::Session::host_activate).
    pub(crate) fn host_activate(&self, names: &[String]) -> Result<LoadReceipt, ExecError> {
        self.activate(names, LoadMode::Add, Activation::Host)
    }

    /// A skill with hooks loads only where its layer (or plugin) is trusted to run them.
    fn hooks_may_run(&self, r: &SkillRecord) -> Result<(), ExecError> {
        if r.frontmatter.hooks.as_deref().is_some_and(Hooks::runs_any) && !self.exec.trusts(r) {
            return Err(ExecError::untrusted(r));
        }
        Ok(())
    }

    /// Reads a skill's pinned version: body and record from one read, the digests of its
    /// scripts (read within what is left of the load's `budget`), its compiled rules.
    /// A skill whose scripts can never run (its layer or plugin trusted under neither
    /// origin, or a manifest that says it executes no commands) pins none: reading them
    /// would be work for nothing. Their protection from host tools and `skills_read` (by
    /// name and by inode) comes from its rules, not from its pins.
    fn prepare(
        &self,
        record: &Arc<SkillRecord>,
        by: Activation,
        budget: &mut crate::pin::PinBudget,
    ) -> Result<Active, ExecError> {
        let origin = self.exec.origin_of(record);
        let skill = self.load_resolved(record)?;
        // The version read is the one that runs: hooks it gained since the index read it
        // are judged as the plan judged the indexed ones.
        self.hooks_may_run(&skill.record)?;
        let r = &skill.record;
        let policy = &self.exec.policy;
        let may_run = [crate::PluginOrigin::Host, crate::PluginOrigin::Protocol]
            .into_iter()
            .any(|o| policy.trusts_skill(r, o))
            && r.frontmatter
                .security
                .as_ref()
                .and_then(|s| s.executes_commands)
                != Some(false);
        let dir = r.dir().to_path_buf();
        let scripts: Arc<[(String, crate::pin::ScriptPin)]> = skill
            .files
            .iter()
            .filter(|f| may_run && f.path.starts_with("scripts/"))
            .filter_map(|f| Some((f.path.clone(), budget.pin(&dir.join(&f.path))?)))
            .collect();
        let trusted = if policy.trusts_skill(r, origin) {
            crate::resolve::Trusted::Yes
        } else {
            crate::resolve::Trusted::No
        };
        let rules = crate::resolve::compile(&skill, trusted);
        let held = self.held_files(&skill)?;
        Ok(Active {
            skill,
            rules,
            scripts,
            by,
            origin,
            held,
        })
    }

    /// The files `skill`'s source states for the version loaded (an MCP server's entry),
    /// held with it on the stack; `None` for a source that states none. An entry whose
    /// `SKILL.md` is not the one just read (the server listed again between the two) is
    /// not held: the load is refused, to be made again.
    fn held_files(
        &self,
        skill: &skills_model::Skill,
    ) -> Result<Option<Arc<[skills_storage::HeldFile]>>, ExecError> {
        let snapshot = self.exec.index.snapshot();
        let Some(place) = snapshot.place_off_disk(&skill.record) else {
            return Ok(None);
        };
        let Some(files) = place.source.held_files(&place.dir) else {
            return Ok(None);
        };
        let same = files
            .iter()
            .any(|f| f.path == skills_storage::SKILL_FILE && f.digest == skill.digest);
        if !same {
            return Err(ExecError::SkillChanged {
                skill: skill.record.name.to_string(),
            });
        }
        Ok(Some(files.into()))
    }

    /// A load, as a pipeline: plan (resolve the names and their dependencies in the
    /// index), prepare (every read: bodies, script pins, rules), then, under the stack
    /// lock, the pure [`next_stack`], the audit record of the change and its publication;
    /// hooks run after, outside the lock; the receipt says what is active.
    fn activate(
        &self,
        names: &[String],
        mode: LoadMode,
        by: Activation,
    ) -> Result<LoadReceipt, ExecError> {
        let names = distinct_names(names)?;
        let plan = self.plan_load(&names, by)?;
        let prepared = self.prepare_all(&plan.records, by)?;
        #[cfg(test)]
        tests::between_prepare_and_commit();
        let request = StackRequest {
            mode,
            by,
            max_active: self.exec.policy.max_active,
        };
        let change = {
            let mut stack = self.stack.lock();
            // The decisions are made against the stack the change is made to, under the
            // lock that makes it: another call of this session (over MCP they run
            // concurrently) may have changed the stack while the load read its skills
            // (`regression_a_restriction_activated_while_a_load_reads_governs_it`).
            let change = next_stack(&stack, prepared, &request)?;
            self.record_change(&change)?;
            stack.clone_from(&change.next);
            change
        };
        for a in &change.loaded {
            self.forget_reported(&a.skill.record.qualified_name());
        }
        let hooks = self.change_hooks(&change);
        Ok(self.receipt(change, plan.warnings, hooks))
    }

    /// The skills `names` stand for, dependencies first, and the advice the plan gives
    /// (an optional tool the host does not provide). Refuses a required tool the host does
    /// not provide and hooks of a layer not trusted to run them.
    fn plan_load(&self, names: &[String], by: Activation) -> Result<LoadPlan, ExecError> {
        let snapshot = self.exec.index.snapshot();
        // What a name that finds nothing may suggest instead: never a skill the one asking
        // may not load (the user's alone, to the model).
        let offered = |r: &SkillRecord| by == Activation::Host || r.model_invocable();
        let mut records: Vec<Arc<SkillRecord>> = Vec::new();
        let mut visiting = HashSet::new();
        for name in names {
            self.plan(&snapshot, name, None, &offered, &mut records, &mut visiting)?;
        }
        let mut warnings = Vec::new();
        for r in &records {
            warnings.extend(self.binding_warnings(r)?);
            self.hooks_may_run(r)?;
        }
        Ok(LoadPlan { records, warnings })
    }

    /// The advice for `r`'s optional tool bindings the host does not provide; a required
    /// one it does not provide refuses the load.
    fn binding_warnings(&self, r: &SkillRecord) -> Result<Vec<String>, ExecError> {
        let mut warnings = Vec::new();
        for dep in r
            .frontmatter
            .tool_binding
            .iter()
            .flat_map(|b| &b.dependencies)
        {
            let provided = self
                .exec
                .policy
                .host_tools
                .as_ref()
                .is_none_or(|tools| tools.iter().any(|t| t.eq_ignore_ascii_case(&dep.tool)));
            if provided {
                continue;
            }
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
        Ok(warnings)
    }

    /// Reads every planned skill (bodies, script pins, rules) before the stack lock is
    /// taken: file I/O never blocks this session's tool checks. The skills already active
    /// are read first, so a skill new to the stack cannot use up the budget and leave an
    /// active skill's scripts unread (and no longer run). Returns them in plan order.
    fn prepare_all(
        &self,
        plan: &[Arc<SkillRecord>],
        by: Activation,
    ) -> Result<Vec<Active>, ExecError> {
        let mut budget = crate::pin::PinBudget::new(scripts_budget());
        let active: Vec<StackKey> = self.stack.lock().iter().map(Active::key).collect();
        let mut order: Vec<usize> = (0..plan.len()).collect();
        order.sort_by_key(|&i| !active.contains(&StackKey::of(&plan[i])));
        let mut in_place: Vec<Option<Active>> = plan.iter().map(|_| None).collect();
        for i in order {
            let r = &plan[i];
            let a = self.prepare(r, by, &mut budget)?;
            // The plan (dependencies, tool bindings) was made from the indexed version: a
            // version read now that changed them is not activated in its place.
            let read = &a.skill.record.frontmatter;
            if read.composition != r.frontmatter.composition
                || read.tool_binding != r.frontmatter.tool_binding
            {
                return Err(ExecError::ChangedSinceIndexed {
                    skill: r.name.to_string(),
                });
            }
            in_place[i] = Some(a);
        }
        Ok(in_place.into_iter().flatten().collect())
    }

    /// Records a change before the stack makes it: what leaves (top first), then what
    /// arrives, a new version naming the digest it replaces.
    fn record_change(&self, change: &StackChange) -> Result<(), ExecError> {
        for a in change.dropped.iter().rev() {
            self.emit(&self.skill_event(AuditKind::SkillDeactivated, a))?;
        }
        for a in &change.loaded {
            let mut e = self.skill_event(AuditKind::SkillActivated, a);
            if let Some(old) = change.dropped.iter().find(|d| d.key() == a.key()) {
                e.previous_digest = Some(old.skill.digest.clone());
            }
            self.emit(&e)?;
        }
        Ok(())
    }

    /// Runs the hooks of a change, after its events are recorded and outside the stack
    /// lock, so a slow hook never blocks this session's tool checks: the post hooks of what
    /// left (judged by the stack it left), then the pre hooks of what arrived. A new
    /// version of a skill runs no hook: it never left the stack.
    fn change_hooks(&self, change: &StackChange) -> Vec<HookRun> {
        let new_version = |a: &Active| change.reloaded.contains(&a.key());
        let mut hooks = Vec::new();
        for a in change.dropped.iter().rev().filter(|a| !new_version(a)) {
            hooks.extend(self.run_hooks(a, crate::HookStage::Post, &change.judges));
        }
        for a in change.loaded.iter().filter(|a| !new_version(a)) {
            hooks.extend(self.run_hooks(a, crate::HookStage::Pre, &[]));
        }
        hooks
    }

    /// The receipt of a change: the stack after it (with the bodies of what arrived when
    /// they are delivered in the tool result), the plan's advice and what the loaded
    /// skills' `allowed-tools` could not read, the hooks that ran, and the host's pinned
    /// skills a replace kept.
    fn receipt(
        &self,
        change: StackChange,
        mut warnings: Vec<String>,
        hooks: Vec<HookRun>,
    ) -> LoadReceipt {
        let with_body = self.exec.policy.delivery == Delivery::ToolResult;
        let active_skills = change
            .next
            .iter()
            .map(|a| {
                let arrived = change.loaded.iter().any(|l| l.key() == a.key());
                receipt_entry(a, with_body && arrived)
            })
            .collect();
        warnings.extend(change.loaded.iter().flat_map(allowed_tools_warnings));
        LoadReceipt {
            active_skills,
            warnings,
            hooks,
            kept_pinned: change.kept_pinned,
        }
    }

    /// Adds `name` and its dependencies to `plan` (dependencies first).
    fn plan(
        &self,
        snapshot: &skills_index::Snapshot,
        name: &str,
        required_by: Option<&str>,
        offered: &dyn Fn(&SkillRecord) -> bool,
        plan: &mut Vec<Arc<SkillRecord>>,
        visiting: &mut HashSet<String>,
    ) -> Result<(), ExecError> {
        let record = match (self.resolve(snapshot, name, offered), required_by) {
            (Ok(r), _) => r,
            (Err(_), Some(by)) => {
                return Err(ExecError::DependencyMissing {
                    skill: by.to_owned(),
                    dependency: name.to_owned(),
                })
            }
            (Err(e), None) => return Err(e),
        };
        if let Some(other) = plan
            .iter()
            .find(|r| r.name == record.name && r.qualified_name() != record.qualified_name())
        {
            return Err(ExecError::NameActive {
                active: other.qualified_name(),
                requested: record.qualified_name(),
            });
        }
        if plan
            .iter()
            .any(|r| r.qualified_name() == record.qualified_name())
            || !visiting.insert(record.qualified_name())
        {
            return Ok(());
        }
        // A dependency listed twice is resolved once, and is required if any of its
        // entries says so.
        let mut deps: Vec<skills_model::SkillDependency> = Vec::new();
        let mut place: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for dep in record
            .frontmatter
            .composition
            .iter()
            .flat_map(|c| &c.dependencies)
        {
            match place.get(dep.skill_name.as_str()) {
                Some(&i) => deps[i].optional &= dep.optional,
                None => {
                    place.insert(&dep.skill_name, deps.len());
                    deps.push(dep.clone());
                }
            }
        }
        for dep in &deps {
            // An optional dependency the asker may not activate (a skill a user alone
            // invokes, for the model) is absent to it, as one it may not see is.
            let available = snapshot
                .get_for(&dep.skill_name, &|r| self.can_see(r))
                .is_some_and(|r| offered(r));
            if available || !dep.optional {
                self.plan(
                    snapshot,
                    &dep.skill_name,
                    Some(record.name.as_str()),
                    offered,
                    plan,
                    visiting,
                )?;
            }
        }
        plan.push(record);
        Ok(())
    }

    /// The visible skill `name` stands for; if none, the error suggests the closest name
    /// among the visible skills `offered` admits (only those the asker may use).
    fn resolve(
        &self,
        snapshot: &skills_index::Snapshot,
        name: &str,
        offered: &dyn Fn(&SkillRecord) -> bool,
    ) -> Result<Arc<SkillRecord>, ExecError> {
        // What the name stands for among the skills this session may see: one it may not
        // see takes no name from one it may.
        let can_see = |r: &SkillRecord| self.can_see(r);
        match snapshot.get_for(name, &can_see) {
            Some(r) => Ok(Arc::clone(r)),
            None => {
                // A bare name servers contest: the qualified names to choose from.
                let choices = snapshot.contested_choices(name, &can_see);
                if !choices.is_empty() {
                    return Err(ExecError::NotFound(skills_index::IndexError::Contested {
                        name: name.to_owned(),
                        choices,
                    }));
                }
                let visible: Vec<Arc<SkillRecord>> = snapshot
                    .skills_for(&can_see)
                    .filter(|r| offered(r))
                    .cloned()
                    .collect();
                let suggestion =
                    skills_model::closest_name(name, visible.iter().map(|r| r.name.as_str()));
                Err(ExecError::NotFound(skills_index::IndexError::NotFound {
                    name: name.to_owned(),
                    suggestion,
                }))
            }
        }
    }

    pub(crate) fn skill_event(&self, kind: AuditKind, a: &Active) -> AuditEvent {
        let mut e = self.event(kind);
        e.skill_name = Some(a.skill.record.name.to_string());
        e.allowed_tools = a.rules.allowed_list();
        e.digest = Some(a.skill.digest.clone());
        if kind == AuditKind::SkillActivated {
            e.activated_by = Some(
                match a.by {
                    Activation::Model => "model",
                    Activation::Host => "host",
                }
                .to_owned(),
            );
        }
        e
    }

    /// The work of [`Session::unload`](crate::Session::unload).
    pub(crate) fn unload(&self, names: &[String]) -> Result<UnloadReceipt, ExecError> {
        let result = self.unload_named(names);
        if let Err(err) = &result {
            self.record_refusal(
                AuditKind::SkillDeactivationRefused,
                "skills_unload",
                names,
                err,
            )?;
        }
        result
    }

    fn unload_named(&self, names: &[String]) -> Result<UnloadReceipt, ExecError> {
        let mut stack = self.stack.lock();
        // A skill is named by its bare or its qualified name, as `skills_load` takes them.
        let named = |a: &Active| names.iter().any(|n| a.is_named(n));
        if let Some(a) = stack.iter().find(|a| named(a) && a.by == Activation::Host) {
            return Err(ExecError::PinnedByHost(a.name()));
        }
        let not_active = not_active(&stack, names);
        let (removed, remaining): (Vec<Active>, Vec<Active>) =
            stack.iter().cloned().partition(|a| named(a));
        stranded_dependency(&remaining, &removed)?;
        for a in removed.iter().rev() {
            self.emit(&self.skill_event(AuditKind::SkillDeactivated, a))?;
        }
        let before = Active::judging(&stack, &removed);
        *stack = remaining;
        let remaining: Vec<String> = stack.iter().map(Active::name).collect();
        drop(stack);
        let mut receipt = self.finish_unload(&removed, &before, remaining);
        receipt.not_active = not_active;
        Ok(receipt)
    }

    /// Runs the post hooks of the `removed` skills, judged by the stack they left
    /// (`before`), and says what is active now.
    fn finish_unload(
        &self,
        removed: &[Active],
        before: &[Active],
        remaining: Vec<String>,
    ) -> UnloadReceipt {
        let hooks: Vec<HookRun> = removed
            .iter()
            .rev()
            .flat_map(|a| self.run_hooks(a, crate::HookStage::Post, before))
            .collect();
        UnloadReceipt {
            unloaded: removed.iter().rev().map(Active::name).collect(),
            active_skills: remaining,
            hooks,
            not_active: Vec::new(),
        }
    }

    /// The work of [`Session::unload_all`](crate::Session::unload_all).
    pub(crate) fn unload_all(&self) -> Result<UnloadReceipt, ExecError> {
        self.remove_where(|a| a.by == Activation::Model)
    }

    /// Removes the skills `pred` selects, wherever they are on the stack, audited.
    fn remove_where(&self, pred: impl Fn(&Active) -> bool) -> Result<UnloadReceipt, ExecError> {
        let mut stack = self.stack.lock();
        let removed: Vec<Active> = stack.iter().filter(|a| pred(a)).cloned().collect();
        for a in removed.iter().rev() {
            self.emit(&self.skill_event(AuditKind::SkillDeactivated, a))?;
        }
        let before = Active::judging(&stack, &removed);
        stack.retain(|a| !pred(a));
        let remaining: Vec<String> = stack.iter().map(Active::name).collect();
        drop(stack);
        Ok(self.finish_unload(&removed, &before, remaining))
    }

    /// The work of [`Session::end_task`](crate::Session::end_task).
    pub(crate) fn end_task(&self) -> Result<UnloadReceipt, ExecError> {
        self.remove_where(|_| true)
    }

    /// The work of [`Session::sync`](crate::Session::sync).
    pub(crate) fn sync(&self) -> Result<(), ExecError> {
        let generation = self.exec.index.snapshot().generation();
        if self.seen_generation.swap(generation, Ordering::AcqRel) == generation {
            return Ok(());
        }
        self.drop_unregistered_plugins()
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

    /// Deactivates the active skills of plugin `id` (audited).
    pub(crate) fn deactivate_plugin(&self, id: &str) -> Result<UnloadReceipt, ExecError> {
        self.remove_where(|a| a.skill.record.plugin.as_deref() == Some(id))
    }

    /// The work of [`Session::unregister_plugin`](crate::Session::unregister_plugin).
    pub(crate) fn unregister_plugin(
        &self,
        id: &str,
    ) -> Result<crate::PluginUnregistered, ExecError> {
        let executor = self.executor();
        let hosts = executor
            .index()
            .roots()
            .iter()
            .any(|r| r.plugin.as_deref() == Some(id));
        if hosts && !executor.registered_over_protocol(id) {
            return Err(ExecError::Index(skills_index::IndexError::Plugin {
                id: id.to_owned(),
                reason: "is one of the host's own plugins, not one registered over the protocol; the host removes it",
            }));
        }
        let out = executor.unregister_plugin(id)?;
        self.deactivate_plugin(id)?;
        let mut e = self.event(AuditKind::PluginUnregistered);
        e.plugin_id = Some(id.to_owned());
        self.emit(&e)?;
        Ok(out)
    }

    /// The work of [`Session::register_plugin`](crate::Session::register_plugin).
    pub(crate) fn register_plugin(
        &self,
        id: &str,
        root: crate::PluginRoot<'_>,
    ) -> Result<crate::PluginRegistered, ExecError> {
        let out = match root {
            crate::PluginRoot::Folder(root) => {
                self.executor()
                    .register_plugin(id, root, crate::PluginOrigin::Protocol)?
            }
            crate::PluginRoot::Server(server) => self.executor().register_server(id, server)?,
        };
        let mut e = self.event(AuditKind::PluginRegistered);
        e.plugin_id = Some(id.to_owned());
        e.path = Some(out.root.clone());
        self.emit(&e)?;
        Ok(out)
    }

    /// The work of [`Session::task`](crate::Session::task).
    pub(crate) fn task(&self) -> TaskGuard<'_> {
        TaskGuard { session: self }
    }

    /// The work of [`Session::list`](crate::Session::list).
    pub(crate) fn list(&self) -> SkillList {
        let active: Vec<String> = self
            .stack
            .lock()
            .iter()
            .map(|a| a.skill.record.qualified_name())
            .collect();
        SkillList {
            skills: self
                .visible()
                .iter()
                .map(|r| ListedSkill {
                    name: r.name.to_string(),
                    qualified_name: r.qualified_name(),
                    description: r.listed_description().into_owned(),
                    layer: r.layer.to_string(),
                    origin: r.remote.as_ref().map(|o| o.to_string()),
                    active: active.contains(&r.qualified_name()),
                })
                .collect(),
        }
    }

    /// The work of [`Session::instructions_of`](crate::Session::instructions_of).
    pub(crate) fn instructions_of(&self, name: &str, via: &str) -> Result<SkillContent, ExecError> {
        let snapshot = self.exec.index.snapshot();
        let found = self.resolve(&snapshot, name, &SkillRecord::user_invocable);
        self.instructions_from(found, name, via)
    }

    /// The work of [`Session::instructions_of_record`](crate::Session::instructions_of_record).
    pub(crate) fn instructions_of_record(
        &self,
        record: &Arc<SkillRecord>,
        via: &str,
    ) -> Result<SkillContent, ExecError> {
        let name = record.qualified_name();
        let found = if self.can_see(record) {
            Ok(Arc::clone(record))
        } else {
            Err(ExecError::not_found(name.as_str()))
        };
        self.instructions_from(found, &name, via)
    }

    /// The instructions of the skill `found` for a prompt asked for as `name`, audited.
    fn instructions_from(
        &self,
        found: Result<Arc<SkillRecord>, ExecError>,
        name: &str,
        via: &str,
    ) -> Result<SkillContent, ExecError> {
        let result = found
            // Judged on the version read too, as a load judges its scope.
            .and_then(|r| {
                let offered = |r: &SkillRecord| r.user_invocable();
                if !offered(&r) {
                    return Err(ExecError::not_found(name));
                }
                let skill = self.load_resolved(&r)?;
                if !offered(&skill.record) {
                    return Err(ExecError::not_found(name));
                }
                Ok(skill)
            });
        let mut e = self.event(AuditKind::SkillFileRead);
        e.tool_name = Some(via.to_owned());
        e.path = Some("SKILL.md".to_owned());
        e.skill_name = Some(name.to_owned());
        if let Err(err) = &result {
            e.error = Some(err.to_string());
        }
        self.emit(&e)?;
        let skill = result?;
        Ok(skill_content(&skill, skill.body.clone()))
    }

    /// The work of [`Session::skill`](crate::Session::skill).
    pub(crate) fn skill(&self, name: &str) -> Result<SkillContent, ExecError> {
        self.model_load(&[name.to_owned()], LoadMode::Add, "skill")?;
        let skill = &self.target(Some(name))?.skill;
        Ok(skill_content(skill, crate::prompt::skill_content(skill)))
    }
}

/// A skill's instructions as the `skill` tool and prompts give them, with `content`.
fn skill_content(skill: &Skill, content: String) -> SkillContent {
    SkillContent {
        name: skill.record.name.to_string(),
        content,
        base_path: skill.record.dir().display().to_string(),
        allowed_tools: skill
            .record
            .frontmatter
            .allowed_tools
            .iter()
            .flat_map(|r| r.rules().iter().map(ToString::to_string))
            .collect(),
    }
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

fn receipt_entry(a: &Active, with_body: bool) -> ActiveSkill {
    let r = &a.skill.record;
    let mut properties = match serde_json::to_value(&*r.frontmatter) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    properties.retain(|k, v| k != "name" && !is_unset(k, v));
    // The index keeps the description on the record, not in the frontmatter.
    properties.insert("description".to_owned(), json!(r.description));
    let dir = r.dir().display().to_string();
    ActiveSkill {
        name: r.name.to_string(),
        qualified_name: r.qualified_name(),
        location: r.path.display().to_string(),
        origin: r.remote.as_ref().map(|o| o.to_string()),
        root_dir: dir.clone(),
        digest: a.skill.digest.clone(),
        properties,
        pinned_by_host: a.by == Activation::Host,
        base_path: with_body.then(|| dir.clone()),
        body: with_body.then(|| a.skill.body.clone()),
        skill_content: with_body.then(|| crate::prompt::skill_content(&a.skill)),
    }
}

/// The bytes one load reads to pin scripts ([`SCRIPTS_BUDGET`](crate::pin::SCRIPTS_BUDGET);
/// a unit test may set a smaller one).
fn scripts_budget() -> u64 {
    #[cfg(test)]
    if let Some(bytes) = tests::BUDGET.with(std::cell::Cell::get) {
        return bytes;
    }
    crate::pin::SCRIPTS_BUDGET
}

/// What the model may not activate, judged on the versions just read (the ones that
/// would be active, whatever the index's snapshot said) of the skills new to `stack` or in
/// another version than the active one (one already active as it is runs no hook again,
/// and the host may have pinned it): a skill a user alone invokes, by name or as a
/// dependency; and, under a skill of `judges` that restricts tools, a skill whose hooks
/// (scripts run at activation and deactivation) it does not allow as it would have to
/// allow running them.
fn model_may_activate(
    judges: &[Active],
    stack: &[Active],
    prepared: &[Active],
) -> Result<(), ExecError> {
    let changes = |a: &&Active| {
        !stack
            .iter()
            .any(|s| s.key() == a.key() && s.skill.digest == a.skill.digest)
    };
    for a in prepared.iter().filter(changes) {
        let r = &a.skill.record;
        if !r.model_invocable() {
            return Err(ExecError::ModelInvocationDisabled(r.name.to_string()));
        }
        for hook in r
            .frontmatter
            .hooks
            .iter()
            .flat_map(|h| h.pre.iter().chain(&h.post))
        {
            hook_allowed(judges, r, hook)?;
        }
    }
    Ok(())
}

/// `names` without repeats, in order: a name given twice is resolved once (each
/// resolution walks the skills of its name, those this session may not see included).
fn distinct_names(names: &[String]) -> Result<Vec<String>, ExecError> {
    if names.is_empty() {
        return Err(ExecError::BadInput(
            "name at least one skill to load".into(),
        ));
    }
    let mut once = HashSet::new();
    Ok(names
        .iter()
        .filter(|n| once.insert(n.as_str()))
        .cloned()
        .collect())
}

/// The skills a load resolved, dependencies first, and the plan's advice.
struct LoadPlan {
    records: Vec<Arc<SkillRecord>>,
    warnings: Vec<String>,
}

/// What a load asks of the stack.
struct StackRequest {
    mode: LoadMode,
    by: Activation,
    max_active: usize,
}

/// A change of the stack, computed by [`next_stack`] before anything is recorded.
struct StackChange {
    /// The stack after the change, bottom first.
    next: Vec<Active>,
    /// What arrives: skills new to the stack, and new versions of active ones.
    loaded: Vec<Active>,
    /// What leaves: what a replace ends, and the versions new ones replace.
    dropped: Vec<Active>,
    /// The skills of `dropped` that arrive again in a new version.
    reloaded: Vec<StackKey>,
    /// The skills that judge the post hooks of `dropped` ([`Active::judging`]).
    judges: Vec<Active>,
    /// The host's pinned skills a model's replace kept in force.
    kept_pinned: Vec<String>,
}

/// The stack a load makes of `stack` with the `prepared` skills, or why it may not: pure,
/// so every rule of a load is here and nothing is half done when one refuses.
///
/// A replace by the model is an unload of its skills followed by a load: the skills it
/// ends judge nothing of it (the runtime spec's skill switching), the host's pinned skills
/// stay and judge it as they judge any load. An add keeps every active skill, and each
/// restricting one judges what arrives (a nested skill can narrow, never widen).
fn next_stack(
    stack: &[Active],
    prepared: Vec<Active>,
    req: &StackRequest,
) -> Result<StackChange, ExecError> {
    let pinned: Vec<Active> = stack
        .iter()
        .filter(|a| a.by == Activation::Host)
        .cloned()
        .collect();
    if req.by == Activation::Model {
        let judges = match req.mode {
            LoadMode::Replace => &pinned[..],
            LoadMode::Add => stack,
        };
        model_may_activate(judges, stack, &prepared)?;
    }
    let new_names = next_order(stack, &prepared, req.mode);
    let to_activate = arriving(stack, &prepared);
    one_skill_per_name(stack, &prepared, &new_names)?;
    if new_names.len() > req.max_active {
        return Err(ExecError::TooManyActive {
            cap: req.max_active,
            requested: new_names.len(),
        });
    }
    let (mut kept, dropped): (Vec<Active>, Vec<Active>) = stack
        .iter()
        .cloned()
        .partition(|a| new_names.contains(&a.key()) && !to_activate.contains(&a.key()));
    let judges = Active::judging(stack, &dropped);
    if req.by == Activation::Host {
        // The host pins a skill it names that the model had loaded already.
        for a in kept
            .iter_mut()
            .filter(|a| prepared.iter().any(|p| p.key() == a.key()))
        {
            a.by = Activation::Host;
        }
    }
    let loaded: Vec<Active> = prepared
        .into_iter()
        .filter(|a| to_activate.contains(&a.key()))
        .map(|mut a| {
            // A skill the host pinned stays pinned when the model loads it again.
            if dropped
                .iter()
                .any(|d| d.by == Activation::Host && d.key() == a.key())
            {
                a.by = Activation::Host;
            }
            a
        })
        .collect();
    no_conflicts(kept.iter().chain(&loaded))?;
    let reloaded: Vec<StackKey> = dropped
        .iter()
        .filter(|d| loaded.iter().any(|l| l.key() == d.key()))
        .map(Active::key)
        .collect();
    let mut next = kept;
    next.extend(loaded.iter().cloned());
    next.sort_by_key(|a| new_names.iter().position(|n| *n == a.key()));
    let kept_pinned = if req.by == Activation::Model && req.mode == LoadMode::Replace {
        pinned.iter().map(Active::name).collect()
    } else {
        Vec::new()
    };
    Ok(StackChange {
        next,
        loaded,
        dropped,
        reloaded,
        judges,
        kept_pinned,
    })
}

/// The skills of the stack after a load, in order: for `add` the stack as it is, then the
/// plan's new skills; for `replace` the host's pinned skills, then the plan. A skill that
/// stays keeps its place.
fn next_order(stack: &[Active], prepared: &[Active], mode: LoadMode) -> Vec<StackKey> {
    let mut order: Vec<StackKey> = match mode {
        LoadMode::Replace => stack
            .iter()
            .filter(|a| a.by == Activation::Host)
            .map(Active::key)
            .collect(),
        LoadMode::Add => stack.iter().map(Active::key).collect(),
    };
    for a in prepared {
        let key = a.key();
        if !order.contains(&key) {
            order.push(key);
        }
    }
    order
}

/// The prepared skills that arrive: those not on the stack, and those whose version read
/// differs from the one active (loading again pins the new version; a server's new entry
/// for an unchanged `SKILL.md` is a new version too). A skill already
/// active whose scripts this load could not all read (its budget spent by others) keeps
/// the pins it has: a load does not take scripts away from a skill already active (they
/// are still checked at each run).
fn arriving(stack: &[Active], prepared: &[Active]) -> Vec<StackKey> {
    let mut keys = Vec::new();
    for a in prepared {
        let key = a.key();
        let starved = a
            .scripts
            .iter()
            .any(|(_, pin)| *pin == crate::pin::ScriptPin::Unread);
        let same = stack.iter().find(|s| s.key() == key).is_some_and(|s| {
            s.skill.digest == a.skill.digest
                && (s.scripts == a.scripts || starved)
                && s.held == a.held
        });
        if !same && !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// One active skill of a name: a second one from another layer (or another folder of the
/// same) would make every name the model gives (to read, run, unload) stand for either.
fn one_skill_per_name(
    stack: &[Active],
    prepared: &[Active],
    order: &[StackKey],
) -> Result<(), ExecError> {
    let bare = |key: &StackKey| {
        stack
            .iter()
            .chain(prepared)
            .find(|a| a.key() == *key)
            .map(Active::name)
    };
    for (i, key) in order.iter().enumerate() {
        if let Some(other) = order[..i].iter().find(|o| bare(o) == bare(key)) {
            // Two folders of one qualified name are told apart by their folders.
            let shown = |k: &StackKey| {
                if other.qualified == key.qualified {
                    format!("{} (in {})", k.qualified, k.path.display())
                } else {
                    k.qualified.clone()
                }
            };
            return Err(ExecError::NameActive {
                active: shown(other),
                requested: shown(key),
            });
        }
    }
    Ok(())
}

/// Whether the skills that would be active together include two their `composition`
/// says conflict.
fn no_conflicts<'a>(active: impl Iterator<Item = &'a Active> + Clone) -> Result<(), ExecError> {
    for r in active.clone().map(|a| &*a.skill.record) {
        for conflict in r.frontmatter.composition.iter().flat_map(|c| &c.conflicts) {
            if conflict != r.name.as_str()
                && active
                    .clone()
                    .any(|o| o.skill.record.name.as_str() == conflict)
            {
                return Err(ExecError::Conflict {
                    skill: r.name.to_string(),
                    with: conflict.clone(),
                });
            }
        }
    }
    Ok(())
}

/// What a loaded skill's `allowed-tools` could not read, as advice: an `allowed-tools`
/// that cannot be read restricts to nothing, and the advice says so and why.
fn allowed_tools_warnings(a: &Active) -> Vec<String> {
    let nothing = a
        .skill
        .record
        .frontmatter
        .allowed_tools
        .as_ref()
        .is_some_and(|r| r.is_empty());
    let consequence = if nothing {
        " (it cannot be read, so this skill allows no tool until it is fixed)"
    } else {
        ""
    };
    a.skill
        .record
        .diagnostics
        .iter()
        .filter(|d| d.rule.id().starts_with("allowed-tools"))
        .map(|d| format!("{}: {}{consequence}", a.name(), d.message))
        .collect()
}

/// How many names an unload receipt reports as not active; past it, the last entry says
/// how many more there were.
const NOT_ACTIVE_SHOWN: usize = 32;

/// The longest name an unload receipt echoes: no skill's name is longer, and a model's
/// input is never echoed whole.
const NAME_SHOWN: usize = 128;

/// The names of `names` that stand for no skill of `stack`, once each, each cut to
/// [`NAME_SHOWN`] and at most [`NOT_ACTIVE_SHOWN`] of them.
fn not_active(stack: &[Active], names: &[String]) -> Vec<String> {
    let mut missing: Vec<&String> = Vec::new();
    for name in names {
        if !stack.iter().any(|a| a.is_named(name)) && !missing.contains(&name) {
            missing.push(name);
        }
    }
    let cut = |n: &&String| skills_model::cut_text(n, NAME_SHOWN).into_owned();
    if missing.len() <= NOT_ACTIVE_SHOWN {
        return missing.iter().map(cut).collect();
    }
    let mut shown: Vec<String> = missing.iter().take(NOT_ACTIVE_SHOWN - 1).map(cut).collect();
    shown.push(format!(
        "... ({} more)",
        missing.len() - (NOT_ACTIVE_SHOWN - 1)
    ));
    shown
}

/// The first required composition dependency that removing `removed` would take from a
/// skill that stays active: such an unload is refused, naming the skill that needs it.
fn stranded_dependency(remaining: &[Active], removed: &[Active]) -> Result<(), ExecError> {
    for a in remaining {
        let required = a
            .skill
            .record
            .frontmatter
            .composition
            .iter()
            .flat_map(|c| &c.dependencies)
            .filter(|d| !d.optional);
        for dep in required {
            let name = dep.skill_name.as_str();
            if removed.iter().any(|r| r.is_named(name))
                && !remaining.iter().any(|r| r.is_named(name))
            {
                return Err(ExecError::RequiredByActive {
                    skill: name.to_owned(),
                    needed_by: a.name(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use skills_index::{IndexError, SkillIndex};
    use skills_model::Layer;

    use crate::{ExecError, Executor, LoadMode, Session, SessionContext};

    thread_local! {
        /// What runs on this thread between a load's reads and its commit (the seam of
        /// `regression_a_restriction_activated_while_a_load_reads_governs_it`).
        static BETWEEN: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
            std::cell::RefCell::new(None);
    }

    thread_local! {
        /// The script budget of this thread's loads, when a test sets one
        /// (`regression_a_load_reads_its_scripts_within_a_budget_each_file_once`).
        pub(super) static BUDGET: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    }

    /// Runs (once) what a test set to run between a load's reads and its commit.
    pub(super) fn between_prepare_and_commit() {
        if let Some(f) = BETWEEN.with(|b| b.borrow_mut().take()) {
            f();
        }
    }

    /// An index of one personal root holding `name`, with the extra frontmatter lines.
    fn index_of(dir: &std::path::Path, name: &str, extra: &str) -> Arc<SkillIndex> {
        let folder = dir.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Does {name}.\n{extra}---\nBody.\n"),
        )
        .unwrap();
        Arc::new(
            SkillIndex::builder()
                .root(Layer::Personal, dir)
                .build()
                .unwrap(),
        )
    }

    /// A session of an executor over `index`.
    fn session_of(index: Arc<SkillIndex>) -> Session {
        Executor::builder(index)
            .build()
            .session(SessionContext::builder().id("s").build())
    }

    /// Loads `names` in `session` (add mode) with the scripts' budget set to `budget` bytes.
    fn load_within(session: &Session, names: &[&str], budget: u64) {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        BUDGET.with(|b| b.set(Some(budget)));
        let loaded = session.load(&names, LoadMode::Add);
        BUDGET.with(|b| b.set(None));
        loaded.unwrap();
    }

    /// Regression: a skill that left the index between its resolution and its load (here:
    /// a record of another index) was not found with a suggestion drawn from every skill
    /// the index holds, naming one the model may not see. `prepare` and `instructions_of`
    /// load through `load_resolved` alone.
    #[test]
    fn regression_a_skill_gone_since_its_resolution_suggests_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let index = index_of(
            &tmp.path().join("a"),
            "secret-plan",
            "disable-model-invocation: true\n",
        );
        let gone = index_of(&tmp.path().join("b"), "secret-plam", "");
        let record = Arc::clone(&gone.snapshot().records()[0]);
        // The index itself suggests the hidden skill...
        let Err(IndexError::NotFound { suggestion, .. }) = index.load(&record.qualified_name())
        else {
            panic!("not found expected");
        };
        assert_eq!(suggestion.as_deref(), Some("personal:secret-plan"));
        // ...the session does not pass it on.
        let executor = Executor::builder(index).build();
        let session = crate::state::SessionState::new(
            Arc::clone(executor.inner()),
            "s".to_owned(),
            SessionContext::builder().id("s").build(),
        );
        match session.load_resolved(&record) {
            Err(ExecError::NotFound(IndexError::NotFound { suggestion, .. })) => {
                assert_eq!(suggestion, None);
            }
            other => panic!(
                "not found expected, got {:?}",
                other.map(|s| s.record.name.clone())
            ),
        }
    }

    /// Regression: a load judged the stack before it read its skills (outside the lock)
    /// and committed to the stack as it was after. A load racing a load of a restricting
    /// skill (over MCP, a session's calls run concurrently) escaped that skill's judgement.
    /// Here the restricting skill is activated between the reads and the commit, as the
    /// racing call did. (Changed by issue 37: the race was shown with a replace-mode load,
    /// which no longer needs the permission of the skills it ends; a load whose hook the
    /// restriction does not allow shows it now.)
    #[test]
    fn regression_a_restriction_activated_while_a_load_reads_governs_it() {
        let tmp = tempfile::tempdir().unwrap();
        let index = index_of(tmp.path(), "alpha", "allowed-tools: skills_read\n");
        index_of(tmp.path(), "heavy", "hooks:\n  pre: [scripts/pre.sh]\n");
        index.reload_now();
        let session = Arc::new(
            Executor::builder(index)
                .build()
                .session(SessionContext::builder().id("s").build()),
        );
        let other: Arc<Session> = Arc::clone(&session);
        BETWEEN.with(|b| {
            *b.borrow_mut() = Some(Box::new(move || {
                other.load(&["alpha".to_owned()], LoadMode::Add).unwrap();
            }));
        });
        let err = session
            .load(&["heavy".to_owned()], LoadMode::Add)
            .unwrap_err();
        assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{err}");
        let active: Vec<String> = session
            .list()
            .skills
            .into_iter()
            .filter(|s| s.active)
            .map(|s| s.name)
            .collect();
        assert_eq!(active, ["alpha"]);
    }

    /// Regression: a load hashed every file under `scripts/` up to 64 MiB each, ten
    /// thousand of them, a file once per link to it: a hostile folder of 12 KB (one sparse
    /// file of 63 MiB and ten thousand links to it) made each load read 640 GB. A load now
    /// reads its scripts within one budget, each file once; a script beyond the budget is
    /// not pinned and never runs, with an error naming the limit. (Here with a budget of
    /// 250 bytes for files of 100.)
    #[cfg(unix)]
    #[test]
    fn regression_a_load_reads_its_scripts_within_a_budget_each_file_once() {
        let tmp = tempfile::tempdir().unwrap();
        let index = index_of(tmp.path(), "tools", "");
        let scripts = tmp.path().join("tools/scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        let script = format!("exit 0\n#{}\n", "x".repeat(91));
        assert_eq!(script.len(), 100);
        for name in ["base.sh", "more.sh", "zz.sh"] {
            std::fs::write(scripts.join(name), &script).unwrap();
        }
        for i in 0..20 {
            std::os::unix::fs::symlink("base.sh", scripts.join(format!("l{i:02}.sh"))).unwrap();
        }
        index.reload_now();
        let session = session_of(index);
        load_within(&session, &["tools"], 250);
        // base.sh and more.sh were read (200 bytes); the links to base.sh cost nothing.
        for path in ["scripts/base.sh", "scripts/l19.sh", "scripts/more.sh"] {
            let run = session.run_script(&crate::ScriptCall::new(path)).unwrap();
            assert_eq!(run.output.exit_code, Some(0), "{path}");
        }
        // zz.sh was beyond the budget: not read, never run, and the error says why.
        let err = session
            .run_script(&crate::ScriptCall::new("scripts/zz.sh"))
            .unwrap_err();
        assert_eq!(err.code(), "SKILL_FILE_TOO_LARGE", "{err}");
        assert!(err.to_string().contains("limit of"), "{err}");
    }

    /// Regression (review): one load's skills shared the budget in the order named, so a
    /// skill new to the stack named first used it up, and an active skill loaded with it
    /// was pinned again with its scripts unread: they no longer ran. The skills already
    /// active are read first.
    #[test]
    fn regression_a_new_skill_cannot_use_up_an_active_skill_s_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let index = index_of(tmp.path(), "tools", "");
        let hostile = tmp.path().join("hostile");
        std::fs::create_dir_all(hostile.join("scripts")).unwrap();
        std::fs::write(
            hostile.join("SKILL.md"),
            "---\nname: hostile\ndescription: Does hostile.\n---\nBody.\n",
        )
        .unwrap();
        let sized = |n: usize| format!("exit 0\n#{}\n", "x".repeat(n - 9));
        for name in ["a.sh", "b.sh"] {
            std::fs::write(hostile.join("scripts").join(name), sized(125)).unwrap();
        }
        std::fs::create_dir_all(tmp.path().join("tools/scripts")).unwrap();
        std::fs::write(tmp.path().join("tools/scripts/run.sh"), sized(100)).unwrap();
        index.reload_now();
        let session = session_of(index);
        load_within(&session, &["tools"], 250);
        load_within(&session, &["hostile", "tools"], 250);
        let call = crate::ScriptCall {
            skill: Some("tools".to_owned()),
            ..crate::ScriptCall::new("scripts/run.sh")
        };
        let run = session.run_script(&call).unwrap();
        assert_eq!(run.output.exit_code, Some(0));
        // Both active now, the one named first spends the budget: the other keeps its pins
        // (regression, second review).
        load_within(&session, &["hostile", "tools"], 250);
        let run = session.run_script(&call).unwrap();
        assert_eq!(run.output.exit_code, Some(0));
    }
}
