//! MCP's skills extension (`io.modelcontextprotocol/skills`) as served: `skills/list`,
//! `skills/get` and `resources/directory/read` over the skills a session sees, each entry
//! with its frontmatter as a YAML 1.2 core-schema value and a complete manifest (the
//! executor's [`Session::skill_manifest`]). A skill that cannot be served whole is left
//! out, and logged with the reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, GetSkillResult, ListResourcesResult, ListSkillsResult, Resource, Skill,
    SkillFrontmatter, SkillResource, SkillResources, DIRECTORY_MIME_TYPE,
};
use rmcp::ErrorData;
use serde_json::Value;
use skills_executor::{Session, SkillManifest};
use skills_model::SkillRecord;

use crate::uri::{parse_dir_uri, parse_uri, uri};

/// How many skills one page of `skills/list` holds (an entry is never split).
pub(crate) const SKILLS_PAGE: usize = 50;

/// How many children one page of `resources/directory/read` holds.
const DIRECTORY_PAGE: usize = 1000;

/// The freshness hint of `skills/list` and `skills/get`, in milliseconds. A client learns
/// of changes sooner through `notifications/resources/list_changed` (PROTOCOL.md).
pub(crate) const TTL_MS: u64 = 60_000;

/// The cache scope of both: private, since what a session sees depends on who it serves
/// (a skill's `scope`).
const CACHE_SCOPE: CacheScope = CacheScope::Private;

/// `record`'s entry, or why it is not served.
pub(crate) fn entry(session: &Session, record: &SkillRecord) -> Result<Skill, String> {
    let SkillManifest { files, skill_md } =
        session.skill_manifest(record).map_err(|e| e.to_string())?;
    let mut fields = skills_parser::core_frontmatter(&skill_md)
        .map_err(|e| format!("its frontmatter has no YAML 1.2 core-schema value: {e}"))?;
    let name = match fields.remove("name") {
        Some(Value::String(name)) if name == record.name.as_str() => name,
        _ => {
            return Err(format!(
                "its frontmatter's name is not the string {:?}",
                record.name.as_str()
            ))
        }
    };
    let Some(Value::String(description)) = fields.remove("description") else {
        return Err("its frontmatter's description is not a string".into());
    };
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = fields;
    let resources = files
        .iter()
        .map(|f| SkillResource::new(uri(record, &f.path), f.digest.clone(), f.size))
        .collect();
    let skill = Skill::new(
        uri(record, "SKILL.md"),
        frontmatter,
        SkillResources::Files(resources),
    );
    skill.validate().map_err(|e| e.to_string())?;
    Ok(skill)
}

/// `record`'s entry, or `None` with the reason logged.
fn served(session: &Session, record: &SkillRecord) -> Option<Skill> {
    match entry(session, record) {
        Ok(skill) => Some(skill),
        Err(reason) => {
            tracing::warn!(skill = %record.qualified_name(), %reason, "not served over MCP's skills extension");
            None
        }
    }
}

/// One page of `skills/list` from `start` (the cursor: a place among `records`).
pub(crate) fn list(
    session: &Session,
    records: &[Arc<SkillRecord>],
    start: usize,
) -> ListSkillsResult {
    let end = (start + SKILLS_PAGE).min(records.len());
    let skills = records[start.min(end)..end]
        .iter()
        .filter_map(|r| served(session, r))
        .collect();
    let mut result = ListSkillsResult::with_all_items(skills);
    result.next_cursor = (end < records.len()).then(|| end.to_string());
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CACHE_SCOPE);
    result
}

/// A message that may echo a client's input, cut to what an answer carries.
fn cut(message: &str) -> String {
    skills_protocol::cut_text(message, skills_protocol::MESSAGE_MAX).into_owned()
}

/// `-32602` for a URI that names no skill served.
fn no_skill(uri: &str) -> ErrorData {
    ErrorData::invalid_params(cut(&format!("no skill is served at {uri}")), None)
}

/// The served record a `SKILL.md` URI names, if any.
fn record_at<'r>(records: &'r [Arc<SkillRecord>], at: &str) -> Option<&'r Arc<SkillRecord>> {
    let (qualified, path) = parse_uri(at)?;
    if path != "SKILL.md" {
        return None;
    }
    records
        .iter()
        .find(|r| r.qualified_name() == qualified && uri(r, "SKILL.md") == at)
}

/// `skills/get`: the entry of the skill whose `SKILL.md` `at` names, or `-32602`.
pub(crate) fn get(
    session: &Session,
    records: &[Arc<SkillRecord>],
    at: &str,
) -> Result<GetSkillResult, ErrorData> {
    let record = record_at(records, at).ok_or_else(|| no_skill(at))?;
    let skill = served(session, record).ok_or_else(|| no_skill(at))?;
    Ok(GetSkillResult::new(skill)
        .with_ttl_ms(TTL_MS)
        .with_cache_scope(CACHE_SCOPE))
}

/// `resources/directory/read`: the direct children of a served skill's folder (its root
/// `skill://{layer}/{name}`, or a folder beneath), from its manifest; `-32602` for a URI
/// that is no such folder.
pub(crate) fn directory(
    session: &Session,
    records: &[Arc<SkillRecord>],
    at: &str,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, ErrorData> {
    let not_dir =
        || ErrorData::invalid_params(cut(&format!("{at} is not a directory resource")), None);
    let (qualified, folder) = parse_dir_uri(at).ok_or_else(not_dir)?;
    let record = records
        .iter()
        .find(|r| r.qualified_name() == qualified)
        .ok_or_else(not_dir)?;
    let manifest = session.skill_manifest(record).map_err(|_| not_dir())?;
    let children = children(&manifest, &folder).ok_or_else(not_dir)?;
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= children.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    cut(&format!("not a cursor of resources/directory/read: {c:?}")),
                    None,
                )
            })?,
    };
    let end = (start + DIRECTORY_PAGE).min(children.len());
    let resources = children
        .iter()
        .skip(start)
        .take(end - start)
        .map(|(name, child)| {
            let path = if folder.is_empty() {
                name.clone()
            } else {
                format!("{folder}/{name}")
            };
            match child {
                Child::Folder => {
                    let file_uri = uri(record, &path);
                    Resource::new(file_uri, name.clone()).with_mime_type(DIRECTORY_MIME_TYPE)
                }
                Child::File(size) => Resource::new(uri(record, &path), name.clone())
                    .with_mime_type(mime_type(name))
                    .with_size(*size),
            }
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = (end < children.len()).then(|| end.to_string());
    Ok(result)
}

/// A child of a folder.
enum Child {
    Folder,
    File(u64),
}

/// The direct children of `folder` (`""` for the skill's root) among a manifest's files, by
/// name; `None` when `folder` holds no file (it is no folder of the skill).
fn children(manifest: &SkillManifest, folder: &str) -> Option<Vec<(String, Child)>> {
    let mut out: BTreeMap<String, Child> = BTreeMap::new();
    for file in &manifest.files {
        let rest = if folder.is_empty() {
            file.path.as_str()
        } else {
            match file
                .path
                .strip_prefix(folder)
                .and_then(|r| r.strip_prefix('/'))
            {
                Some(rest) => rest,
                None => continue,
            }
        };
        match rest.split_once('/') {
            Some((dir, _)) => {
                out.insert(dir.to_owned(), Child::Folder);
            }
            None => {
                out.insert(rest.to_owned(), Child::File(file.size));
            }
        }
    }
    (!out.is_empty()).then(|| out.into_iter().collect())
}

/// The MIME type of a file by its name's extension (`text/markdown` for `.md`).
pub(crate) fn mime_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js") => "text/javascript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}
