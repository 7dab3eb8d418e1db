//! The walk of a scan that reads where it finds ([`walk_reading`](super::walk_reading) with
//! a reader): each folder is visited as soon as its parent is listed, on whichever reading
//! thread is free, with no level waiting for the one above it to finish.
//!
//! What is visited and what each visit decides are the level walk's own ([`visit`], and
//! [`Walk::follow`] for links); only the order differs, and only links depend on order
//! (what a link may enter depends on the links entered before it). So the folders reached
//! by no link are walked first, all at once, and the links they hold are kept with their
//! folder's place in the level walk's order ([`Step`]). Links are then followed in exactly
//! that order, a depth at a time: each is followed or not in turn, then the folders they
//! lead to are walked together the same way, their own links joining the queue (always
//! deeper than the links being followed, so never before them). Together this follows
//! the same links, to the same folders, as the level walk
//! (`a_walk_reading_where_it_finds_follows_the_links_a_level_walk_follows`).

use std::borrow::Cow;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::{joined_into, visit, Base, DiscoveryOptions, Run, Walk, Walked};
use crate::near::Near;

thread_local! {
    /// Each walking thread writes the paths of the folder it visits (as reached, resolved)
    /// into one pair of buffers: a skill read where found keeps neither, so a nested
    /// layout's skills cost no paths of their own here.
    static BELOW: Cell<(PathBuf, PathBuf)> = Cell::new((PathBuf::new(), PathBuf::new()));
}

/// One step of a folder's place in the level walk's order. Below a folder, the folders its
/// listing names come first (in name order), then the folders its links lead to (in the
/// links' name order): the variants' order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Child(OsString),
    Link(OsString),
}

/// A link found below a folder, not yet followed: ordered as the level walk follows links
/// (by its folder's depth, then the folder's place, then its name).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    depth: usize,
    place: Vec<Step>,
    name: OsString,
    /// The link's path as reached.
    link: PathBuf,
    /// Its folder's resolved path (a link that leads above it is a loop).
    parent: PathBuf,
}

/// Where one part of the walk began: the root, or the path of a followed link, and that
/// folder's place.
struct Origin {
    dir: PathBuf,
    place: Vec<Step>,
}

impl Origin {
    /// The place of `dir`, a folder at or below this origin as reached.
    fn place_of(&self, dir: &Path) -> Vec<Step> {
        let below = dir.strip_prefix(&self.dir).unwrap_or(Path::new(""));
        let mut place = self.place.clone();
        place.extend(
            below
                .components()
                .map(|c| Step::Child(c.as_os_str().to_owned())),
        );
        place
    }
}

/// What the walking threads gather.
#[derive(Default)]
struct Gathered {
    walked: Walked,
    links: Vec<Pending>,
}

struct Walker<'w, 'r> {
    options: &'w DiscoveryOptions,
    at: &'w Base<'r>,
    gathered: Mutex<Gathered>,
}

impl Walker<'_, '_> {
    fn gathered(&self) -> std::sync::MutexGuard<'_, Gathered> {
        self.gathered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Visits `dir` (resolved: `resolved`) at `depth`, and spawns the visit of each folder
    /// below it to walk; the folders of an expected last level are kept unvisited, and the
    /// links below it kept to follow later.
    fn walk_from<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        origin: &'s Origin,
        (dir, resolved): (Cow<'_, Path>, Cow<'_, Path>),
        depth: usize,
        near: Option<Near<'_>>,
    ) {
        let v = visit(dir, resolved, depth, self.options, (self.at, near));
        if v.candidate.is_some() || v.problem.is_some() || !v.links.is_empty() {
            let mut gathered = self.gathered();
            gathered.walked.candidates.extend(v.candidate);
            gathered.walked.problems.extend(v.problem);
            if let (Some((dir, resolved)), false) = (&v.folder, v.links.is_empty()) {
                let place = origin.place_of(dir);
                gathered
                    .links
                    .extend(v.links.into_iter().map(|link| Pending {
                        depth,
                        place: place.clone(),
                        name: link.file_name().map(OsString::from).unwrap_or_default(),
                        link,
                        parent: resolved.clone(),
                    }));
            }
        }
        let Some((dir, resolved)) = v.folder else {
            return;
        };
        if v.subdirs.is_empty() {
            return;
        }
        if self.options.skill_file_expected(depth + 1) {
            self.gathered()
                .walked
                .expected
                .push_children(dir, resolved, v.subdirs);
            return;
        }
        // A few folders a job: a job each cost more to hand out than a skill read where
        // found, and enough jobs remain to keep every thread busy.
        const BATCH: usize = 8;
        // The folders below are listed, and their skill files read, by their names below
        // this folder's handle (see `near`); the root's is the walk's own.
        let held = if depth == 0 {
            self.at.root_handle()
        } else {
            v.held
        };
        let parent = Arc::new((dir, resolved, held));
        let mut names = v.subdirs.into_iter().peekable();
        while names.peek().is_some() {
            let batch: Vec<OsString> = names.by_ref().take(BATCH).collect();
            let parent = Arc::clone(&parent);
            scope.spawn(move |scope| {
                let (mut dir, mut resolved) = BELOW.with(Cell::take);
                for name in &batch {
                    joined_into(&mut dir, &parent.0, name);
                    joined_into(&mut resolved, &parent.1, name);
                    let below = (
                        Cow::Borrowed(dir.as_path()),
                        Cow::Borrowed(resolved.as_path()),
                    );
                    let near = parent.2.as_ref().map(|above| Near { above, name });
                    self.walk_from(scope, origin, below, depth + 1, near);
                }
                BELOW.with(|spare| spare.set((dir, resolved)));
            });
        }
    }
}

/// Walks from `root` (resolved: `canonical_root`) as [`walk_reading`](super::walk_reading)
/// does with a reader in `at`.
pub(super) fn walk(
    (root, canonical_root): (&Path, PathBuf),
    options: &DiscoveryOptions,
    at: &Base<'_>,
) -> Walked {
    let walker = Walker {
        options,
        at,
        gathered: Mutex::new(Gathered::default()),
    };
    let origin = Origin {
        dir: root.to_path_buf(),
        place: Vec::new(),
    };
    let start = (Cow::Borrowed(root), Cow::Borrowed(canonical_root.as_path()));
    rayon::scope(|scope| walker.walk_from(scope, &origin, start, 0, None));
    let mut links = Walk {
        root: canonical_root,
        entered: Vec::new(),
        options,
    };
    let mut queue: BinaryHeap<Reverse<Pending>> = std::mem::take(&mut walker.gathered().links)
        .into_iter()
        .map(Reverse)
        .collect();
    // A depth's links at a time: each is followed (or not) in order, on this thread, then
    // the folders they lead to are walked together, as the level walk visits a level.
    while let Some(Reverse(first)) = queue.pop() {
        let depth = first.depth + 1;
        let mut this_depth = vec![first];
        while queue.peek().is_some_and(|Reverse(p)| p.depth + 1 == depth) {
            this_depth.extend(queue.pop().map(|Reverse(p)| p));
        }
        let mut origins = Vec::new();
        for pending in this_depth {
            let Some(target) = links.follow(&pending.link, &pending.parent) else {
                continue;
            };
            tracing::debug!(link = %pending.link.display(), target = %target.display(), "following link");
            if options.skill_file_expected(depth) {
                walker.gathered().walked.expected.runs.push(Run::Whole {
                    dir: pending.link,
                    resolved: target,
                });
                continue;
            }
            let mut place = pending.place;
            place.push(Step::Link(pending.name));
            let origin = Origin {
                dir: pending.link.clone(),
                place,
            };
            origins.push((origin, (pending.link, target)));
        }
        let walker = &walker;
        rayon::scope(|scope| {
            for (origin, (link, target)) in &origins {
                let start = (
                    Cow::Borrowed(link.as_path()),
                    Cow::Borrowed(target.as_path()),
                );
                scope.spawn(move |scope| walker.walk_from(scope, origin, start, depth, None));
            }
        });
        queue.extend(
            std::mem::take(&mut walker.gathered().links)
                .into_iter()
                .map(Reverse),
        );
    }
    let Gathered { mut walked, .. } = walker
        .gathered
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    // In path order (threads finish in any order), so that two runs log them alike.
    walked
        .problems
        .sort_by(|a, b| a.0.as_os_str().cmp(b.0.as_os_str()));
    walked.links_followed = !links.entered.is_empty();
    walked
}
