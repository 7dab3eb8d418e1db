//! The model's error type, with stable codes.

use thiserror::Error;

/// Errors from building model values out of untrusted text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A skill name that cannot be used at all (empty, too long, or holding characters that
    /// would break qualified names and paths).
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName {
        /// The rejected text.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A layer name that is none of `enterprise`, `personal`, `project`, `plugin`.
    #[error("unknown layer {0:?}: expected enterprise, personal, project or plugin")]
    UnknownLayer(String),
    /// A tool rule that cannot be read.
    #[error("invalid tool rule {rule:?}: {reason}")]
    InvalidToolRule {
        /// The rejected text.
        rule: String,
        /// Why it was rejected.
        reason: &'static str,
    },
}

impl ModelError {
    /// A stable, upper-case code for programs to match on.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::InvalidName { .. } => "SKILL_INVALID_NAME",
            ModelError::UnknownLayer(_) => "SKILL_UNKNOWN_LAYER",
            ModelError::InvalidToolRule { .. } => "SKILL_INVALID_TOOL_RULE",
        }
    }
}
