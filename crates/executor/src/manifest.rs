//! A skill's complete manifest, as MCP's skills extension serves it: every file of the
//! skill once (by the one listing rule), each with the `sha256:` digest and size of the
//! bytes a read of it returns, read through the very path those reads take. A skill whose
//! files cannot all be served (a script, unless served whole; one over the read limit or
//! a link out of the folder or into `scripts/`) has no manifest, with the reason. What the
//! listing rule leaves out (dot-files, dot-folders, `node_modules`) is no file of it.

use base64::Engine as _;

use crate::files::{relative_parts, Within};
use crate::state::SessionState;
use crate::{Encoding, ScriptServing};
use skills_model::SkillRecord;

/// The most files a served skill may have (the extension's limit, `SKILL.md` included).
pub const MANIFEST_MAX_FILES: usize = 512;
/// The most bytes a served skill's files may hold together (the extension's 16 MiB).
pub const MANIFEST_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// One file of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    /// The path relative to the skill folder (`SKILL.md`, `references/guide.md`).
    pub path: String,
    /// `sha256:<64 lowercase hex>` of the bytes a read returns.
    pub digest: String,
    /// How many bytes a read returns.
    pub size: u64,
}

/// A skill's complete manifest, and the bytes of its `SKILL.md` that the first entry
/// describes (what the served frontmatter is read from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillManifest {
    /// Every file, `SKILL.md` first, then by path.
    pub files: Vec<ManifestFile>,
    /// The bytes of `SKILL.md` as read.
    pub skill_md: Vec<u8>,
}

/// Why a skill has no manifest (it is then not served over the extension).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ManifestRefusal(pub String);

impl SessionState {
    /// The work of [`Session::skill_manifest`](crate::Session::skill_manifest).
    pub(crate) fn skill_manifest(
        &self,
        record: &SkillRecord,
    ) -> Result<SkillManifest, ManifestRefusal> {
        let refuse = |reason: String| Err(ManifestRefusal(reason));
        let snapshot = self.exec.index.snapshot();
        let Some(place) = snapshot.place_of(record) else {
            return refuse("the skill has left the index".into());
        };
        let listed = place.source.files(&place.dir);
        let serving = self.script_serving(record);
        check_listing(&listed, serving)?;
        let judged = self
            .load_resolved(record)
            .map_err(|e| ManifestRefusal(e.to_string()))?;
        let scripts = crate::resolve::script_ids(record.dir(), &judged.files);
        let within = Within {
            folder: None,
            scripts: &scripts,
            serving,
        };
        let mut paths: Vec<&str> = listed.iter().map(|(p, _)| p.as_str()).collect();
        paths.sort_by_key(|p| (*p != "SKILL.md", *p));
        let mut files = Vec::with_capacity(paths.len());
        let mut skill_md = Vec::new();
        let mut total = 0u64;
        for path in paths {
            let rel = relative_parts(path).map_err(ManifestRefusal)?;
            let served = self
                .serve(record, &rel.parts(), path, within)
                .map_err(|e| ManifestRefusal(format!("{path} cannot be served: {e}")))?;
            let bytes = match served.content.encoding {
                Encoding::Text => served.content.content.into_bytes(),
                Encoding::Base64 => base64::engine::general_purpose::STANDARD
                    .decode(served.content.content)
                    .map_err(|e| ManifestRefusal(format!("{path}: {e}")))?,
            };
            total += bytes.len() as u64;
            if total > MANIFEST_MAX_BYTES {
                return refuse(format!(
                    "its files hold more than {MANIFEST_MAX_BYTES} bytes, the extension's limit"
                ));
            }
            files.push(ManifestFile {
                path: path.to_owned(),
                digest: skills_index::skill_digest(&bytes),
                size: bytes.len() as u64,
            });
            if path == "SKILL.md" {
                skill_md = bytes;
            }
        }
        Ok(SkillManifest { files, skill_md })
    }
}

/// Whether a skill's listed files may make a manifest at all: `SKILL.md` among them, within
/// the extension's limits, and each one a read serves.
fn check_listing(listed: &[(String, u64)], serving: ScriptServing) -> Result<(), ManifestRefusal> {
    let refuse = |reason: String| Err(ManifestRefusal(reason));
    if !listed.iter().any(|(p, _)| p == "SKILL.md") {
        return refuse("its SKILL.md is not a file the listing names".into());
    }
    if listed.len() > MANIFEST_MAX_FILES {
        return refuse(format!(
            "it has {} files, over the extension's limit of {MANIFEST_MAX_FILES}",
            listed.len()
        ));
    }
    let listed_bytes: u64 = listed.iter().map(|(_, size)| size).sum();
    if listed_bytes > MANIFEST_MAX_BYTES {
        return refuse(format!(
            "its files hold {listed_bytes} bytes, over the extension's limit of {MANIFEST_MAX_BYTES}"
        ));
    }
    for (path, _) in listed {
        let parts: Vec<&str> = path.split('/').collect();
        if crate::files::served_file(&parts) {
            continue;
        }
        if parts[0] == "scripts" && skills_storage::listed_path(&parts) {
            if serving == ScriptServing::TrustedLayers {
                continue;
            }
            return refuse(format!(
                "it has scripts ({path}), which are served only with --serve-scripts and from a layer trusted to run them"
            ));
        }
        return refuse(format!(
            "it holds {path}, which resources/read does not serve"
        ));
    }
    Ok(())
}
