//! The crate's one home of writing files: the cache of a URL root (verified artifacts, the
//! folders they unpack to, the last verified index) and the lock file, each written to a
//! temporary name and renamed into place, so no reader ever sees half of one. Reads go
//! through `skills_storage::read_bounded` (regular files only, bounded) and are verified
//! by the caller.
//!
//! A root's cache is `<cache>/agent-skills/remote/<host>-<port>-<hash of the index URL>/`:
//! `index.json` and `validators.json` (the last verified index and its `ETag` or
//! `Last-Modified`), `artifacts/<sha256 hex>` (the bytes that digest names) and
//! `skills/<sha256 hex>/` (the skill folder an artifact unpacks to).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::unpack::Files;
use crate::{Digest, IndexUrl, RemoteError, Validators, MAX_ARTIFACT_BYTES, MAX_INDEX_BYTES};

/// One root's cache folder.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    dir: PathBuf,
}

/// A name no other writer of this process or another picks at the same time.
fn temp_name(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".tmp-{what}-{}-{n}", std::process::id())
}

fn io(path: &Path, message: &'static str) -> impl FnOnce(std::io::Error) -> RemoteError {
    let path = path.to_path_buf();
    move |source| RemoteError::Cache {
        path,
        message,
        source,
    }
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RemoteError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent, "cannot create the folder"))?;
    let temp = parent.join(temp_name("file"));
    let written = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(io(path, "cannot write")(e));
    }
    Ok(())
}

/// Reads a file of the cache, `None` when it is not there.
fn read(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, RemoteError> {
    match skills_storage::read_bounded(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(skills_storage::ReadError::NotFound) => Ok(None),
        Err(e) => Err(io(path, "cannot read")(std::io::Error::other(e))),
    }
}

impl Cache {
    /// The cache of the index at `url`, under `root` (the user's cache folder by default).
    pub(crate) fn new(root: &Path, url: &IndexUrl) -> Cache {
        let origin = url.origin();
        let site: String = origin
            .split_once("://")
            .map_or(origin.as_str(), |(_, rest)| rest)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let key = format!(
            "{site}-{}",
            &Digest::of(url.as_str().as_bytes()).hex()[..16]
        );
        Cache {
            dir: root.join("agent-skills").join("remote").join(key),
        }
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last verified index and its validators, when there is one.
    pub(crate) fn index(&self) -> Result<Option<(Vec<u8>, Validators)>, RemoteError> {
        let Some(bytes) = read(&self.dir.join("index.json"), MAX_INDEX_BYTES)? else {
            return Ok(None);
        };
        let validators = read(&self.dir.join("validators.json"), 64 << 10)?
            .and_then(|v| serde_json::from_slice(&v).ok())
            .unwrap_or_default();
        Ok(Some((bytes, validators)))
    }

    /// Keeps an index every entry of which was verified.
    pub(crate) fn keep_index(&self, bytes: &[u8], v: &Validators) -> Result<(), RemoteError> {
        let validators = serde_json::to_vec(v).unwrap_or_default();
        write_atomic(&self.dir.join("validators.json"), &validators)?;
        write_atomic(&self.dir.join("index.json"), bytes)
    }

    /// The artifact `digest` names, verified again; `None` when it is not cached.
    pub(crate) fn artifact(&self, digest: &Digest) -> Result<Option<Vec<u8>>, RemoteError> {
        let path = self.dir.join("artifacts").join(digest.hex());
        let Some(bytes) = read(&path, MAX_ARTIFACT_BYTES)? else {
            return Ok(None);
        };
        let actual = Digest::of(&bytes);
        if actual != *digest {
            return Err(RemoteError::Digest {
                url: path.display().to_string(),
                expected: digest.to_string(),
                actual: actual.to_string(),
            });
        }
        Ok(Some(bytes))
    }

    /// Keeps a verified artifact.
    pub(crate) fn keep_artifact(&self, digest: &Digest, bytes: &[u8]) -> Result<(), RemoteError> {
        write_atomic(&self.dir.join("artifacts").join(digest.hex()), bytes)
    }

    /// The folder `digest`'s artifact unpacks to, written (through a temporary folder and a
    /// rename) when it is missing or does not hold exactly `files` by name and size.
    pub(crate) fn skill_folder(
        &self,
        digest: &Digest,
        files: &Files,
    ) -> Result<PathBuf, RemoteError> {
        let skills = self.dir.join("skills");
        let target = skills.join(digest.hex());
        if holds(&target, files) {
            return Ok(target);
        }
        let temp = skills.join(temp_name("skill"));
        let written = write_files(&temp, files);
        // A folder there (altered, or half of an older layout) is moved aside, then swept.
        let _ = std::fs::rename(&target, skills.join(temp_name("old")))
            .or_else(|_| std::fs::remove_dir_all(&target));
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &target)) {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(io(&target, "cannot unpack into the cache")(e));
        }
        self.sweep(&skills);
        Ok(target)
    }

    /// Removes the folders replaced ones were moved to.
    fn sweep(&self, skills: &Path) {
        let Ok(entries) = std::fs::read_dir(skills) else {
            return;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(".tmp-old-") {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// Whether `dir` holds exactly `files` (by name and size, links and all else refused).
fn holds(dir: &Path, files: &Files) -> bool {
    files.iter().all(|(rel, bytes)| {
        std::fs::symlink_metadata(dir.join(rel))
            .is_ok_and(|m| m.file_type().is_file() && m.len() == bytes.len() as u64)
    })
}

/// Writes `files` into a new folder `dir`.
fn write_files(dir: &Path, files: &Files) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.parent().unwrap_or(Path::new(".")))?;
    std::fs::create_dir(dir)?;
    for (rel, bytes) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&path)?;
        file.write_all(bytes)?;
    }
    Ok(())
}
