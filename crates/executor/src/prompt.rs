//! Prompt rendering: `<available_skills>` in the agentskills.io form, the skill-tool
//! description, `<active_skills>`, and the per-turn instructions, under a character budget.
//!
//! (Stub: the interface is fixed; the implementation is being written.)

use skills_model::{Skill, SkillRecord};

/// `<available_skills>` exactly as the reference tool (`agentskills to-prompt`) prints it
/// for the same skills in the same order.
pub fn available_skills(skills: &[&SkillRecord]) -> String {
    let _ = skills;
    String::new()
}

/// The description of the single-skill `skill` tool: what it does, then the available
/// skills (with `<location>` only when `include_location`), within `budget` characters.
pub fn skill_tool_description(skills: &[&SkillRecord], include_location: bool, budget: Option<usize>) -> String {
    let _ = (skills, include_location, budget);
    String::new()
}

/// `<active_skills>` with each active skill's body, in stack order.
pub fn active_skills(active: &[&Skill]) -> String {
    let _ = active;
    String::new()
}

/// The top-level instructions for the next model call: the base block, then
/// `<available_skills>` (within `budget` characters when given), then `<active_skills>`.
pub fn instructions(available: &[&SkillRecord], active: &[&Skill], budget: Option<usize>) -> String {
    let _ = (available, active, budget);
    String::new()
}
