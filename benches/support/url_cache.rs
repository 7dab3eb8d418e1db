//! The URL root's row: indexing 1,000 skills from a well-known index's cache (the origin
//! stopped, so the source starts from its last verified state: every artifact read and
//! verified by digest, every `SKILL.md` read through the cache and verified again) against
//! the same skills on local disk, the floor.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use skills_index::SkillIndex;
use skills_model::Layer;
use skills_remote::RemoteSource;

#[path = "../../crates/remote/tests/support/serve.rs"]
mod serve;

use crate::row::{metric, order};
use crate::{median, ms};

/// Publishes `root`'s skills (with their references and scripts), fills a cache from a
/// loopback server, stops it, and times builds from the cache beside builds from disk.
pub(crate) fn row(root: &Path, runs: usize, metrics: &mut Vec<Value>) {
    let tmp = tempfile::tempdir().expect("temp folder");
    let site = tmp.path().join("site");
    // Each skill with its files: a lone SKILL.md as `skill-md`, any other as an archive.
    let texts: Vec<(String, Vec<(String, String)>)> = std::fs::read_dir(root)
        .expect("corpus")
        .filter_map(Result::ok)
        .map(|e| {
            let dir = e.path();
            let mut files = Vec::new();
            for rel in ["SKILL.md", "references/guide.md", "scripts/run.py"] {
                if let Ok(text) = std::fs::read_to_string(dir.join(rel)) {
                    files.push((rel.to_owned(), text));
                }
            }
            (e.file_name().to_string_lossy().into_owned(), files)
        })
        .collect();
    let files: Vec<Vec<(&str, &str)>> = texts
        .iter()
        .map(|(_, f)| f.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect())
        .collect();
    let skills: Vec<(&str, &[(&str, &str)])> = texts
        .iter()
        .zip(&files)
        .map(|((name, _), f)| (name.as_str(), &f[..]))
        .collect();
    serve::publish(&site, &skills);
    let server = serve::Server::start(&site);
    let url = server.url();
    let cache = tmp.path().join("cache");
    let open = || {
        RemoteSource::builder(&url)
            .expect("url")
            .cache_dir(&cache)
            .poll_interval(None)
            .open()
            .expect("a start from the cache")
    };
    drop(open());
    server.stop();
    let from_cache = || {
        let source = open();
        SkillIndex::builder()
            .source(Layer::Enterprise, source)
            .build()
            .expect("index builds")
    };
    let from_disk = || crate::build(root, 1);
    let (mut cached, mut disk) = (Vec::new(), Vec::new());
    let expected = from_disk().snapshot().len();
    assert_eq!(from_cache().snapshot().len(), expected, "the same skills");
    for run in 0..runs {
        for step in order(run, 2) {
            let t = Instant::now();
            let index = if step == 0 { from_cache() } else { from_disk() };
            let took = ms(t.elapsed());
            drop(Arc::new(index));
            if step == 0 {
                cached.push(took)
            } else {
                disk.push(took)
            }
        }
    }
    metrics.push(metric(
        "index build from a URL root's cache, 1000 skills",
        "ms",
        median(cached),
        Some(median(disk)),
        "origin stopped: every artifact and SKILL.md verified by digest; floor: the same skills on disk",
    ));
}
