//! Where a skill came from when it did not come from a disk or the host's binary: a
//! well-known HTTP index or an MCP server. Its spelling is the one the host trusts it by.

use std::fmt;

use serde::{Serialize, Serializer};

/// The kind of a remote source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RemoteKind {
    /// A well-known HTTP index (`/.well-known/agent-skills/index.json`), by the origin of
    /// its URL (`https://HOST[:PORT]`).
    Url,
    /// A server of MCP's skills extension, by the label the host gave it.
    Mcp,
}

/// A remote origin: a kind and what names it (`https://HOST[:PORT]`, or an MCP server's
/// label). It displays as the host trusts it: `url:https://HOST` or `mcp:LABEL`.
///
/// ```
/// use skills_model::RemoteOrigin;
///
/// assert_eq!(RemoteOrigin::url("https://skills.example.com").to_string(), "url:https://skills.example.com");
/// assert_eq!(RemoteOrigin::mcp("tools").to_string(), "mcp:tools");
/// assert_eq!("url:https://a.example".parse::<RemoteOrigin>().unwrap(), RemoteOrigin::url("https://a.example"));
/// assert!("https://a.example".parse::<RemoteOrigin>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemoteOrigin {
    kind: RemoteKind,
    id: String,
}

impl RemoteOrigin {
    /// A well-known index's origin: scheme, host and port (`https://HOST[:PORT]`), no path.
    pub fn url(origin: impl Into<String>) -> RemoteOrigin {
        RemoteOrigin {
            kind: RemoteKind::Url,
            id: origin.into().trim_end_matches('/').to_ascii_lowercase(),
        }
    }

    /// An MCP server's origin, by its host-assigned label.
    pub fn mcp(label: impl Into<String>) -> RemoteOrigin {
        RemoteOrigin {
            kind: RemoteKind::Mcp,
            id: label.into(),
        }
    }

    /// The kind of source.
    pub fn kind(&self) -> RemoteKind {
        self.kind
    }

    /// What names it within its kind: the URL's origin, or the server's label.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl fmt::Display for RemoteOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            RemoteKind::Url => "url",
            RemoteKind::Mcp => "mcp",
        };
        write!(f, "{kind}:{}", self.id)
    }
}

/// Why a spelling names no remote origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} names no remote origin: write url:https://HOST[:PORT] or mcp:LABEL")]
pub struct RemoteOriginError(pub String);

impl std::str::FromStr for RemoteOrigin {
    type Err = RemoteOriginError;

    /// Reads `url:http(s)://HOST[:PORT]` (no path) or `mcp:LABEL`.
    fn from_str(s: &str) -> Result<RemoteOrigin, RemoteOriginError> {
        let bad = || RemoteOriginError(s.to_owned());
        match s.split_once(':') {
            Some(("url", rest)) => {
                let host = rest
                    .strip_prefix("https://")
                    .or_else(|| rest.strip_prefix("http://"))
                    .ok_or_else(bad)?
                    .trim_end_matches('/');
                if host.is_empty() || host.contains(['/', '?', '#', '@', ' ']) {
                    return Err(bad());
                }
                Ok(RemoteOrigin::url(rest))
            }
            Some(("mcp", label)) if !label.is_empty() && !label.contains(char::is_whitespace) => {
                Ok(RemoteOrigin::mcp(label))
            }
            _ => Err(bad()),
        }
    }
}

impl Serialize for RemoteOrigin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
