//! Where skills live: discovery of skill folders under a root, and bounded reads of
//! regular files. This crate never parses YAML.
//!
//! [`discover`] walks a root with [`DiscoveryOptions`] and returns the skill directories it
//! finds; [`SkillDir`] (files beneath a skill folder) and [`read_bounded`] (a file by its
//! path) are the only ways the project opens a skill's files.
//!
//! ```
//! use skills_storage::{discover, read_bounded, DiscoveryOptions};
//!
//! let root = tempfile::tempdir().unwrap();
//! std::fs::create_dir(root.path().join("pdf-tools")).unwrap();
//! std::fs::write(root.path().join("pdf-tools/SKILL.md"), "---\nname: pdf-tools\n---\n").unwrap();
//!
//! let found = discover(root.path(), &DiscoveryOptions::roots());
//! assert_eq!(found.candidates.len(), 1);
//! let file = found.candidates[0].skill_file.as_ref().unwrap();
//! assert!(read_bounded(file, 1 << 20).unwrap().starts_with(b"---"));
//! ```

mod discover;
mod near;
mod read;
mod roots;
mod scaffold;
mod skill_dir;
mod source;

pub use discover::{
    discover, folders_to_watch, skipped_folder, Candidate, Discovery, DiscoveryOptions, LeafFiles,
    WatchFolder, MAX_ROOT_DEPTH, SKILL_FILE, SKIPPED_NAMES,
};
pub use read::{read_bounded, read_prefix, ReadError};
pub use roots::{
    default_roots, names_url, project_root, Preset, RootOrigin, RootSource, RootsConfig,
    RootsConfigBuilder, RootsError, SkillRoot, ENV_VARS,
};
pub use scaffold::{scaffold, ScaffoldError, ScaffoldParts};
pub use skill_dir::{
    digest_regular, file_id, file_identity, open_regular, resolve_inside, BeneathError, OpenedFile,
    SkillDir,
};
pub use source::{
    listed_name, listed_path, skill_folders, CandidateList, EmbeddedSource, FsSource, HeldFile,
    MemorySource, ReadCandidate, SkillSource, SourceCandidate, SourceNotifier, MAX_LISTED_FILES,
};
