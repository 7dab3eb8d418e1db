//! The types of agent-skills, shared by every other crate: skill names, layers, frontmatter,
//! tool rules, the records the index holds, and diagnostics. This crate does no I/O.
//!
//! The central type is [`Frontmatter`], what a `SKILL.md` says about its skill, read
//! leniently; the strict verdict lives beside it as a list of [`Diagnostic`]s. Tool rules
//! ([`ToolRules`]) come from `allowed-tools` and `disallowed-tools` and decide tool calls:
//!
//! ```
//! use skills_model::{Frontmatter, ToolRules};
//!
//! let (rules, errors) = ToolRules::parse_lenient("Read, Bash(git status:*)");
//! assert!(errors.is_empty());
//! let mut fm = Frontmatter::default();
//! fm.allowed_tools = Some(rules);
//! let allowed = fm.allowed_tools.as_ref().unwrap();
//! assert!(allowed.any_matches("Bash", Some("git status")));
//! assert!(!allowed.any_matches("Bash", Some("rm -rf /")));
//! ```

mod diagnostic;
mod error;
mod frontmatter;
mod layer;
mod name;
mod origin;
mod rel_path;
mod requires;
mod skill;
mod text;
mod tools;

pub use diagnostic::{Diagnostic, Rule, Severity};
pub use error::ModelError;
pub use frontmatter::{
    ClaudeCodeFields, ClaudeHook, Composition, ContextMode, Frontmatter, HookEvent, Hooks,
    Metadata, RawValue, ScenarioCase, Scope, Security, SkillDependency, TestScenario, ToolBinding,
    ToolDependency, EXTENSION_FIELDS, SPEC_FIELDS,
};
pub use layer::Layer;
pub use name::{
    closest_name, is_default_ignorable, spec_name_problem, SkillName, MAX_NAME_LEN, SUGGESTED_MAX,
};
pub use origin::{RemoteKind, RemoteOrigin, RemoteOriginError};
pub use rel_path::{names_only, RelPath, RelPathError};
pub use requires::{Capability, Os, Requires, Unmet};
pub use skill::{Skill, SkillFile, SkillRecord};
pub use text::{cut_text, MESSAGE_MAX};
pub use tools::{Specifier, ToolRule, ToolRules, CLAUDE_SKILL_DIR_VAR, SKILL_DIR_VAR};
