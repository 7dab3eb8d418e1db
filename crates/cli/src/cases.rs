//! The trigger cases `skillctl eval triggers` runs: read from the user's case file (YAML,
//! or JSON lines) and from each visible skill's own `test-scenarios`.
//!
//! A case is `{request, expect, tags}`: the user's request, the skill expected to be
//! chosen for it (its name, or `null` for "no skill"), optional tags; `name` may label it.
//! `expect` must be given (a case that forgot it would silently expect nothing); any other
//! key is refused, so a misspelt one (`expected`) is not lost.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;
use skills_model::{RawValue, SkillRecord};

/// Most bytes of a case file.
const MAX_CASES_BYTES: u64 = 16 << 20;

/// One trigger case.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// Where it comes from: `FILE:LINE`, or `SKILL: test-scenarios[I].cases[J]`.
    pub(crate) source: String,
    /// Its label, if it has one.
    pub(crate) name: Option<String>,
    /// The user's request.
    pub(crate) request: String,
    /// The skill expected (`None`: no skill).
    pub(crate) expect: Option<String>,
    /// Its tags.
    pub(crate) tags: Vec<String>,
}

/// The cases of the file at `path`: JSON lines when it is named `.jsonl`, `.ndjson` or
/// `.json` or its first character is `{`; YAML otherwise (a list, or `cases:` holding one).
pub(crate) fn read_file(path: &Path) -> Result<Vec<Case>> {
    use std::io::Read as _;
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {shown}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_CASES_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {shown}"))?;
    if bytes.len() as u64 > MAX_CASES_BYTES {
        bail!("{shown} is over {MAX_CASES_BYTES} bytes: split it");
    }
    let text = String::from_utf8(bytes).with_context(|| format!("{shown} is not UTF-8"))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let json = matches!(ext, "jsonl" | "ndjson" | "json")
        || (!matches!(ext, "yaml" | "yml") && text.trim_start().starts_with('{'));
    if json {
        json_lines(&text, &shown)
    } else {
        yaml(&text, &shown)
    }
}

fn json_lines(text: &str, shown: &str) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let source = format!("{shown}:{}", i + 1);
        let value: Value =
            serde_json::from_str(line).with_context(|| format!("{source}: not a JSON object"))?;
        let Value::Object(map) = value else {
            bail!("{source}: a case is a JSON object {{\"request\", \"expect\", \"tags\"}}");
        };
        let mut fields = Fields::default();
        for (key, value) in map {
            let value = match value {
                Value::Null => Field::Null,
                Value::String(s) => Field::Text(s),
                Value::Array(items) => Field::List(
                    items
                        .into_iter()
                        .map(|v| match v {
                            Value::String(s) => Some(s),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => Field::Other,
            };
            fields.set(&source, &key, value)?;
        }
        cases.push(fields.case(source)?);
    }
    Ok(cases)
}

fn yaml(text: &str, shown: &str) -> Result<Vec<Case>> {
    let items = skills_parser::read_yaml_items(text, "cases")
        .map_err(|e| anyhow::anyhow!("{shown}:{}:{}: {}", e.line, e.column, e.message))?;
    let mut cases = Vec::new();
    for item in items {
        let source = format!("{shown}:{}", item.line);
        let RawValue::Map(entries) = item.value else {
            bail!("{source}: a case is a mapping of request, expect and tags");
        };
        let mut fields = Fields::default();
        for (key, value) in entries {
            let value = match value {
                RawValue::Null => Field::Null,
                RawValue::Scalar(s) => Field::Text(s),
                RawValue::Seq(items) => Field::List(
                    items
                        .into_iter()
                        .map(|v| match v {
                            RawValue::Scalar(s) => Some(s),
                            _ => None,
                        })
                        .collect(),
                ),
                RawValue::Map(_) => Field::Other,
            };
            fields.set(&source, &key, value)?;
        }
        cases.push(fields.case(source)?);
    }
    Ok(cases)
}

/// A case's value as either format gives it.
enum Field {
    Null,
    Text(String),
    /// A list: `None` for an item that is not a string.
    List(Vec<Option<String>>),
    Other,
}

/// A case's fields as they are read.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    request: Option<String>,
    expect: Option<Option<String>>,
    tags: Vec<String>,
}

impl Fields {
    fn set(&mut self, source: &str, key: &str, value: Field) -> Result<()> {
        match (key, value) {
            ("request", Field::Text(t)) => self.request = Some(t),
            ("name", Field::Text(t)) => self.name = Some(t),
            ("expect", Field::Text(t)) => self.expect = Some(Some(t)),
            ("expect", Field::Null) => self.expect = Some(None),
            ("tags", Field::Null) => {}
            ("tags", Field::Text(t)) => self.tags = vec![t],
            ("tags", Field::List(items)) => {
                self.tags = items
                    .into_iter()
                    .collect::<Option<Vec<String>>>()
                    .with_context(|| format!("{source}: `tags` is a list of strings"))?;
            }
            ("request" | "name", _) => bail!("{source}: `{key}` is a string"),
            ("expect", _) => bail!("{source}: `expect` is a skill's name, or null for no skill"),
            ("tags", _) => bail!("{source}: `tags` is a list of strings"),
            (other, _) => {
                bail!("{source}: unknown key `{other}`: a case has request, expect, tags and name")
            }
        }
        Ok(())
    }

    fn case(self, source: String) -> Result<Case> {
        let Some(request) = self.request.filter(|r| !r.trim().is_empty()) else {
            bail!("{source}: a case needs a `request`, the user's words");
        };
        let Some(expect) = self.expect else {
            bail!("{source}: a case needs `expect`: the skill's name, or null when no skill should be chosen");
        };
        Ok(Case {
            source,
            name: self.name,
            request,
            expect,
            tags: self.tags,
        })
    }
}

/// The cases of `skills`' own `test-scenarios`: each case's `input` (and a scenario's own
/// `input`, the flat form) is a request that should choose its skill.
pub(crate) fn from_scenarios(skills: &[std::sync::Arc<SkillRecord>]) -> Vec<Case> {
    let mut cases = Vec::new();
    for r in skills {
        let name = r.name.as_str();
        for (i, scenario) in r.frontmatter.test_scenarios.iter().enumerate() {
            let mut push = |source: String, label: Option<&String>, input: &String| {
                if input.trim().is_empty() {
                    return;
                }
                cases.push(Case {
                    source,
                    name: label.or(scenario.name.as_ref()).cloned(),
                    request: input.clone(),
                    expect: Some(name.to_owned()),
                    tags: vec!["test-scenarios".to_owned()],
                });
            };
            if let Some(input) = &scenario.input {
                push(format!("{name}: test-scenarios[{i}]"), None, input);
            }
            for (j, case) in scenario.cases.iter().enumerate() {
                if let Some(input) = &case.input {
                    let source = format!("{name}: test-scenarios[{i}].cases[{j}]");
                    push(source, case.name.as_ref(), input);
                }
            }
        }
    }
    cases
}
