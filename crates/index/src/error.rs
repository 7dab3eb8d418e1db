//! The index's error type, with stable codes.

use thiserror::Error;

/// Errors from the index.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum IndexError {
    /// No skill has this name in the current snapshot.
    #[error("no skill named {name:?}{}", suggestion.as_ref().map(|s| format!("; did you mean {s:?}?")).unwrap_or_default())]
    NotFound {
        /// The name asked for.
        name: String,
        /// The closest name that exists, if one is close.
        suggestion: Option<String>,
    },
    /// A plugin id is already registered, or is not a valid id.
    #[error("plugin {id:?}: {reason}")]
    Plugin {
        /// The plugin id.
        id: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A skill's files could not be read when it was loaded.
    #[error("cannot load {name:?}: {message}")]
    Load {
        /// The skill.
        name: String,
        /// Why.
        message: String,
    },
    /// The file watcher could not be started.
    #[error("cannot watch for changes: {0}")]
    Watch(String),
}

impl IndexError {
    /// A stable, upper-case code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            IndexError::NotFound { .. } => "SKILL_NOT_FOUND",
            IndexError::Plugin { .. } => "SKILL_PLUGIN_INVALID",
            IndexError::Load { .. } => "SKILL_LOAD_FAILED",
            IndexError::Watch(_) => "SKILL_WATCH_FAILED",
        }
    }
}

/// The closest of `names` to `wanted` by edit distance, if it is close enough to suggest.
pub(crate) fn suggest<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (wanted.chars().count() / 3).max(2);
    names
        .map(|n| (edit_distance(wanted, n), n))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, n)| n.to_owned())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
