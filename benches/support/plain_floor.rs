//! The floor every indexing figure is measured against: list the root's folders and read
//! the bytes the index reads of each `SKILL.md` (its first 8 KiB and one byte more), in
//! parallel, with the standard library and nothing else: no code of this project's runs
//! here. A folder with no `SKILL.md` is listed and descended into, to `depth` levels, as a
//! nested layout (owner/repo/skills/name) needs.
//!
//! Shared by `benches/gates.rs` (in process) and `examples/floor.rs` (the whole-process
//! floor beside `skillctl list`).

use std::io::Read;
use std::path::Path;

use rayon::prelude::*;

/// The bytes the index reads of a `SKILL.md`: the metadata prefix and one byte more.
pub(crate) const PREFIX: usize = 8 * 1024 + 1;

/// Reads every `SKILL.md` under `root` to `depth` levels; returns the bytes read.
pub(crate) fn floor(root: &Path, depth: usize) -> usize {
    folders(root)
        .par_iter()
        .map(|dir| folder(dir, depth.saturating_sub(1)))
        .sum()
}

/// The folders listed in `dir` (following links, as discovery does), hidden ones left out.
fn folders(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| t.is_dir() || (t.is_symlink() && e.path().is_dir()))
        })
        .map(|e| e.path())
        .collect()
}

/// Reads `dir/SKILL.md`, or descends when there is none.
fn folder(dir: &Path, depth_left: usize) -> usize {
    match std::fs::File::open(dir.join("SKILL.md")) {
        Ok(mut file) => {
            let mut buf = vec![0u8; PREFIX];
            let mut filled = 0;
            while filled < PREFIX {
                match file.read(&mut buf[filled..]) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => filled += n,
                }
            }
            filled
        }
        Err(_) if depth_left > 0 => folders(dir)
            .par_iter()
            .map(|sub| folder(sub, depth_left - 1))
            .sum(),
        Err(_) => 0,
    }
}
