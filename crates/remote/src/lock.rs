//! `skills.lock`: a project's pins. JSON, written sorted and pretty so it diffs well:
//!
//! ```json
//! {
//!   "version": 1,
//!   "remote": [
//!     {"name": "deploy", "origin": "url:https://skills.example.com",
//!      "index": "https://skills.example.com/.well-known/agent-skills/index.json",
//!      "digest": "sha256:..."}
//!   ],
//!   "local": [
//!     {"name": "notes", "layer": "project", "digest": "sha256:..."}
//!   ]
//! }
//! ```
//!
//! A remote skill is pinned by the digest its index gives (the artifact's); a URL root
//! with a lock loads only the skills the lock names at the digests it names. Local skills'
//! `SKILL.md` digests are recorded, not enforced.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Digest, IndexUrl, RemoteError};

/// The lock file's name, in the project root.
pub const LOCK_FILE: &str = "skills.lock";
/// The version of the lock's format this crate writes and reads.
pub const LOCK_VERSION: u32 = 1;
/// The most bytes a lock file may have.
const MAX_LOCK_BYTES: u64 = 16 << 20;

/// A remote skill pinned by digest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RemotePin {
    /// The skill's name.
    pub name: String,
    /// Its origin, as trust spells it (`url:https://HOST`).
    pub origin: String,
    /// The index URL it was published in.
    pub index: String,
    /// The digest of its artifact, as the index gives it.
    pub digest: String,
}

/// A local skill's digest, recorded.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LocalDigest {
    /// The skill's name.
    pub name: String,
    /// Its layer (or `plugin:ID`).
    pub layer: String,
    /// `sha256:` of its `SKILL.md`.
    pub digest: String,
}

/// The contents of `skills.lock`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format's version ([`LOCK_VERSION`]).
    pub version: u32,
    /// Remote skills, pinned.
    #[serde(default)]
    pub remote: Vec<RemotePin>,
    /// Local skills, recorded.
    #[serde(default)]
    pub local: Vec<LocalDigest>,
}

impl Lock {
    /// An empty lock of the current version.
    pub fn new() -> Lock {
        Lock {
            version: LOCK_VERSION,
            ..Lock::default()
        }
    }

    /// Reads the lock at `path`; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<Lock>, RemoteError> {
        let bad = |message: String| RemoteError::LockFile {
            path: path.display().to_string(),
            message,
        };
        let bytes = match skills_storage::read_bounded(path, MAX_LOCK_BYTES) {
            Ok(bytes) => bytes,
            Err(skills_storage::ReadError::NotFound) => return Ok(None),
            Err(e) => return Err(bad(e.to_string())),
        };
        let lock: Lock = serde_json::from_slice(&bytes)
            .map_err(|e| bad(format!("line {} column {}: {e}", e.line(), e.column())))?;
        if lock.version != LOCK_VERSION {
            return Err(bad(format!(
                "version {} is not {LOCK_VERSION}, the one this build reads",
                lock.version
            )));
        }
        for pin in &lock.remote {
            if Digest::parse(&pin.digest).is_none() {
                return Err(bad(format!(
                    "{}: the digest {:?} is not sha256:<hex>",
                    pin.name, pin.digest
                )));
            }
        }
        Ok(Some(lock))
    }

    /// The lock as written: sorted, pretty, ending in a newline.
    pub fn render(&self) -> String {
        let mut sorted = self.clone();
        sorted.remote.sort();
        sorted.local.sort();
        let mut text = serde_json::to_string_pretty(&sorted).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the lock to `path` (a temporary file, then a rename).
    pub fn write(&self, path: &Path) -> Result<(), RemoteError> {
        crate::disk::write_atomic(path, self.render().as_bytes())
    }

    /// The pins of one index, for its source; `lock` names the file in errors.
    pub fn pins_for(&self, index: &IndexUrl, lock: &Path) -> Pins {
        Pins {
            lock: lock.display().to_string(),
            digests: self
                .remote
                .iter()
                .filter(|p| p.index == index.as_str())
                .filter_map(|p| Some((p.name.clone(), Digest::parse(&p.digest)?)))
                .collect(),
        }
    }
}

/// One index's pins: what a source with a lock loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pins {
    lock: String,
    digests: BTreeMap<String, Digest>,
}

impl Pins {
    /// Whether `name` at `digest` may load; the error names both digests or the missing
    /// entry.
    pub fn admit(&self, index: &IndexUrl, name: &str, digest: &Digest) -> Result<(), RemoteError> {
        match self.digests.get(name) {
            Some(locked) if locked == digest => Ok(()),
            Some(locked) => Err(RemoteError::LockMismatch {
                name: name.to_owned(),
                index: index.to_string(),
                lock: self.lock.clone(),
                locked: locked.to_string(),
                published: digest.to_string(),
            }),
            None => Err(RemoteError::LockMissing {
                name: name.to_owned(),
                index: index.to_string(),
                lock: self.lock.clone(),
                published: digest.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_that_cannot_be_read_says_where_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        assert_eq!(Lock::read(&path).unwrap(), None);
        let bad_digest = r#"{"version":1,"remote":[{"name":"a","origin":"url:https://x","index":"https://x/i.json","digest":"md5:0"}]}"#;
        for (text, needle) in [
            ("{", "line 1"),
            (r#"{"version":2}"#, "version 2"),
            (bad_digest, "is not sha256"),
            (r#"{"version":1,"extra":1}"#, "unknown field"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = Lock::read(&path).unwrap_err();
            assert_eq!(e.code(), "REMOTE_LOCK_INVALID");
            let message = e.to_string();
            assert!(
                message.contains(needle) && message.contains(LOCK_FILE),
                "{message}"
            );
        }
        let lock = Lock::new();
        lock.write(&path).unwrap();
        assert_eq!(Lock::read(&path).unwrap(), Some(lock));
    }
}
