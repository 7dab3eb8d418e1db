//! The runtime tools a model calls (`skills_list`, `skills_load`, `skills_unload`,
//! `skills_read`, `skills_run_script`, and the single-skill `skill` tool): their JSON
//! Schemas for any LLM API, and the dispatch of a call's JSON input.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use skills_model::SkillRecord;

use crate::{ExecError, LoadMode, Session};

/// A tool as LLM APIs describe one: a name (letters, digits, underscores), a description
/// and a JSON Schema for its input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
}

fn def(name: &str, description: &str, input_schema: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: description.into(),
        input_schema,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadInput {
    #[serde(default)]
    skills: Vec<String>,
    #[serde(default)]
    skill: Option<String>,
    #[serde(default)]
    mode: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UnloadInput {
    #[serde(default)]
    skills: Vec<String>,
    #[serde(default)]
    all: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    #[serde(default)]
    skill: Option<String>,
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunInput {
    #[serde(default)]
    skill: Option<String>,
    path: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    workdir: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillInput {
    name: String,
}

fn parse<T: for<'de> Deserialize<'de>>(tool: &str, input: Value) -> Result<T, ExecError> {
    let input = if input.is_null() { json!({}) } else { input };
    serde_json::from_value(input).map_err(|e| ExecError::BadInput(format!("{tool}: {e}")))
}

impl Session {
    /// The runtime tools' definitions, for the host to pass to its model.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        let visible = self.visible();
        let records: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
        vec![
            def(
                "skills_list",
                "List the skills available in this session, with their descriptions and whether each is active.",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
            def(
                "skills_load",
                "Activate skills by name before following their instructions. mode \"replace\" (default) replaces the active skills; \"add\" pushes onto them.",
                json!({
                    "type": "object",
                    "properties": {
                        "skills": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Skill names (bare, or qualified as layer:name)."},
                        "mode": {"type": "string", "enum": ["replace", "add"], "default": "replace"}
                    },
                    "required": ["skills"],
                    "additionalProperties": false
                }),
            ),
            def(
                "skills_unload",
                "Deactivate skills. Named skills must be the most recently loaded ones; or pass all: true.",
                json!({
                    "type": "object",
                    "properties": {
                        "skills": {"type": "array", "items": {"type": "string"}},
                        "all": {"type": "boolean", "default": false}
                    },
                    "additionalProperties": false
                }),
            ),
            def(
                "skills_read",
                "Read a file of an active skill (a reference or an asset), by a path relative to the skill folder.",
                json!({
                    "type": "object",
                    "properties": {
                        "skill": {"type": "string", "description": "Default: the most recently loaded skill."},
                        "path": {"type": "string", "description": "Relative path, such as references/guide.md."}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            ),
            def(
                "skills_run_script",
                "Run a script from an active skill's scripts/ folder. Arguments are passed as they are, with no shell.",
                json!({
                    "type": "object",
                    "properties": {
                        "skill": {"type": "string"},
                        "path": {"type": "string", "description": "Relative path under scripts/, such as scripts/extract.py."},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        "workdir": {"type": "string", "description": "Working folder, relative to the skill folder."},
                        "timeout_ms": {"type": "integer", "minimum": 1}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            ),
            def(
                "skill",
                &crate::skill_tool_description(&records, false, Some(16_000)),
                json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "The skill to load."}},
                    "required": ["name"],
                    "additionalProperties": false
                }),
            ),
        ]
    }

    /// Calls a runtime tool with its JSON input.
    pub fn call_tool(&self, tool: &str, input: Value) -> Result<Value, ExecError> {
        match tool {
            "skills_list" => {
                let active: Vec<String> = self
                    .active()
                    .iter()
                    .map(|s| s.record.name.to_string())
                    .collect();
                let skills: Vec<Value> = self
                    .visible()
                    .iter()
                    .map(|r| {
                        json!({
                            "name": r.name,
                            "qualified_name": r.qualified_name(),
                            "description": r.description,
                            "layer": r.layer,
                            "active": active.iter().any(|a| a == r.name.as_str()),
                        })
                    })
                    .collect();
                Ok(json!({"skills": skills}))
            }
            "skills_load" => {
                let input: LoadInput = parse(tool, input)?;
                let mut names = input.skills;
                names.extend(input.skill);
                let mode = match input.mode.as_deref() {
                    None | Some("replace") => LoadMode::Replace,
                    Some("add") => LoadMode::Add,
                    Some(other) => {
                        return Err(ExecError::BadInput(format!(
                            "mode must be \"replace\" or \"add\", not {other:?}"
                        )))
                    }
                };
                self.load(&names, mode)
            }
            "skills_unload" => {
                let input: UnloadInput = parse(tool, input)?;
                match (input.all, input.skills.is_empty()) {
                    (true, _) => self.unload_all(),
                    (false, false) => self.unload(&input.skills),
                    (false, true) => Err(ExecError::BadInput(
                        "name skills to unload, or pass all: true".into(),
                    )),
                }
            }
            "skills_read" => {
                let input: ReadInput = parse(tool, input)?;
                self.read(input.skill.as_deref(), &input.path)
            }
            "skills_run_script" => {
                let input: RunInput = parse(tool, input)?;
                let env: Vec<(String, String)> = input.env.into_iter().collect();
                self.run_script(
                    input.skill.as_deref(),
                    &input.path,
                    &input.args,
                    &env,
                    input.workdir.as_deref(),
                    input.timeout_ms.map(Duration::from_millis),
                )
            }
            "skill" => {
                let input: SkillInput = parse(tool, input)?;
                self.load(std::slice::from_ref(&input.name), LoadMode::Add)?;
                let active = self.active();
                let skill = active
                    .iter()
                    .rev()
                    .find(|s| {
                        s.record.name.as_str() == input.name
                            || s.record.qualified_name() == input.name
                    })
                    .ok_or_else(|| {
                        ExecError::NotActive(format!("{:?} did not stay active", input.name))
                    })?;
                let allowed: Vec<String> = skill
                    .record
                    .frontmatter
                    .allowed_tools
                    .iter()
                    .flat_map(|r| r.rules().iter().map(ToString::to_string))
                    .collect();
                Ok(json!({
                    "name": skill.record.name,
                    "content": skill.body,
                    "base_path": skill.record.dir(),
                    "allowed_tools": allowed,
                }))
            }
            other => Err(ExecError::UnknownTool(other.to_owned())),
        }
    }
}
