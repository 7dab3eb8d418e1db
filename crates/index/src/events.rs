//! Change events: what differs between two snapshots, for subscribers.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use skills_model::{Layer, SkillRecord};

use crate::Snapshot;

/// What happened to a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// A new skill was indexed.
    Added,
    /// A skill is gone.
    Removed,
    /// A skill's metadata or files changed.
    Changed,
    /// A skill lost its bare name to another.
    Shadowed,
    /// A skill won back its bare name.
    Unshadowed,
}

/// One change, published with the generation of the snapshot that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeEvent {
    /// What happened.
    pub event: ChangeKind,
    /// The skill's name.
    pub name: String,
    /// Its qualified name.
    pub qualified_name: String,
    /// Its layer.
    pub layer: Layer,
    /// Its `SKILL.md` (a URL for a skill of a URL root).
    pub path: PathBuf,
    /// Its remote origin (`url:https://HOST`, `mcp:LABEL`), for a skill of a remote source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The generation of the snapshot it appears in.
    pub generation: u64,
    /// The skill's record: as the new snapshot holds it, or as the old one held it when
    /// it is [`Removed`](ChangeKind::Removed). Whoever passes an event on judges by it
    /// whether its reader may see the skill (a removed skill is no longer in any snapshot
    /// to look it up in).
    #[serde(skip)]
    pub record: Arc<SkillRecord>,
    /// Its record as the old snapshot held it, for a skill in both (changed, shadowed or
    /// unshadowed): a change can hide a skill from a reader, or show it one.
    #[serde(skip)]
    pub previous: Option<Arc<SkillRecord>>,
    /// Whether the skill's needs were unmet here in the snapshot `record` is from
    /// ([`Snapshot::unmet`]): a reader that is not offered such skills does not hear of it.
    #[serde(skip)]
    pub unavailable: bool,
    /// The same for `previous`, in the old snapshot.
    #[serde(skip)]
    pub previously_unavailable: bool,
}

fn event(
    kind: ChangeKind,
    r: &Arc<SkillRecord>,
    previous: Option<&Arc<SkillRecord>>,
    (new, old): (&Snapshot, &Snapshot),
) -> ChangeEvent {
    let generation = new.generation();
    let in_new = kind != ChangeKind::Removed;
    let unavailable = if in_new { new.lacks(r) } else { old.lacks(r) };
    let previously_unavailable = previous.is_some_and(|p| old.lacks(p));
    ChangeEvent {
        unavailable,
        previously_unavailable,
        event: kind,
        name: r.name.to_string(),
        qualified_name: r.qualified_name(),
        layer: r.layer,
        path: r.path.clone(),
        origin: r.remote.as_ref().map(|o| o.to_string()),
        generation,
        record: Arc::clone(r),
        previous: previous.map(Arc::clone),
    }
}

/// Which skill a record is, across snapshots: its `SKILL.md` and the root's layer and plugin
/// (one folder can be reached through two roots, as two skills). The path is compared as
/// bytes: a record's path is made by one rule, so a skill has the same bytes in each
/// snapshot (and bytes hash faster than a path's components).
type Key<'a> = (Layer, Option<&'a str>, &'a OsStr);

fn key(r: &SkillRecord) -> Key<'_> {
    (r.layer, r.plugin.as_deref(), r.path.as_os_str())
}

/// The events that turn `old` into `new`, keyed by `SKILL.md` path (and root).
///
/// Most publications change few records and keep the others where they were: a record at
/// the same place in both snapshots (the same allocation) is the same skill, unchanged, and
/// is compared with nothing else. Only the others are matched by key.
pub(crate) fn diff(old: &Snapshot, new: &Snapshot, changed_dirs: &[PathBuf]) -> Vec<ChangeEvent> {
    let g = (new, old);
    let (olds, news) = (old.records(), new.records());
    let kept_in_place = |i: usize| olds.get(i).is_some_and(|o| Arc::ptr_eq(o, &news[i]));
    let old_by_key: Map<Key<'_>, &Arc<SkillRecord>> = olds
        .iter()
        .enumerate()
        .filter(|&(i, o)| !news.get(i).is_some_and(|r| Arc::ptr_eq(o, r)))
        .map(|(_, r)| (key(r), r))
        .collect();
    // Linear in the records: each record looks its own folders up in the set of changed
    // ones (comparing every record with every changed folder was quadratic).
    let changed: HashSet<&Path> = changed_dirs.iter().map(PathBuf::as_path).collect();
    let touched =
        |r: &SkillRecord| !changed.is_empty() && r.path.ancestors().any(|a| changed.contains(a));
    let mut events = Vec::new();
    let mut matched: HashSet<Key<'_>, foldhash::fast::RandomState> = HashSet::default();
    for (i, r) in news.iter().enumerate() {
        let o = if kept_in_place(i) {
            &olds[i]
        } else {
            match old_by_key.get(&key(r)) {
                None => {
                    events.push(event(ChangeKind::Added, r, None, g));
                    continue;
                }
                Some(o) => {
                    matched.insert(key(r));
                    *o
                }
            }
        };
        // A skill whose needs became met, or unmet, is changed too: whether a reader is
        // offered it may have changed.
        let availability = old.lacks(o) != new.lacks(r);
        if (!Arc::ptr_eq(o, r) && (**o != **r || touched(r))) || availability {
            events.push(event(ChangeKind::Changed, r, Some(o), g));
        }
        match (old.wins(o), new.wins(r)) {
            (true, false) => events.push(event(ChangeKind::Shadowed, r, Some(o), g)),
            (false, true) => events.push(event(ChangeKind::Unshadowed, r, Some(o), g)),
            _ => {}
        }
    }
    for (i, r) in olds.iter().enumerate() {
        let in_place = news.get(i).is_some_and(|n| Arc::ptr_eq(r, n));
        if !in_place && !matched.contains(&key(r)) {
            events.push(event(ChangeKind::Removed, r, None, g));
        }
    }
    events
}

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
