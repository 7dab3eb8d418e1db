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
}
