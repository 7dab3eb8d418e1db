//! Change events: what differs between two snapshots, for subscribers.

use std::collections::HashMap;
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
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// The generation of the snapshot it appears in.
    pub generation: u64,
}

fn event(kind: ChangeKind, r: &SkillRecord, generation: u64) -> ChangeEvent {
    ChangeEvent {
        event: kind,
        name: r.name.to_string(),
        qualified_name: r.qualified_name(),
        layer: r.layer,
        path: r.path.clone(),
        generation,
    }
}

/// The events that turn `old` into `new`, keyed by `SKILL.md` path.
pub(crate) fn diff(old: &Snapshot, new: &Snapshot, changed_dirs: &[PathBuf]) -> Vec<ChangeEvent> {
    let g = new.generation();
    let old_by_path: HashMap<&Path, &Arc<SkillRecord>> = old
        .records()
        .iter()
        .map(|r| (r.path.as_path(), r))
        .collect();
    let new_by_path: HashMap<&Path, &Arc<SkillRecord>> = new
        .records()
        .iter()
        .map(|r| (r.path.as_path(), r))
        .collect();
    let mut events = Vec::new();
    for r in new.records() {
        match old_by_path.get(r.path.as_path()) {
            None => events.push(event(ChangeKind::Added, r, g)),
            Some(o) => {
                let touched = changed_dirs.iter().any(|d| r.path.starts_with(d));
                if !Arc::ptr_eq(o, r) && (***o != **r || touched) {
                    events.push(event(ChangeKind::Changed, r, g));
                }
                match (old.wins(o), new.wins(r)) {
                    (true, false) => events.push(event(ChangeKind::Shadowed, r, g)),
                    (false, true) => events.push(event(ChangeKind::Unshadowed, r, g)),
                    _ => {}
                }
            }
        }
    }
    for r in old.records() {
        if !new_by_path.contains_key(r.path.as_path()) {
            events.push(event(ChangeKind::Removed, r, g));
        }
    }
    events
}
