//! Reads relative to the folder above: a nested walk lists each folder through a handle
//! opened by its name below the folder above, keeps that handle while it walks the folders
//! below, and a skill file there is asked about and opened as `name/SKILL.md` relative to
//! it. The kernel walks one or two names, not every name below the root again
//! (`owner/repo/skills/name/SKILL.md`), nor the root's own (a listing by whole path).
//!
//! The walk gives the handle to the source's reader ([`Near`]); the reader reaches the
//! read through the index, which asks the source for the file by its path, so the source
//! leaves itself a note on the reading thread for that one read ([`Noted`]): the note
//! names the source and the exact path it covers, and any other read ignores it. What the
//! handle cannot answer is read as before, relative to the root's handle or by the whole
//! path, with the same refusals and errors.

// Elsewhere than on Unix nothing is read through a handle, and (but on Linux) no folder is
// listed through one.
#![cfg_attr(not(unix), allow(dead_code))]

use std::ffi::OsStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most folder handles the walks of a process hold at once: past it a folder is read
/// below as before (relative to the root's handle), so a wide tree never spends the
/// process's descriptors.
const MOST_HELD: usize = 64;

/// How many handles the walks may hold under a limit of `open_files` descriptors: at most
/// a sixteenth of it (64 under the usual 1,024), so that a host with a low limit keeps its
/// descriptors for its own files and the skill files read.
fn most_held(open_files: Option<u64>) -> usize {
    let share = open_files.map_or(usize::MAX, |limit| {
        usize::try_from(limit / 16).unwrap_or(usize::MAX)
    });
    MOST_HELD.min(share)
}

/// [`most_held`] under this process's limit, asked once.
fn bound() -> usize {
    static BOUND: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| {
        #[cfg(unix)]
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        #[cfg(not(unix))]
        let limit = None;
        most_held(limit)
    })
}

/// Folder handles held now, over every walk of the process.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// A handle on a folder the walk is below: the one its listing was read through, kept
/// while the folders below it are walked, and counted against [`bound`] (the root's
/// handle, held by every walk, is not).
pub(crate) struct Held {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    counted: bool,
}

#[cfg(unix)]
impl Held {
    /// Keeps `fd`, a folder's handle, when fewer than [`bound`] are held; closes it
    /// otherwise.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(crate) fn adopt(fd: std::os::fd::OwnedFd) -> Option<Arc<Held>> {
        if HELD.fetch_add(1, Ordering::Relaxed) >= bound() {
            HELD.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Arc::new(Held { fd, counted: true }))
    }

    /// The handle on a walk's root.
    pub(crate) fn root(fd: std::os::fd::OwnedFd) -> Arc<Held> {
        Arc::new(Held { fd, counted: false })
    }

    /// The handle.
    pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.counted {
            HELD.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A folder the walk visits, as seen from the folder above it: the handle on that folder
/// and the name below it.
#[derive(Clone, Copy)]
pub(crate) struct Near<'a> {
    pub(crate) above: &'a Arc<Held>,
    pub(crate) name: &'a OsStr,
}

/// The note a source leaves on the reading thread for one read.
#[derive(Default)]
struct Note {
    /// The source it is for (its address).
    source: usize,
    /// The handle; `None` while no note is left.
    above: Option<Arc<Held>>,
    /// The skill file's path below the root, exactly as the read asks for it.
    file: String,
    /// Where its last two names (`name/SKILL.md`) begin in `file`.
    near: usize,
}

thread_local! {
    static NOTE: std::cell::RefCell<Note> = std::cell::RefCell::new(Note::default());
}

/// The note left for one read on this thread (not `Send`); taken back when dropped.
pub(crate) struct Noted(std::marker::PhantomData<*const ()>);

impl Noted {
    /// Notes `source`'s read of `dir/file`, where `dir` is `near.name` below `near.above`;
    /// `None` (and no note) when `dir` does not end in that name, or is that name alone
    /// (the root's handle, which the read uses anyway).
    pub(crate) fn leave(source: usize, dir: &str, file: &str, near: Near<'_>) -> Option<Noted> {
        let name = near.name.to_str()?;
        let above = dir.strip_suffix(name)?;
        if !above.ends_with('/') {
            return None;
        }
        NOTE.with_borrow_mut(|note| {
            note.source = source;
            note.above = Some(Arc::clone(near.above));
            note.file.clear();
            note.file.push_str(dir);
            note.file.push('/');
            note.file.push_str(file);
            note.near = above.len();
        });
        Some(Noted(std::marker::PhantomData))
    }
}

impl Drop for Noted {
    fn drop(&mut self) {
        NOTE.with_borrow_mut(|note| note.above = None);
    }
}

/// The handle, and where in `path` the part below it begins (`name/SKILL.md`), when
/// `source` left a note on this thread for exactly `path`.
pub(crate) fn noted(source: usize, path: &str) -> Option<(Arc<Held>, usize)> {
    let noted = NOTE.with_borrow(|note| {
        let above = note
            .above
            .as_ref()
            .filter(|_| note.source == source && note.file == path)?;
        Some((Arc::clone(above), note.near))
    });
    #[cfg(test)]
    if noted.is_some() {
        NOTES_USED.fetch_add(1, Ordering::Relaxed);
    }
    noted
}

/// The reads that used a note, over the tests of this process.
#[cfg(test)]
pub(crate) static NOTES_USED: AtomicUsize = AtomicUsize::new(0);

/// Takes every folder handle the process may still hold (on `dir`), and keeps them while the
/// list lives.
#[cfg(all(test, unix))]
pub(crate) fn hold_every_handle(dir: &std::path::Path) -> Vec<Arc<Held>> {
    let mut taken = Vec::new();
    while let Some(held) = crate::read::open_folder(dir).and_then(Held::adopt) {
        taken.push(held);
        assert!(taken.len() <= bound(), "more handles held than the bound");
    }
    taken
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The bound is 64 handles, and a sixteenth of a lower descriptor limit.
    #[test]
    fn the_handles_held_are_a_sixteenth_of_a_low_limit_and_at_most_64() {
        let table = [
            (None, 64),
            (Some(u64::MAX), 64),
            (Some(1_048_576), 64),
            (Some(1024), 64),
            (Some(256), 16),
            (Some(20), 1),
            (Some(15), 0),
            (Some(0), 0),
        ];
        for (limit, held) in table {
            assert_eq!(most_held(limit), held, "{limit:?}");
        }
    }

    /// A note serves exactly one path of one source on one thread, while it is left.
    #[test]
    fn a_note_serves_its_source_s_one_path_while_it_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let above = Held::root(crate::read::open_folder(tmp.path()).unwrap());
        let near = Near {
            above: &above,
            name: OsStr::new("b"),
        };
        let below = |source, path: &str| noted(source, path).map(|(_, at)| path[at..].to_owned());
        assert!(
            Noted::leave(1, "a/xb", "SKILL.md", near).is_none(),
            "not the name"
        );
        let noted = Noted::leave(1, "a/b", "SKILL.md", near).unwrap();
        assert_eq!(below(1, "a/b/SKILL.md"), Some("b/SKILL.md".into()));
        assert_eq!(below(2, "a/b/SKILL.md"), None, "another source");
        assert_eq!(below(1, "a/c/SKILL.md"), None, "another path");
        let elsewhere = std::thread::scope(|s| s.spawn(|| below(1, "a/b/SKILL.md")).join());
        assert_eq!(elsewhere.unwrap(), None, "another thread");
        drop(noted);
        assert_eq!(below(1, "a/b/SKILL.md"), None, "taken back");
        assert!(
            Noted::leave(1, "b", "SKILL.md", near).is_none(),
            "one level below the root: the root's handle reads it anyway"
        );
        assert_eq!(below(1, "b/SKILL.md"), None);
    }
}
