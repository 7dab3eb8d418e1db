//! Layers: where a skill comes from, and which layer wins a name.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::ModelError;

/// The layer a skill root belongs to. The default precedence, highest first, is the order of
/// the variants: enterprise, personal, project, plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// Managed system-wide by an organisation.
    Enterprise,
    /// The user's own skills.
    Personal,
    /// Skills checked into the current project.
    Project,
    /// Skills registered at run time by a plugin manager.
    Plugin,
}

impl Layer {
    /// Every layer in default precedence order, highest first.
    pub const ALL: [Layer; 4] = [
        Layer::Enterprise,
        Layer::Personal,
        Layer::Project,
        Layer::Plugin,
    ];

    /// The lowercase name (`enterprise`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Enterprise => "enterprise",
            Layer::Personal => "personal",
            Layer::Project => "project",
            Layer::Plugin => "plugin",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layer {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Layer, ModelError> {
        Layer::ALL
            .into_iter()
            .find(|layer| layer.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ModelError::UnknownLayer(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_case_insensitively() {
        assert_eq!("Project".parse::<Layer>().unwrap(), Layer::Project);
        assert!("global".parse::<Layer>().is_err());
        assert!(Layer::Enterprise < Layer::Plugin);
    }
}
