//! A skill on the stack: one pinned version (body, record and digest from one read, its
//! compiled rules, its scripts' pins), who activated it, what identifies it on the stack,
//! and what the active skills' `allowed-tools` let the runtime tools do.

use std::sync::Arc;

use skills_model::{Skill, SkillRecord};

use skills_policy::CompiledRules;

use crate::ExecError;

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
    /// none for a skill whose scripts can never run (see `SessionState::prepare`, `stack.rs`).
    pub(crate) scripts: Arc<[(String, crate::pin::ScriptPin)]>,
    pub(crate) by: Activation,
    /// Who had registered its plugin when it was loaded (see `Inner::trusts_active`).
    pub(crate) origin: crate::PluginOrigin,
    /// For a skill whose source states its files' digests (an MCP server's entry), the
    /// files as stated at the load: its reads serve only these, as they were.
    pub(crate) held: Option<Arc<[skills_storage::HeldFile]>>,
}

impl Active {
    /// Whether `name` (bare or qualified) names this skill.
    pub(crate) fn is_named(&self, name: &str) -> bool {
        let r = &self.skill.record;
        r.name.as_str() == name || r.qualified_name() == name
    }

    /// What identifies it on the stack ([`StackKey`]).
    pub(crate) fn key(&self) -> StackKey {
        StackKey::of(&self.skill.record)
    }
}

/// What identifies a skill on the stack: its qualified name and its `SKILL.md`. Two skills
/// of one bare name from different layers are different skills, and so are two folders of
/// one layer that hold one name (the second, once it ranks first, is not a new version of
/// the first: it neither takes the first's place, pin and restrictions nor skips their
/// hooks: `attacks.rs::another_folder_of_the_same_name_never_replaces_an_active_skill`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StackKey {
    pub(crate) qualified: String,
    pub(crate) path: std::path::PathBuf,
}

impl StackKey {
    pub(crate) fn of(record: &SkillRecord) -> StackKey {
        StackKey {
            qualified: record.qualified_name(),
            path: record.path.clone(),
        }
    }
}

/// Whether every skill of `stack` that restricts tools (`r` itself aside) allows running
/// `r`'s hook `hook`, as it would have to allow running that script:
/// `skills_run_script(NAME:scripts/HOOK)`. A load judges a skill's hooks so, and so does
/// its end judge its post hooks.
pub(crate) fn hook_allowed(stack: &[Active], r: &SkillRecord, hook: &str) -> Result<(), ExecError> {
    allowed_by(
        stack,
        "skills_run_script",
        &format!("{}:{hook}", r.name),
        Some(r),
    )
}

/// Whether every skill of `stack` that restricts tools allows runtime tool `tool` on
/// `target`, but for `own` itself (see `SessionState::runtime_allowed`, `state.rs`): by its [`StackKey`],
/// so a skill of its name from another folder or layer is not its own
/// (`attacks.rs::a_skill_of_the_same_name_is_not_a_restricting_skill_s_own`).
pub(crate) fn allowed_by(
    stack: &[Active],
    tool: &str,
    target: &str,
    own: Option<&SkillRecord>,
) -> Result<(), ExecError> {
    let own = own.map(StackKey::of);
    for a in stack {
        let Some(allowed) = &a.rules.allowed else {
            continue;
        };
        if own.as_ref().is_some_and(|own| a.key() == *own) {
            continue;
        }
        if !allowed.any_matches(tool, Some(target)) {
            return Err(ExecError::ToolNotAllowed(format!(
                "{tool}({target}) is not in the allowed-tools of the active skill {:?}: a skill that restricts tools governs every call while it is active (list {tool} in its allowed-tools, or unload it first)",
                a.skill.record.name.as_str()
            )));
        }
    }
    Ok(())
}
