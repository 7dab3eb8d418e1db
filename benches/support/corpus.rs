//! What both bench binaries share: their arguments, how a corpus is indexed, and how deep
//! its skills sit.

use std::path::{Path, PathBuf};

use skills_index::SkillIndex;
use skills_model::Layer;

/// What a bench binary was asked: `--quick`, `--only NAME`, `--corpus LABEL=DIR` (each).
pub(crate) struct Args {
    pub(crate) quick: bool,
    /// `--only NAME`: only that group of rows (`otlp`: the audit export rows;
    /// `requirements`: the requirement checks' row, on a corpus it writes itself;
    /// `url-cache`: the URL root's row, over the 1,000-skill corpus; `search`: the search
    /// index build rows, over the 1,000- and 10,000-skill corpora).
    pub(crate) only: Option<String>,
    /// (label, folder) of each corpus to index.
    pub(crate) corpora: Vec<(String, PathBuf)>,
}

/// This process's arguments, as [`Args`].
pub(crate) fn args() -> Args {
    let mut quick = false;
    let mut only = None;
    let mut corpora = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--only" => only = it.next(),
            "--corpus" => {
                if let Some((label, dir)) = it.next().as_deref().and_then(|v| v.split_once('=')) {
                    corpora.push((label.to_owned(), PathBuf::from(dir)));
                }
            }
            _ => {} // cargo bench passes --bench
        }
    }
    Args {
        quick,
        only,
        corpora,
    }
}

/// The index the benches build: one project root, skills `depth` levels below it.
pub(crate) fn build(root: &Path, depth: usize) -> SkillIndex {
    SkillIndex::builder()
        .root(Layer::Project, root)
        .depth(depth)
        .build()
        .expect("index builds")
}

/// How deep skills sit below a corpus folder: 1 for generated corpora, deeper for the
/// real-world one (owner/repo/skills/name).
pub(crate) fn depth_of(root: &Path) -> usize {
    let mut depth = 1;
    let mut dir = root.to_path_buf();
    while depth <= 6 {
        let Some(first) = std::fs::read_dir(&dir).ok().and_then(|rd| {
            let mut entries: Vec<PathBuf> = rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            entries.sort();
            entries.into_iter().next()
        }) else {
            return depth;
        };
        if first.join("SKILL.md").exists() {
            return depth;
        }
        dir = first;
        depth += 1;
    }
    6
}
