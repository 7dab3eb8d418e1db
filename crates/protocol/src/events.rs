//! The lines a session writes without being asked (with `--events`): what a publication
//! of the index means for one session, and their schemas.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use skills_executor::{AuditEvent, Session};
use skills_index::{ChangeEvent, ChangeKind};

use crate::schema::output_schema;

/// The JSON Schemas of the event lines and of audit events, as documented in PROTOCOL.md.
pub fn event_schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("event", output_schema::<Event>()),
        ("audit", output_schema::<AuditEvent>()),
    ]
}

/// A line the session writes without being asked (with `--events`): it has no `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The skills this session may see changed.
    SkillsChanged {
        /// The index generation that holds the change.
        generation: u64,
        /// Qualified names of skills that appeared.
        added: Vec<String>,
        /// Qualified names of skills whose files or frontmatter changed.
        changed: Vec<String>,
        /// Qualified names of skills that are gone.
        removed: Vec<String>,
    },
    /// An active skill changed on disk; the session serves and enforces the pinned
    /// version until it is loaded again.
    ActiveSkillOutdated {
        /// Its qualified name.
        skill: String,
        /// The digest in force.
        pinned: String,
        /// The digest on disk (absent when the file is gone).
        #[serde(skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
}

/// The events one publication of the index means for `session`: what changed among the
/// skills it may see, then each active skill that became outdated.
pub fn events(session: &Session, batch: &[ChangeEvent]) -> Vec<Event> {
    // Judged by the records the events carry: a removed skill is in no snapshot, and a
    // change can hide a skill from this session (for it, removed) or show it one (added).
    // What it may not see before or after is not mentioned.
    // Whether a skill's needs were met is judged in the snapshot each record is from.
    let seen = |e: &ChangeEvent| {
        let before = e
            .previous
            .as_deref()
            .map(|p| session.could_see(p, e.previously_unavailable));
        (before, session.could_see(&e.record, e.unavailable))
    };
    let (mut added, mut changed, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let mut said = HashSet::new();
    let generation = batch.iter().map(|e| e.generation).max().unwrap_or(0);
    for e in batch {
        // Which skill a name stands for is worked out per session (one it may not see
        // takes no name from one it may), so the index's shadowing, worked out over every
        // skill, says nothing of this session's: a change of what a name stands for to it
        // shows as the skill added, removed or changed that caused it.
        if matches!(e.event, ChangeKind::Shadowed | ChangeKind::Unshadowed) {
            continue;
        }
        let (list, which) = match (e.event, seen(e)) {
            (ChangeKind::Added, (_, true)) | (_, (Some(false), true)) => (&mut added, 0),
            (ChangeKind::Removed, (_, true)) | (_, (Some(true), false)) => (&mut removed, 2),
            (ChangeKind::Added | ChangeKind::Removed, (_, false)) | (_, (_, false)) => continue,
            (_, (_, true)) => (&mut changed, 1),
        };
        if said.insert((which, e.qualified_name.as_str())) {
            list.push(e.qualified_name.clone());
        }
    }
    let mut out = Vec::new();
    if !(added.is_empty() && changed.is_empty() && removed.is_empty()) {
        out.push(Event::SkillsChanged {
            generation,
            added,
            changed,
            removed,
        });
    }
    out.extend(
        session
            .newly_outdated()
            .into_iter()
            .map(|o| Event::ActiveSkillOutdated {
                skill: o.skill,
                pinned: o.pinned,
                current: o.current,
            }),
    );
    out
}

/// Serialises an event line (without its newline).
pub fn event_line(event: &Event) -> String {
    serde_json::to_string(event).unwrap_or_default()
}
