//! The live skill index: built in parallel from layered roots, published as immutable
//! snapshots that readers take without a lock, and reloaded when files change.
//!
//! [`SkillIndex`] owns the roots and a writer; [`SkillIndex::snapshot`] hands out the
//! current [`Snapshot`] without waiting. A bare name resolves to the highest layer's skill
//! (then higher `priority`, then path order); every loser stays visible as shadowed.
//!
//! ```
//! use skills_index::SkillIndex;
//! use skills_model::Layer;
//!
//! let tmp = tempfile::tempdir().unwrap();
//! let (personal, project) = (tmp.path().join("personal"), tmp.path().join("project"));
//! for (root, text) in [(&personal, "Personal deploy."), (&project, "Project deploy.")] {
//!     std::fs::create_dir_all(root.join("deploy")).unwrap();
//!     let skill = format!("---\nname: deploy\ndescription: {text} Use when deploying.\n---\nSteps.\n");
//!     std::fs::write(root.join("deploy/SKILL.md"), skill).unwrap();
//! }
//! let index = SkillIndex::builder()
//!     .root(Layer::Personal, &personal)
//!     .root(Layer::Project, &project)
//!     .build()
//!     .unwrap();
//! let snapshot = index.snapshot();
//! assert_eq!(snapshot.get("deploy").unwrap().layer, Layer::Personal);
//! assert_eq!(snapshot.get("project:deploy").unwrap().layer, Layer::Project);
//! assert_eq!(snapshot.shadowed()[0].shadowed_by, "personal:deploy");
//! assert_eq!(index.load("deploy").unwrap().body, "Steps.\n");
//! ```

mod available;
mod check;
mod config;
mod error;
mod events;
mod index;
mod load;
mod lookalike;
mod overlap;
mod pool;
mod search;
mod snapshot;
mod validate;
mod warm;
mod watch;

pub use check::{check_candidate, dir_name, SkillReport, DEFAULT_SKILL_FILE_LIMIT};
pub use error::IndexError;
pub use events::{ChangeEvent, ChangeKind};
pub use index::{plugin_id_problem, SkillIndex, SkillIndexBuilder};
pub use load::skill_digest;
pub use overlap::{overlap_message, overlaps, similarities, Described, Overlap, OVERLAP_THRESHOLD};
pub use search::{
    search_terms, Audience, AudienceMemo, SearchField, SearchHit, SearchIndex, SearchOutcome,
    TermShare, FIELD_WEIGHTS,
};
pub use snapshot::{PathDiagnostic, Shadowed, SkillPlace, Snapshot};
pub use validate::{validate_paths, Validation};

/// The index's hash map. Its keys (paths, names) come from skill folders, which may be
/// hostile: the standard library's keyed SipHash, with keys from the system's random
/// source, so no collisions can be computed ahead. (The search's per-word maps trade
/// some of that for speed: see `search::WordState`.)
type Map<K, V> = std::collections::HashMap<K, V>;

/// A hash table whose entries hold their own keys (a folder read from a file's path, a
/// name read from a record), so no key is copied beside them; hashed as [`Map`] is.
#[derive(Debug, Clone)]
struct Table<T> {
    slots: hashbrown::HashTable<T>,
    keys: Keys,
}

impl<T> Default for Table<T> {
    fn default() -> Table<T> {
        Table::with_capacity(0)
    }
}

impl<T> Table<T> {
    fn with_capacity(capacity: usize) -> Table<T> {
        Table {
            slots: hashbrown::HashTable::with_capacity(capacity),
            keys: Keys(std::hash::RandomState::new()),
        }
    }
}

/// The keys of a [`Table`]'s hash, drawn from the system's random source.
#[derive(Debug, Clone)]
struct Keys(std::hash::RandomState);

impl Keys {
    /// The hash of `key` in the table of these keys.
    fn hash<K: std::hash::Hash + ?Sized>(&self, key: &K) -> u64 {
        std::hash::BuildHasher::hash_one(&self.0, key)
    }

    /// The hash of a folder's path in the table of these keys ([`FolderKey`]).
    fn hash_folder(&self, dir: &std::path::Path) -> u64 {
        self.hash(&FolderKey(dir))
    }
}

/// A folder's path as the index's map hashes it: paths equal as [`Path`](std::path::Path)s
/// (component by component) hash alike, as with `Path`'s own hash, but in one or two writes
/// to the hasher, where `Path`'s hash makes one a component (with SipHash, each write's
/// set-up was most of the cost: about 1,760 instructions a path on the real-world corpus).
struct FolderKey<'p>(&'p std::path::Path);

impl std::hash::Hash for FolderKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, hasher: &mut H) {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            // The parts `Path`'s own hash writes (everything between separators, but a `.`
            // after one), each followed by a `/`: equal components give equal bytes, since
            // no part holds a `/`.
            let bytes = self.0.as_os_str().as_bytes();
            // A path whose parts are all names (as the index makes them) is those parts
            // already: written as it is, without its leading `/`, then a `/` (SipHash
            // hashes its writes as one stream of bytes).
            let rest = bytes.strip_prefix(b"/").unwrap_or(bytes);
            if skills_model::names_only(rest) {
                hasher.write(rest);
                hasher.write(b"/");
                return;
            }
            let mut parts: smallvec::SmallVec<[u8; 256]> = smallvec::SmallVec::new();
            let mut start = 0;
            for (i, b) in bytes.iter().enumerate() {
                if *b != b'/' {
                    continue;
                }
                if i > start {
                    parts.extend_from_slice(&bytes[start..i]);
                    parts.push(b'/');
                }
                start = i + 1;
                if matches!(&bytes[start..], [b'.'] | [b'.', b'/', ..]) {
                    start += 1;
                }
            }
            if start < bytes.len() {
                parts.extend_from_slice(&bytes[start..]);
                parts.push(b'/');
            }
            hasher.write(&parts);
        }
        #[cfg(not(unix))]
        std::hash::Hash::hash(self.0, hasher);
    }
}

#[cfg(test)]
mod folder_key_tests {
    use super::{FolderKey, Keys};
    use std::path::Path;

    /// Every path of up to five pieces from a small alphabet of names and separators: any
    /// two equal as `Path`s must hash alike (or the map would hold one folder twice).
    #[test]
    fn paths_equal_as_paths_hash_alike() {
        const PIECES: [&str; 7] = ["a", "b", ".", "..", "/", "//", "./"];
        let mut paths = vec![String::new()];
        let mut all = Vec::new();
        for _ in 0..5 {
            let mut longer = Vec::new();
            for p in &paths {
                for piece in PIECES {
                    longer.push(format!("{p}{piece}"));
                }
            }
            all.extend(longer.iter().cloned());
            paths = longer;
        }
        let keys = Keys(std::hash::RandomState::new());
        let mut by_path: std::collections::HashMap<&Path, u64> = std::collections::HashMap::new();
        let mut compared = 0;
        for p in &all {
            let hash = keys.hash(&FolderKey(Path::new(p)));
            // `HashMap<&Path, _>` finds an equal `Path` already seen, by `Path`'s own rules.
            if let Some(seen) = by_path.get(Path::new(p)) {
                compared += 1;
                assert_eq!(*seen, hash, "{p:?} hashes unlike an equal path");
            } else {
                by_path.insert(Path::new(p), hash);
            }
        }
        assert!(compared > 10_000, "only {compared} equal pairs compared");
        // And paths that differ do not all collide.
        assert_ne!(
            keys.hash(&FolderKey(Path::new("a/b"))),
            keys.hash(&FolderKey(Path::new("a/ab")))
        );
    }
}
