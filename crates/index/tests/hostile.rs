//! Hostile file systems: unreadable files and folders, FIFOs and devices posing as
//! `SKILL.md`, symbolic-link loops, a root with 50,000 entries, folders that vanish during a
//! scan. The index must report each through diagnostics or skip it, never panic or hang:
//! every build runs on its own thread, with a deadline.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use skills_index::{SkillIndex, SkillIndexBuilder, Snapshot};
use skills_model::{Layer, Rule};

/// How long one build may take before the test calls it a hang.
const DEADLINE: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread; fails if it panics or has not finished within [`DEADLINE`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let worker = thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what} did not finish within {DEADLINE:?}"),
        Err(RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker ended without a result"),
        },
    }
}

/// Builds `builder` within the deadline.
fn build(what: &str, builder: SkillIndexBuilder) -> SkillIndex {
    within(what, move || builder.build().expect("the index builds"))
}

fn project(root: &Path) -> SkillIndexBuilder {
    SkillIndex::builder().root(Layer::Project, root)
}

fn write_skill(root: &Path, name: &str) -> PathBuf {
    let folder = root.join(name);
    fs::create_dir_all(&folder).unwrap();
    let file = folder.join("SKILL.md");
    fs::write(
        &file,
        format!(
            "---\nname: {name}\ndescription: The {name} skill. Use when testing.\n---\nBody.\n"
        ),
    )
    .unwrap();
    file
}

fn rules_at(snap: &Snapshot, path: &Path) -> Vec<Rule> {
    snap.diagnostics()
        .iter()
        .filter(|d| d.path == path)
        .map(|d| d.diagnostic.rule)
        .collect()
}

/// Whether this process can read a file it has no permission for (root can).
fn permissions_are_bypassed(probe: &Path) -> bool {
    fs::read(probe).is_ok()
}

#[test]
fn unreadable_skill_file_and_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    write_skill(&root, "good");
    let locked = write_skill(&root, "locked");
    let closed = write_skill(&root, "closed");
    let closed_dir = closed.parent().unwrap().to_path_buf();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(&closed_dir, fs::Permissions::from_mode(0o000)).unwrap();
    let bypassed = permissions_are_bypassed(&locked);

    let index = build("a build over unreadable entries", project(&root));
    let snap = index.snapshot();
    assert!(snap.get("good").is_some());
    if !bypassed {
        assert!(snap.get("locked").is_none());
        assert_eq!(rules_at(&snap, &locked), [Rule::FileUnreadable]);
        // A folder that cannot be listed is skipped (and logged).
        assert!(snap.get("closed").is_none());
        assert_eq!(snap.len(), 1);
        let err = index.load("locked").unwrap_err();
        assert_eq!(err.code(), "SKILL_NOT_FOUND");
    }

    // Restore the permissions so the temporary folder can be removed.
    fs::set_permissions(&closed_dir, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o644)).unwrap();
    let snap = within("a reload", move || index.reload_now());
    assert_eq!(snap.len(), 3);
    assert!(snap.diagnostics().is_empty(), "{:?}", snap.diagnostics());
}

#[test]
fn a_skill_file_made_unreadable_while_watched_keeps_its_last_good_version() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let file = write_skill(&root, "alpha");
    let index = build("a watched build", project(&root).watch(true));
    let rx = index.subscribe();
    assert!(index.snapshot().get("alpha").is_some());

    fs::set_permissions(&file, fs::Permissions::from_mode(0o000)).unwrap();
    if permissions_are_bypassed(&file) {
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        return;
    }
    // Wait (on events, with a deadline) for the diagnostic.
    let end = Instant::now() + DEADLINE;
    let snap = loop {
        let snap = index.snapshot();
        if rules_at(&snap, &file).contains(&Rule::FileUnreadable) {
            break snap;
        }
        assert!(
            Instant::now() < end,
            "no file.unreadable diagnostic within {DEADLINE:?}"
        );
        let _ = rx.recv_timeout(Duration::from_millis(100));
    };
    assert!(snap.get("alpha").is_some(), "the last good version stays");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn a_fifo_named_skill_md() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    fs::create_dir_all(root.join("pipe")).unwrap();
    let fifo = root.join("pipe/SKILL.md");
    let good = write_skill(&root, "good");
    let resource_fifo = good.parent().unwrap().join("scripts/pipe");
    fs::create_dir_all(resource_fifo.parent().unwrap()).unwrap();
    fs::write(good.parent().unwrap().join("scripts/run.sh"), "echo").unwrap();
    let made = [&fifo, &resource_fifo].iter().all(|path| {
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    });
    if !made {
        return; // no mkfifo on this system: nothing to test
    }

    let index = build("a build over a FIFO", project(&root));
    let snap = index.snapshot();
    assert!(snap.get("pipe").is_none());
    assert_eq!(rules_at(&snap, &fifo), [Rule::FileNotRegular]);
    // A FIFO among a skill's files is not listed (and not opened).
    let files = within("loading next to a FIFO", move || {
        index.load("good").map(|s| s.files.clone())
    })
    .unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["scripts/run.sh"]);
}

#[test]
fn skill_md_links_to_a_device_a_huge_file_and_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    write_skill(&root, "good");
    let zero = root.join("zero/SKILL.md");
    fs::create_dir_all(zero.parent().unwrap()).unwrap();
    symlink("/dev/zero", &zero).unwrap();
    // A sparse 4 GiB file: the read must stop at the limit.
    let huge_target = tmp.path().join("huge.md");
    fs::File::create(&huge_target)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let huge = root.join("huge/SKILL.md");
    fs::create_dir_all(huge.parent().unwrap()).unwrap();
    symlink(&huge_target, &huge).unwrap();
    // A folder named SKILL.md.
    let folder = root.join("folder/SKILL.md");
    fs::create_dir_all(&folder).unwrap();
    // A dangling link.
    let dangling = root.join("dangling/SKILL.md");
    fs::create_dir_all(dangling.parent().unwrap()).unwrap();
    symlink(tmp.path().join("nowhere"), &dangling).unwrap();

    let index = build(
        "a build over links to a device and a huge file",
        project(&root),
    );
    let snap = index.snapshot();
    assert_eq!(snap.len(), 1, "only the good skill is indexed");
    if Path::new("/dev/zero").exists() {
        assert_eq!(rules_at(&snap, &zero), [Rule::FileNotRegular]);
    }
    assert_eq!(rules_at(&snap, &huge), [Rule::FileTooLarge]);
    assert_eq!(rules_at(&snap, &folder), [Rule::FileNotRegular]);
    assert_eq!(rules_at(&snap, &dangling), [Rule::FileMissing]);
}

#[test]
fn symlink_loops_in_a_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let good = write_skill(&root, "good");
    let skill_dir = good.parent().unwrap();
    // The root inside itself, a link to itself, a pair of links to each other.
    symlink(&root, root.join("loop")).unwrap();
    symlink(root.join("self"), root.join("self")).unwrap();
    symlink(root.join("ping"), root.join("pong")).unwrap();
    symlink(root.join("pong"), root.join("ping")).unwrap();
    // Loops inside a skill's own folders.
    fs::create_dir_all(skill_dir.join("references")).unwrap();
    symlink(skill_dir, skill_dir.join("references/up")).unwrap();
    symlink(&root, skill_dir.join("assets")).unwrap();
    // A SKILL.md that links to itself.
    let knot = root.join("knot/SKILL.md");
    fs::create_dir_all(knot.parent().unwrap()).unwrap();
    symlink(&knot, &knot).unwrap();

    for depth in [1, 6] {
        for watch in [false, true] {
            let what = format!("a build over link loops (depth {depth}, watch {watch})");
            let index = build(&what, project(&root).depth(depth).watch(watch));
            let snap = index.snapshot();
            assert_eq!(snap.len(), 1, "{what}");
            assert!(snap.get("good").is_some(), "{what}");
            assert_eq!(rules_at(&snap, &knot), [Rule::FileUnreadable], "{what}");
            let files = within(&what, move || index.load("good").map(|s| s.files.clone()));
            // `references/up` (a link to a folder inside a resource folder) is not followed.
            // `assets` itself is a link to the root: listed through it, but only one level of
            // it (the links inside are not followed again), so the listing ends.
            let files = files.unwrap();
            assert!(
                files.iter().all(|f| f.path.starts_with("assets/")),
                "{what}: {files:?}"
            );
            assert!(files.len() <= 2, "{what}: {files:?}");
        }
    }
}

#[test]
fn a_root_with_fifty_thousand_entries() {
    // In memory where there is a tmpfs: creating tens of thousands of inodes on a busy disk
    // can take seconds, and what is tested is the index, not the disk.
    let shm = Path::new("/dev/shm");
    let tmp = tempfile::Builder::new()
        .prefix("skills-index-50k")
        .tempdir_in(shm)
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let root = tmp.path().join("skills");
    fs::create_dir_all(&root).unwrap();
    // 25,000 empty files (hard links to one empty file, which is cheaper still) and 25,000
    // empty folders, each of which the scan lists.
    let empty = tmp.path().join("empty");
    fs::write(&empty, "").unwrap();
    for i in 0..25_000 {
        fs::hard_link(&empty, root.join(format!("file-{i:05}"))).unwrap();
        fs::create_dir(root.join(format!("dir-{i:05}"))).unwrap();
    }
    for i in 0..5 {
        write_skill(&root, &format!("skill-{i}"));
    }

    let started = Instant::now();
    let index = build("a build over 50,000 entries", project(&root));
    let took = started.elapsed();
    let snap = index.snapshot();
    assert_eq!(snap.len(), 5);
    assert!(snap.diagnostics().is_empty());
    assert!(took < DEADLINE, "{took:?}");
    let snap = within("a reload over 50,000 entries", move || index.reload_now());
    assert_eq!(snap.len(), 5);
}

#[test]
fn folders_that_vanish_during_a_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    const FOLDERS: usize = 200;
    for i in 0..FOLDERS {
        write_skill(&root, &format!("skill-{i}"));
        fs::create_dir_all(root.join(format!("skill-{i}/references"))).unwrap();
        fs::write(root.join(format!("skill-{i}/references/a.md")), "a").unwrap();
    }
    /// Stops the churn when the test ends, even by a failed assertion.
    struct StopOnDrop(Arc<AtomicBool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let churn = {
        let (root, stop) = (root.clone(), Arc::clone(&stop.0));
        thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("skill-{}", i % FOLDERS);
                let dir = root.join(&name);
                let _ = fs::remove_dir_all(&dir);
                // Never `create_dir_all`: once the test is over, the root must stay gone.
                if i % 3 != 0 && fs::create_dir(&dir).is_ok() {
                    let text =
                        format!("---\nname: {name}\ndescription: Back. Use when testing.\n---\n");
                    let _ = fs::write(dir.join("SKILL.md"), text);
                }
                i += 1;
            }
        })
    };

    let allowed = [
        Rule::FileMissing,
        Rule::FileUnreadable,
        Rule::FileNotRegular,
        Rule::FrontmatterMissing,
        Rule::FrontmatterUnclosed,
        Rule::NameRequired,
        Rule::DescriptionRequired,
    ];
    let deadline = Instant::now() + Duration::from_secs(60);
    for round in 0..10 {
        let index = build(
            &format!("build {round} while folders vanish"),
            project(&root),
        );
        let index = Arc::new(index);
        for _ in 0..3 {
            let idx = Arc::clone(&index);
            let snap = within("a reload while folders vanish", move || idx.reload_now());
            assert!(snap.len() <= FOLDERS);
            assert_eq!(snap.len(), snap.skills().count());
            for d in snap.diagnostics() {
                assert!(allowed.contains(&d.diagnostic.rule), "{d:?}");
            }
            for r in snap.skills() {
                // Loading a skill whose folder is gone fails cleanly.
                let _ = index.load(r.name.as_str());
            }
        }
        assert!(Instant::now() < deadline, "the churn test took too long");
    }
    drop(stop);
    churn.join().unwrap();
}
