//! The index's settings, as its builder gathers them: read by the writer's scans, the
//! stage-two loads and the watcher alike, below all three.

use std::time::Duration;

use skills_model::Layer;
use skills_parser::SkillParser;

/// What a [`SkillIndexBuilder`](crate::SkillIndexBuilder) was told.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) order: [Layer; 4],
    pub(crate) strict: bool,
    pub(crate) depth: usize,
    pub(crate) debounce: Duration,
    pub(crate) parser: SkillParser,
    pub(crate) file_limit: u64,
    pub(crate) codex_metadata: bool,
    /// The search path a skill's programs are looked for on (`requires.bins`); `None`:
    /// this process's `PATH` (the one scripts receive), read at each publication.
    pub(crate) program_path: Option<std::ffi::OsString>,
}
