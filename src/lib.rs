//! agent-skills: Agent Skills (`SKILL.md` packages) for long-running agent processes.
//!
//! This facade re-exports the workspace's public API.
pub use skills_model::*;
pub use skills_parser::{ParseInput, ParsedSkill, SkillParser, SkillParserBuilder};
