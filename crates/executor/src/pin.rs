//! What a load pins of a skill's scripts: the digest of each file under `scripts/`, read
//! within a budget per load and a limit per file; a run checks the script against it.

use std::path::Path;

/// The largest script pinned at load, in bytes: a larger file under `scripts/` is not
/// read (a hostile folder's sparse terabyte would hold the load for hours) and never runs.
pub(crate) const SCRIPT_LIMIT: u64 = 64 * 1024 * 1024;

/// The most bytes one load reads to pin its skills' scripts, all of them together: a file
/// read under several names (links) counts once. A script beyond it is not read, not
/// pinned ([`ScriptPin::Unread`]), and never runs (a hostile folder of ten thousand links
/// to one file of 63 MiB made each load hash 640 GB).
pub(crate) const SCRIPTS_BUDGET: u64 = 256 * 1024 * 1024;

/// What a load pinned of a file under `scripts/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptPin {
    /// The `sha256:` digest of its bytes at load.
    Digest(String),
    /// Not read: the load's [`SCRIPTS_BUDGET`] was spent. It never runs.
    Unread,
}

/// What is left of a load's [`SCRIPTS_BUDGET`], and the files it read, by identity (device
/// and inode), with what each gave.
#[derive(Debug)]
pub(crate) struct PinBudget {
    left: u64,
    seen: std::collections::HashMap<(u64, u64), Option<String>>,
}

impl PinBudget {
    pub(crate) fn new(bytes: u64) -> PinBudget {
        PinBudget {
            left: bytes,
            seen: std::collections::HashMap::new(),
        }
    }

    /// What to pin of `path`: its digest, [`ScriptPin::Unread`] when the budget left is less
    /// than its size, `None` when it is not a regular file, cannot be read, or is larger
    /// than [`SCRIPT_LIMIT`]. A file read already under another name is not read again.
    pub(crate) fn pin(&mut self, path: &Path) -> Option<ScriptPin> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > SCRIPT_LIMIT {
            return None;
        }
        let id = skills_storage::file_identity(&meta);
        if let Some(seen) = id.and_then(|id| self.seen.get(&id)) {
            return seen.clone().map(ScriptPin::Digest);
        }
        if meta.len() > self.left {
            return Some(ScriptPin::Unread);
        }
        let (digest, read) = skills_storage::digest_regular(path, self.left.min(SCRIPT_LIMIT));
        self.left = self.left.saturating_sub(read);
        if let Some(id) = id {
            self.seen.insert(id, digest.clone());
        }
        digest.map(ScriptPin::Digest)
    }
}

/// `sha256:<hex>` of a regular file's bytes; `None` when it is not one, cannot be read, or
/// is larger than [`SCRIPT_LIMIT`] (also when it grows past it while read).
pub(crate) fn script_digest(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > SCRIPT_LIMIT {
        return None;
    }
    skills_storage::digest_regular(path, SCRIPT_LIMIT).0
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    // Regression (review): a FIFO renamed onto a script between the check and the open
    // blocked the open, and the load, for good.
    #[test]
    fn a_fifo_in_place_of_a_script_is_not_opened_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("run.sh");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(skills_storage::digest_regular(&fifo, SCRIPT_LIMIT).0, None);
        assert_eq!(script_digest(&fifo), None);
        let file = dir.path().join("ok.sh");
        std::fs::write(&file, "echo ok\n").unwrap();
        assert!(skills_storage::digest_regular(&file, SCRIPT_LIMIT)
            .0
            .is_some_and(|d| d.starts_with("sha256:")));
    }
}
