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
