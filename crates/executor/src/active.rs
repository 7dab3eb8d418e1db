//! A skill on the stack: one pinned version (body, record and digest from one read, its
//! compiled rules, its scripts' pins), and who activated it.

use std::sync::Arc;

use skills_model::Skill;

use skills_policy::CompiledRules;

/// Who activated a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activation {
    /// The model, through `skills_load` or `skill`.
    Model,
    /// The host, on a user's behalf (`host_activate`): pinned for the task.
    Host,
}

/// A skill on the stack: everything in it comes from the bytes read at its load, so the
/// instructions served and the rules enforced are one version.
#[derive(Debug, Clone)]
pub(crate) struct Active {
    /// Body, record and digest, from one read of `SKILL.md`.
    pub(crate) skill: Arc<Skill>,
    /// Its rules, compiled from `skill.record`.
    pub(crate) rules: CompiledRules,
    /// Every file under `scripts/` at load (path relative to the skill, and its pin):
    /// none for a skill whose scripts can never run (see `Session::prepare`, `stack.rs`).
    pub(crate) scripts: Arc<[(String, crate::pin::ScriptPin)]>,
    pub(crate) by: Activation,
    /// Who had registered its plugin when it was loaded (see `Inner::trusts_active`).
    pub(crate) origin: crate::PluginOrigin,
}

impl Active {
    /// Whether `name` (bare or qualified) names this skill.
    pub(crate) fn is_named(&self, name: &str) -> bool {
        let r = &self.skill.record;
        r.name.as_str() == name || r.qualified_name() == name
    }
}
