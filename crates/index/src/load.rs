//! Stage two of progressive disclosure: a skill's body, its files and a digest, read on
//! demand from the file at every load.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use skills_model::{Frontmatter, Skill, SkillFile, SkillRecord};
use skills_parser::{ParseInput, ParsedSkill, SkillParser};
use skills_storage::{ReadError, SkillSource};

use crate::config::Config;
use crate::{IndexError, SkillPlace, Snapshot};

/// The folders whose files a loaded skill lists.
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];

/// The largest `agents/openai.yaml` read.
const CODEX_METADATA_LIMIT: u64 = 64 * 1024;

/// With [`SkillIndexBuilder::codex_metadata`](crate::SkillIndexBuilder::codex_metadata),
/// reads the skill folder's `agents/openai.yaml` and turns `allow_implicit_invocation:
/// false` into `disable-model-invocation: true` unless the frontmatter sets that field.
/// A policy file that is there but cannot be read (over the limit, not a regular file,
/// not YAML, a policy of the wrong shape) keeps the skill from the model too: its policy
/// is unknown, and the skill is offered only on proof (issue 38). Its `dependencies.tools`
/// become tool needs ([`skills_model::Requires::tools`]).
/// The one home of this rule: the index's scans and stage-two loads both call it.
pub(crate) fn apply_codex_policy(
    config: &Config,
    source: &dyn SkillSource,
    dir: &str,
    frontmatter: &mut Frontmatter,
) {
    if !config.codex_metadata {
        return;
    }
    let path = if dir == "." {
        "agents/openai.yaml".to_owned()
    } else {
        format!("{dir}/agents/openai.yaml")
    };
    let allowed = match source.read(&path, CODEX_METADATA_LIMIT) {
        Ok(bytes) => match skills_parser::read_codex_policy(&bytes) {
            Ok(policy) => {
                if !policy.tools.is_empty() {
                    frontmatter
                        .requires_elsewhere
                        .get_or_insert_with(Default::default)
                        .merge(&skills_model::Requires {
                            tools: policy.tools,
                            ..Default::default()
                        });
                }
                policy.allow_implicit_invocation != Some(false)
            }
            Err(error) => {
                tracing::warn!(path, %error, "agents/openai.yaml cannot be read as a policy; the skill is kept from the model");
                false
            }
        },
        Err(ReadError::NotFound) => true,
        Err(error) => {
            tracing::warn!(path, %error, "cannot read agents/openai.yaml; the skill is kept from the model");
            false
        }
    };
    if !allowed && frontmatter.disable_model_invocation.is_none() {
        frontmatter.disable_model_invocation = Some(true);
    }
}

pub(crate) fn load(
    snapshot: &Snapshot,
    name: &str,
    config: &Config,
) -> Result<Arc<Skill>, IndexError> {
    let Some(i) = snapshot.index_of(name) else {
        let choices = snapshot.contested_choices(name, &|_| true);
        if !choices.is_empty() {
            return Err(IndexError::Contested {
                name: name.into(),
                choices,
            });
        }
        // A qualified name is compared with qualified names, a bare one with bare names.
        let suggestion = if name.contains(':') {
            let qualified: Vec<String> = snapshot
                .records()
                .iter()
                .map(|r| r.qualified_name())
                .collect();
            skills_model::closest_name(name, qualified.iter().map(String::as_str))
        } else {
            skills_model::closest_name(name, snapshot.skills().map(|r| r.name.as_str()))
        };
        return Err(IndexError::NotFound {
            name: name.into(),
            suggestion,
        });
    };
    load_at(snapshot, i, name, config)
}

/// Loads the skill of `record` itself (its `SKILL.md` through its layer and plugin), not
/// whichever holds its name: for a reader to whom another skill of that name is hidden.
/// Not found, with no suggestion, when the snapshot no longer holds it.
pub(crate) fn load_record(
    snapshot: &Snapshot,
    record: &SkillRecord,
    config: &Config,
) -> Result<Arc<Skill>, IndexError> {
    let name = record.qualified_name();
    match snapshot.place_of_record(record) {
        Some(i) => load_at(snapshot, i, &name, config),
        None => Err(IndexError::NotFound {
            name,
            suggestion: None,
        }),
    }
}

/// Loads the record at `i` of `snapshot`, asked for as `name`.
fn load_at(
    snapshot: &Snapshot,
    i: usize,
    name: &str,
    config: &Config,
) -> Result<Arc<Skill>, IndexError> {
    // Read now, every time: a load answers for the file as it is (its scope, its rules,
    // its body), and a copy kept for the snapshot's generation served the first reader's
    // version to every later one, whatever the file had become.
    let limit = config.file_limit;
    let record = Arc::clone(&snapshot.records()[i]);
    let err = |message: String| IndexError::Load {
        name: name.into(),
        message,
    };
    let dir = record.dir().to_path_buf();
    // Every root is read through its source; a folder's is an `FsSource`.
    let place = snapshot
        .place_of(&record)
        .ok_or_else(|| err("the skill's root is no longer indexed".into()))?;
    let bytes = place
        .source
        .read(&place.file(skills_storage::SKILL_FILE), limit)
        .map_err(|e| err(e.to_string()))?;
    let dir_name = crate::dir_name(&dir);
    // The file may have changed since the snapshot was built: take the body from this read.
    let mut parsed = SkillParser::default().parse(&ParseInput::new(&bytes, &dir_name));
    apply_codex_policy(
        config,
        place.source.as_ref(),
        &place.dir,
        &mut parsed.frontmatter,
    );
    if let Some(why) = not_loadable(&parsed, &record, config) {
        return Err(err(why.into()));
    }
    let body = parsed.body(&bytes).to_owned();
    let digest = skill_digest(&bytes);
    // One version: the record (and so the rules a session enforces) comes from the same
    // bytes as the body, never from the snapshot's older reading of the file.
    let record = {
        let (description, frontmatter) =
            skills_model::SkillRecord::split_frontmatter(parsed.frontmatter);
        Arc::new(skills_model::SkillRecord {
            description,
            frontmatter,
            body_offset: parsed.body_offset,
            diagnostics: parsed.diagnostics.into(),
            ..(*record).clone()
        })
    };
    let files = resource_files(&place);
    Ok(Arc::new(Skill {
        record,
        body,
        files,
        digest,
    }))
}

/// Why a fresh reading of a record's file cannot be loaded in its place, if it cannot.
fn not_loadable(
    parsed: &ParsedSkill,
    record: &SkillRecord,
    config: &Config,
) -> Option<&'static str> {
    // A file that broke after its last good version was indexed has no instructions to
    // serve: fail loudly rather than hand the model an empty body.
    if parsed.lenient_name().as_ref() != Some(&record.name) {
        return Some(
            "SKILL.md no longer parses as this skill (see its diagnostics); the last good metadata stays indexed, but its instructions cannot be loaded until the file is fixed",
        );
    }
    // A strict index loads what it would index: a version failing the specification is
    // not loaded in place of the last good one it keeps. But for the rule a load cannot
    // judge: whether the name matches the folder as the index reached it (a link's own
    // name; the load reads the resolved folder), which the index judged, and which the
    // name check above holds to what it indexed.
    let failing = parsed
        .diagnostics
        .iter()
        .any(|d| d.is_error() && d.rule != skills_model::Rule::NameMatchesDirectory);
    (config.strict && failing).then_some(
        "SKILL.md no longer passes the specification's rules (see its diagnostics); the last good metadata stays indexed, but it cannot be loaded until the file is fixed",
    )
}

/// The files of a skill's resource folders, by path: one listing rule for every source
/// (see `skills_storage::SkillSource::files`), cut to the resource folders.
fn resource_files(place: &SkillPlace) -> Vec<SkillFile> {
    let mut files: Vec<SkillFile> = place
        .source
        .files(&place.dir)
        .into_iter()
        .filter(|(p, _)| {
            p.split_once('/')
                .is_some_and(|(top, _)| RESOURCE_DIRS.contains(&top))
        })
        .map(|(path, size)| SkillFile { path, size })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `sha256:<hex>` of a `SKILL.md`'s bytes: the digest a loaded [`Skill`](skills_model::Skill)
/// carries, and the one a session compares a file on disk with.
pub fn skill_digest(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}
