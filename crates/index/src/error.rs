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
    /// No skill holds this bare name: two or more MCP servers serve it, and none takes it
    /// from another; each is reached by its qualified name.
    #[error("no skill holds the bare name {name:?}: {} MCP servers serve it and none takes it from another; name one by its qualified name: {}", choices.len(), choices.join(", "))]
    Contested {
        /// The bare name asked for.
        name: String,
        /// The qualified names to choose from.
        choices: Vec<String>,
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
            IndexError::NotFound { .. } | IndexError::Contested { .. } => "SKILL_NOT_FOUND",
            IndexError::Plugin { .. } => "SKILL_PLUGIN_INVALID",
            IndexError::Load { .. } => "SKILL_LOAD_FAILED",
            IndexError::Watch(_) => "SKILL_WATCH_FAILED",
        }
    }
}
