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

/// What the floor does around each read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    /// Open and read: the floor every figure is gated against.
    None,
    /// A `stat` before the open (a device is never opened) and an `fstat` after it, as the
    /// index does: reported beside, so the cost of that promise shows apart from the rest.
    Stat,
}

/// Reads every `SKILL.md` under `root` to `depth` levels; returns the bytes read.
pub(crate) fn floor(root: &Path, depth: usize) -> usize {
    floor_with(root, depth, Checks::None)
}

/// [`floor`], with `checks` around each read.
pub(crate) fn floor_with(root: &Path, depth: usize, checks: Checks) -> usize {
    folders(root)
        .par_iter()
        .map(|dir| folder(dir, depth.saturating_sub(1), checks))
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
fn folder(dir: &Path, depth_left: usize, checks: Checks) -> usize {
    let path = dir.join("SKILL.md");
    let checked = || std::fs::metadata(&path).map(|m| m.is_file());
    let opened = match checks {
        Checks::None => std::fs::File::open(&path),
        Checks::Stat => match checked() {
            Ok(true) => std::fs::File::open(&path),
            Ok(false) => return 0,
            Err(e) => Err(e),
        },
    };
    match opened {
        Ok(mut file) => {
            if checks == Checks::Stat && !file.metadata().is_ok_and(|m| m.is_file()) {
                return 0;
            }
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
            .map(|sub| folder(sub, depth_left - 1, checks))
            .sum(),
        Err(_) => 0,
    }
}
