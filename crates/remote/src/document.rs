//! The well-known index document (discovery v0.2.0): `$schema` checked first, then each
//! entry `{name, type, description, url, digest}`. Unknown fields are ignored; an entry of
//! an unknown `type`, an invalid name or a name given twice is skipped with a warning, as
//! the format asks.

use serde::Deserialize;
use serde_json::Value;

use crate::{Digest, IndexUrl, RemoteError, SCHEMA_0_2_0};

/// The most entries an index may hold.
pub const MAX_ENTRIES: usize = 10_000;

/// How an artifact is distributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactKind {
    /// A lone `SKILL.md`.
    SkillMd,
    /// A `.tar.gz` or `.zip` holding the skill folder.
    Archive,
}

/// One skill of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The skill's name (the specification's rules).
    pub name: String,
    /// How it is distributed.
    pub kind: ArtifactKind,
    /// The description the index gives.
    pub description: String,
    /// The artifact's URL, resolved against the index.
    pub url: String,
    /// The digest of the artifact's bytes.
    pub digest: Digest,
}

/// An index read and checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexDocument {
    /// The entries kept, in the index's order.
    pub entries: Vec<IndexEntry>,
    /// The entries skipped, each with why (`skills[3]: ...`).
    pub skipped: Vec<String>,
}

#[derive(Deserialize)]
struct RawEntry {
    name: Value,
    #[serde(rename = "type")]
    kind: Value,
    #[serde(default)]
    description: Value,
    url: Value,
    digest: Value,
}

impl IndexDocument {
    /// Reads the bytes of the index at `url`.
    pub fn parse(url: &IndexUrl, bytes: &[u8]) -> Result<IndexDocument, RemoteError> {
        let invalid = |message: String| RemoteError::Index {
            url: url.to_string(),
            message,
        };
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| invalid(format!("line {} column {}: {e}", e.line(), e.column())))?;
        let Value::Object(top) = value else {
            return Err(invalid("the index is not a JSON object".into()));
        };
        match top.get("$schema") {
            None => {
                return Err(RemoteError::SchemaMissing {
                    url: url.to_string(),
                })
            }
            Some(Value::String(s)) if s == SCHEMA_0_2_0 => {}
            Some(other) => {
                return Err(RemoteError::SchemaUnknown {
                    url: url.to_string(),
                    schema: other
                        .as_str()
                        .map_or_else(|| other.to_string(), str::to_owned),
                })
            }
        }
        let Some(Value::Array(skills)) = top.get("skills") else {
            return Err(invalid("`skills` is missing or not an array".into()));
        };
        if skills.len() > MAX_ENTRIES {
            return Err(invalid(format!(
                "{} entries, over the bound of {MAX_ENTRIES}",
                skills.len()
            )));
        }
        let mut document = IndexDocument::default();
        for (i, raw) in skills.iter().enumerate() {
            match entry(url, raw) {
                Ok(e) if document.entries.iter().any(|d| d.name == e.name) => document
                    .skipped
                    .push(format!("skills[{i}]: the name {:?} is given twice", e.name)),
                Ok(e) => document.entries.push(e),
                Err(why) => document.skipped.push(format!("skills[{i}]: {why}")),
            }
        }
        Ok(document)
    }
}

/// One entry, or why it is skipped.
fn entry(url: &IndexUrl, raw: &Value) -> Result<IndexEntry, String> {
    let raw = RawEntry::deserialize(raw).map_err(|e| e.to_string())?;
    let text = |v: &Value, field: &str| {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("`{field}` is not a string"))
    };
    let name = text(&raw.name, "name")?;
    if let Some(problem) = skills_model::spec_name_problem(&name) {
        return Err(format!("the name {name:?} {problem}"));
    }
    let kind = match text(&raw.kind, "type")?.as_str() {
        "skill-md" => ArtifactKind::SkillMd,
        "archive" => ArtifactKind::Archive,
        other => return Err(format!("{name}: unknown type {other:?}")),
    };
    let digest = text(&raw.digest, "digest")?;
    let digest = Digest::parse(&digest)
        .ok_or_else(|| format!("{name}: the digest {digest:?} is not sha256:<64 lowercase hex>"))?;
    let reference = text(&raw.url, "url")?;
    let url = url
        .resolve(&reference)
        .map_err(|e| format!("{name}: url {reference:?}: {e}"))?;
    Ok(IndexEntry {
        name,
        kind,
        description: raw.description.as_str().unwrap_or_default().to_owned(),
        url,
        digest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> IndexUrl {
        IndexUrl::parse("https://example.com").unwrap()
    }

    #[test]
    fn v0_1_0_and_unknown_schemas_are_refused_by_name() {
        let old = br#"{"skills":[{"name":"a","description":"d","files":["SKILL.md"]}]}"#;
        let e = IndexDocument::parse(&url(), old).unwrap_err();
        assert_eq!(e.code(), "REMOTE_SCHEMA_MISSING");
        assert!(e.to_string().contains("v0.1.0"), "{e}");
        let new = br#"{"$schema":"https://schemas.agentskills.io/discovery/0.3.0/schema.json","skills":[]}"#;
        let e = IndexDocument::parse(&url(), new).unwrap_err();
        assert_eq!(e.code(), "REMOTE_SCHEMA_UNKNOWN");
        assert!(e.to_string().contains("0.3.0"), "{e}");
        let e = IndexDocument::parse(&url(), b"[1,").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn bad_entries_are_skipped_with_their_place() {
        let digest = Digest::of(b"x").to_string();
        let doc = serde_json::json!({
            "$schema": SCHEMA_0_2_0,
            "extra": true,
            "skills": [
                {"name": "good", "type": "skill-md", "description": "G.", "url": "good/SKILL.md", "digest": digest, "more": 1},
                {"name": "Bad_Name", "type": "skill-md", "url": "b", "digest": digest},
                {"name": "odd", "type": "wheel", "url": "o", "digest": digest},
                {"name": "weak", "type": "archive", "url": "w.zip", "digest": "sha256:00"},
                {"name": "good", "type": "archive", "url": "g.zip", "digest": digest},
                {"name": "plain", "type": "archive", "url": "http://example.com/p.zip", "digest": digest},
            ]
        });
        let parsed = IndexDocument::parse(&url(), doc.to_string().as_bytes()).unwrap();
        assert_eq!(parsed.entries.len(), 1);
        assert_eq!(
            parsed.entries[0].url,
            "https://example.com/.well-known/agent-skills/good/SKILL.md"
        );
        let places: Vec<&str> = parsed.skipped.iter().map(|s| &s[..9]).collect();
        assert_eq!(
            places,
            [
                "skills[1]",
                "skills[2]",
                "skills[3]",
                "skills[4]",
                "skills[5]"
            ]
        );
    }
}
