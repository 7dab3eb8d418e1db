//! Skills from a well-known HTTP index (agent-skills discovery v0.2.0): a
//! [`RemoteSource`] is a `SkillSource` whose skills are published as
//! `/.well-known/agent-skills/index.json` with entries `{name, type, description, url,
//! digest}`. Every artifact is verified against its `sha256:` digest before use, archives
//! are unpacked under bounds, the verified state is cached under the user's cache folder
//! (and verified again on every read), served offline, and polled for changes. A
//! [`Lock`] (`skills.lock`) pins the digests a project accepts.
//!
//! ```no_run
//! let source = skills_remote::RemoteSource::builder("https://skills.example.com")?
//!     .poll_interval(Some(std::time::Duration::from_secs(60)))
//!     .open()?;
//! let _ = source.offline();
//! # Ok::<(), skills_remote::RemoteError>(())
//! ```

mod digest;
mod disk;
mod document;
mod error;
mod held;
mod http;
mod location;
mod lock;
mod source;
mod unpack;

pub use digest::Digest;
pub use document::{ArtifactKind, IndexDocument, IndexEntry, MAX_ENTRIES};
pub use error::{Refusal, RemoteError, SCHEMA_0_2_0};
pub use http::{
    Validators, CONNECT_TIMEOUT, MAX_ARTIFACT_BYTES, MAX_INDEX_BYTES, MAX_REDIRECTS,
    REQUEST_TIMEOUT,
};
pub use location::{checked_url, IndexUrl, WELL_KNOWN_INDEX};
pub use lock::{LocalDigest, Lock, Pins, RemotePin, LOCK_FILE, LOCK_VERSION};
pub use source::{RemoteSource, RemoteSourceBuilder, DEFAULT_POLL_INTERVAL};
pub use unpack::{unpack, Bounds, Files, Refused, MAX_ARCHIVE_FILES, MAX_UNPACKED_BYTES};
