//! The errors of remote sources, with stable codes that keep their causes.

use std::path::PathBuf;

use thiserror::Error;

/// The one `$schema` this client reads (discovery v0.2.0); the errors name it.
pub const SCHEMA_0_2_0: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Why an archive member was refused ([`RemoteError::Archive`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Refusal {
    /// An absolute path (`/etc/passwd`, `C:\x`).
    #[error("an absolute path")]
    Absolute,
    /// A `..` component.
    #[error("a `..` component")]
    Parent,
    /// Any other path that is not a plain relative one (NUL, backslash, empty).
    #[error("not a plain relative path")]
    NotPlain,
    /// A symbolic link.
    #[error("a symbolic link")]
    Symlink,
    /// A hard link.
    #[error("a hard link")]
    HardLink,
    /// A device, FIFO, socket or other special file.
    #[error("a special file ({0})")]
    Special(&'static str),
    /// More files than the bound.
    #[error("more than {0} files")]
    TooManyFiles(usize),
    /// More bytes unpacked than the bound.
    #[error("more than {0} bytes unpacked")]
    TooLarge(u64),
    /// The same path twice, or a file where a folder is needed.
    #[error("a path given twice, or both a file and a folder")]
    Duplicate,
    /// No `SKILL.md` at the archive's root.
    #[error("no SKILL.md at the archive's root")]
    NoSkillFile,
    /// Bytes the format cannot read.
    #[error("unreadable: {0}")]
    Corrupt(String),
}

/// Errors of a remote source.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// A root's URL that is not an `https://` URL (or `http://` on loopback).
    #[error("{url:?} is not a URL root: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The request failed (no connection, a timeout, too many redirects).
    #[error("{url}: cannot fetch: {source}")]
    Fetch {
        /// The URL asked for.
        url: String,
        /// The client's error.
        #[source]
        source: Box<ureq::Error>,
    },
    /// The server answered with a status other than 200 (or 304 for a conditional GET).
    #[error("{url}: the server answered HTTP {status}")]
    Status {
        /// The URL asked for.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// A redirect that leaves the root's rule, or too many of them.
    #[error("{url}: redirect refused: {reason}")]
    Redirect {
        /// The URL that redirected.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// A response over its bound.
    #[error("{url}: the response is over the limit of {limit} bytes")]
    TooLarge {
        /// The URL asked for.
        url: String,
        /// The bound.
        limit: u64,
    },
    /// An index without `$schema`: v0.1.0, which has no digests.
    #[error("{url}: the index has no $schema: it is a v0.1.0 index, whose artifacts carry no digest and cannot be verified; publish it as v0.2.0 ({schema})", schema = SCHEMA_0_2_0)]
    SchemaMissing {
        /// The index URL.
        url: String,
    },
    /// An index with a `$schema` this client does not know.
    #[error("{url}: unknown $schema {schema:?}; this client reads {known}", known = SCHEMA_0_2_0)]
    SchemaUnknown {
        /// The index URL.
        url: String,
        /// The `$schema` it gives.
        schema: String,
    },
    /// An index that is not the well-known format.
    #[error("{url}: not a well-known skills index: {message}")]
    Index {
        /// The index URL.
        url: String,
        /// What is wrong, with its place.
        message: String,
    },
    /// An artifact whose bytes are not the digest the index gives.
    #[error("{url}: digest mismatch: the index gives {expected}, the bytes are {actual}")]
    Digest {
        /// The artifact's URL (or the cache file).
        url: String,
        /// The digest the index gives.
        expected: String,
        /// The digest of the bytes.
        actual: String,
    },
    /// An archive refused by the unpacking rules.
    #[error("{url}: archive refused: member {member:?} is {reason}")]
    Archive {
        /// The artifact's URL.
        url: String,
        /// The member's name as the archive gives it.
        member: String,
        /// Why.
        reason: Refusal,
    },
    /// The cache could not be read or written.
    #[error("cache {}: {message}: {source}", path.display())]
    Cache {
        /// The file or folder.
        path: PathBuf,
        /// What was being done.
        message: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A skill whose digest is not the one the lock pins.
    #[error("skill {name:?} of {index}: the lock {lock} pins {locked}, the index gives {published}; not loaded until `skillctl lock --update`")]
    LockMismatch {
        /// The skill.
        name: String,
        /// The index URL.
        index: String,
        /// The lock file.
        lock: String,
        /// The digest the lock pins.
        locked: String,
        /// The digest the index gives.
        published: String,
    },
    /// A skill the lock does not name.
    #[error("skill {name:?} of {index} (digest {published}) is not in the lock {lock}; not loaded until `skillctl lock --update`")]
    LockMissing {
        /// The skill.
        name: String,
        /// The index URL.
        index: String,
        /// The lock file.
        lock: String,
        /// The digest the index gives.
        published: String,
    },
    /// A lock file that cannot be read.
    #[error("lock file {path}: {message}")]
    LockFile {
        /// The lock file.
        path: String,
        /// What is wrong, with its place.
        message: String,
    },
}

impl RemoteError {
    /// A stable, upper-case code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            RemoteError::Url { .. } => "REMOTE_URL_INVALID",
            RemoteError::Fetch { .. } => "REMOTE_UNREACHABLE",
            RemoteError::Status { .. } => "REMOTE_HTTP_STATUS",
            RemoteError::Redirect { .. } => "REMOTE_REDIRECT_REFUSED",
            RemoteError::TooLarge { .. } => "REMOTE_TOO_LARGE",
            RemoteError::SchemaMissing { .. } => "REMOTE_SCHEMA_MISSING",
            RemoteError::SchemaUnknown { .. } => "REMOTE_SCHEMA_UNKNOWN",
            RemoteError::Index { .. } => "REMOTE_INDEX_INVALID",
            RemoteError::Digest { .. } => "REMOTE_DIGEST_MISMATCH",
            RemoteError::Archive { .. } => "REMOTE_ARCHIVE_REFUSED",
            RemoteError::Cache { .. } => "REMOTE_CACHE",
            RemoteError::LockMismatch { .. } => "REMOTE_LOCK_MISMATCH",
            RemoteError::LockMissing { .. } => "REMOTE_LOCK_MISSING",
            RemoteError::LockFile { .. } => "REMOTE_LOCK_INVALID",
        }
    }

    /// Whether the origin could not be reached (a start from the cache is then in order).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, RemoteError::Fetch { .. })
    }
}
