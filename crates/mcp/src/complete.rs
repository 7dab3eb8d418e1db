//! `completion/complete`: values for a prompt's argument and for the variables of the
//! `skill://{layer}/{name}/{+path}` template, from what the session may see. A prompt or a
//! template this server does not serve, or a variable it does not have, is `-32602`.

use std::sync::Arc;

use rmcp::model::{ArgumentInfo, CompletionContext, CompletionInfo};
use rmcp::ErrorData;
use skills_executor::Session;
use skills_model::SkillRecord;

use crate::uri::layer_segment;

/// The one resource template served.
pub(crate) const TEMPLATE: &str = "skill://{layer}/{name}/{+path}";

/// The values that start with what was typed, sorted, at most the 100 a result may hold
/// (`total` and `hasMore` say how many there are).
fn completion(mut values: Vec<String>, typed: &str) -> CompletionInfo {
    values.retain(|v| v.starts_with(typed));
    values.sort();
    values.dedup();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let more = total > values.len();
    CompletionInfo::with_pagination(values, u32::try_from(total).ok(), more).unwrap_or_default()
}

fn invalid(message: String) -> ErrorData {
    ErrorData::invalid_params(
        skills_protocol::cut_text(&message, skills_protocol::MESSAGE_MAX).into_owned(),
        None,
    )
}

/// A prompt's argument: no values (a skill's prompt has one argument, `arguments`, free
/// text); a prompt not listed is `-32602`.
pub(crate) fn prompt(
    listed: &[String],
    name: &str,
    argument: &ArgumentInfo,
) -> Result<CompletionInfo, ErrorData> {
    if !listed.iter().any(|p| p == name) {
        return Err(invalid(format!("no prompt named {name:?}")));
    }
    // Its one argument, `arguments`, is free text; any other has no values either.
    Ok(completion(Vec::new(), &argument.value))
}

/// A variable of the template: `layer` (the layers of the skills the session sees), `name`
/// (their names, in the layer already given, if any) or `path` (the files a read serves
/// of the skill the layer and name already given name).
pub(crate) fn template(
    session: &Session,
    visible: &[(Arc<SkillRecord>, bool)],
    uri: &str,
    argument: &ArgumentInfo,
    context: Option<&CompletionContext>,
) -> Result<CompletionInfo, ErrorData> {
    if uri != TEMPLATE {
        return Err(invalid(format!("no resource template {uri:?}")));
    }
    let given = |key: &str| {
        context
            .and_then(|c| c.arguments.as_ref())
            .and_then(|a| a.get(key))
            .cloned()
    };
    let in_layer = |r: &SkillRecord| given("layer").is_none_or(|l| layer_segment(r) == l);
    let values = match argument.name.as_str() {
        "layer" => visible.iter().map(|(r, _)| layer_segment(r)).collect(),
        "name" => visible
            .iter()
            .filter(|(r, _)| in_layer(r))
            .map(|(r, _)| r.name.to_string())
            .collect(),
        "path" => {
            let name = given("name");
            let record = visible
                .iter()
                .find(|(r, _)| in_layer(r) && name.as_deref() == Some(r.name.as_str()));
            match record {
                Some((record, _)) => paths(session, record),
                None => Vec::new(),
            }
        }
        other => {
            return Err(invalid(format!(
                "the template {TEMPLATE} has no variable {other:?}"
            )))
        }
    };
    Ok(completion(values, &argument.value))
}

/// The paths a read of `record`'s skill serves: `SKILL.md` and its servable files.
fn paths(session: &Session, record: &SkillRecord) -> Vec<String> {
    let mut out = vec!["SKILL.md".to_owned()];
    if let Ok(skill) = session.executor().index().load_record(record) {
        out.extend(
            session
                .servable_files(&skill)
                .iter()
                .map(|f| f.path.clone()),
        );
    }
    out
}
