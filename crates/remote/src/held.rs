//! What a URL root holds: each skill verified ([`Held`]: its entry, its folder in the cache
//! and every file's digest) or refused with why, and how a new index becomes a new
//! [`State`]: a skill whose digest is unchanged is kept as it is; a new digest is fetched
//! (or taken from the cache), verified, unpacked and kept; one that fails keeps its last
//! good version, as a broken local edit does, or is refused with the error.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::disk::Cache;
use crate::http::{Fetched, Fetcher};
use crate::unpack::{unpack, Bounds, Files};
use crate::{
    ArtifactKind, Digest, IndexDocument, IndexEntry, IndexUrl, Pins, RemoteError,
    MAX_ARTIFACT_BYTES, SCHEMA_0_2_0,
};

/// A verified skill.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    /// Its index entry.
    pub(crate) entry: IndexEntry,
    /// Its folder in the cache.
    pub(crate) folder: PathBuf,
    /// Every file (relative path) with its size and digest, as verified.
    pub(crate) files: BTreeMap<String, (u64, Digest)>,
}

/// The skills of a root.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    /// Verified skills, by name.
    pub(crate) held: BTreeMap<String, Held>,
    /// Skills with no verified version, by name, with why.
    pub(crate) refused: BTreeMap<String, String>,
}

/// What obtaining a skill needs.
pub(crate) struct Ctx<'a> {
    pub(crate) url: &'a IndexUrl,
    pub(crate) cache: &'a Cache,
    /// `None` when the origin cannot be reached: the cache alone serves.
    pub(crate) fetcher: Option<&'a Fetcher>,
    pub(crate) pins: Option<&'a Pins>,
    pub(crate) bounds: Bounds,
}

impl State {
    /// The state `document` leads to from `self`.
    pub(crate) fn next(&self, document: &IndexDocument, ctx: &Ctx<'_>) -> State {
        for why in &document.skipped {
            tracing::warn!(index = %ctx.url, "skipped an index entry: {why}");
        }
        // Each new digest is verified (read, hashed, unpacked) in parallel: a start from
        // the cache verifies every skill.
        let obtained: Vec<(&IndexEntry, Option<Result<Held, RemoteError>>)> = document
            .entries
            .par_iter()
            .map(|entry| {
                let unchanged = self
                    .held
                    .get(&entry.name)
                    .is_some_and(|o| o.entry == *entry);
                (entry, (!unchanged).then(|| obtain(entry, ctx)))
            })
            .collect();
        let mut next = State::default();
        for (entry, got) in obtained {
            let old = self.held.get(&entry.name);
            match got {
                None => {
                    if let Some(old) = old {
                        next.held.insert(entry.name.clone(), old.clone());
                    }
                }
                Some(Ok(held)) => {
                    next.held.insert(entry.name.clone(), held);
                }
                Some(Err(e)) => {
                    tracing::warn!(index = %ctx.url, skill = %entry.name, code = e.code(), "{e}");
                    match old {
                        Some(old) => {
                            tracing::warn!(skill = %entry.name, "keeps its last good version {}", old.entry.digest);
                            next.held.insert(entry.name.clone(), old.clone());
                        }
                        None => {
                            next.refused.insert(entry.name.clone(), e.to_string());
                        }
                    }
                }
            }
        }
        next
    }

    /// Whether `other` holds the same skills at the same digests, and refuses the same.
    pub(crate) fn same(&self, other: &State) -> bool {
        self.refused == other.refused
            && self.held.len() == other.held.len()
            && self
                .held
                .iter()
                .zip(&other.held)
                .all(|((a, x), (b, y))| a == b && x.entry == y.entry)
    }

    /// The verified state as an index (v0.2.0, absolute URLs): what the cache keeps, so a
    /// start from the cache serves exactly the versions last verified.
    pub(crate) fn as_index(&self) -> Vec<u8> {
        let skills: Vec<serde_json::Value> = self
            .held
            .values()
            .map(|h| {
                serde_json::json!({
                    "name": h.entry.name,
                    "type": match h.entry.kind {
                        ArtifactKind::SkillMd => "skill-md",
                        ArtifactKind::Archive => "archive",
                    },
                    "description": h.entry.description,
                    "url": h.entry.url,
                    "digest": h.entry.digest.to_string(),
                })
            })
            .collect();
        let document = serde_json::json!({"$schema": SCHEMA_0_2_0, "skills": skills});
        serde_json::to_vec_pretty(&document).unwrap_or_default()
    }
}

/// A skill of the index, verified: from the cache when it holds the digest, else fetched.
fn obtain(entry: &IndexEntry, ctx: &Ctx<'_>) -> Result<Held, RemoteError> {
    if let Some(pins) = ctx.pins {
        pins.admit(ctx.url, &entry.name, &entry.digest)?;
    }
    let bytes = match ctx.cache.artifact(&entry.digest) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => fetch(entry, ctx)?,
        Err(e) => {
            // An altered cache file is refused; the origin, when it answers, replaces it.
            tracing::warn!(code = e.code(), "{e}");
            if ctx.fetcher.is_none() {
                return Err(e);
            }
            fetch(entry, ctx)?
        }
    };
    let files: Files = match entry.kind {
        ArtifactKind::SkillMd => Files::from([(skills_storage::SKILL_FILE.to_owned(), bytes)]),
        ArtifactKind::Archive => {
            unpack(&bytes, ctx.bounds).map_err(|(member, reason)| RemoteError::Archive {
                url: entry.url.clone(),
                member,
                reason,
            })?
        }
    };
    let folder = ctx.cache.skill_folder(&entry.digest, &files)?;
    Ok(Held {
        entry: entry.clone(),
        folder,
        files: files
            .iter()
            .map(|(path, bytes)| (path.clone(), (bytes.len() as u64, Digest::of(bytes))))
            .collect(),
    })
}

/// Fetches an artifact, verifies it against its digest and keeps it in the cache.
fn fetch(entry: &IndexEntry, ctx: &Ctx<'_>) -> Result<Vec<u8>, RemoteError> {
    let Some(fetcher) = ctx.fetcher else {
        return Err(RemoteError::Cache {
            path: ctx.cache.dir().to_path_buf(),
            message: "the origin cannot be reached and the cache does not hold this version",
            source: std::io::ErrorKind::NotFound.into(),
        });
    };
    let bytes = match fetcher.get(&entry.url, MAX_ARTIFACT_BYTES, None)? {
        Fetched::Fresh(bytes, _) => bytes,
        Fetched::NotModified => {
            return Err(RemoteError::Status {
                url: entry.url.clone(),
                status: 304,
            })
        }
    };
    let actual = Digest::of(&bytes);
    if actual != entry.digest {
        return Err(RemoteError::Digest {
            url: entry.url.clone(),
            expected: entry.digest.to_string(),
            actual: actual.to_string(),
        });
    }
    ctx.cache.keep_artifact(&entry.digest, &bytes)?;
    Ok(bytes)
}
