//! Readers against a writer: while one thread edits files and calls `reload_now()` in a
//! loop, reader threads take snapshots and resolve names without pause. Every snapshot a
//! reader sees must be internally consistent, and generations never go backwards.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use skills_index::{ChangeKind, SkillIndex, Snapshot};
use skills_model::Layer;

const ITERATIONS: usize = 200;
const SKILLS: usize = 12;

fn write_skill(root: &Path, dir: &str, name: &str, description: &str) {
    let folder = root.join(dir);
    fs::create_dir_all(&folder).unwrap();
    fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description} Use when testing.\n---\nBody.\n"),
    )
    .unwrap();
}

/// Checks everything a snapshot promises about itself; returns how many names it resolved.
fn check(snap: &Snapshot) -> usize {
    assert_eq!(snap.len(), snap.skills().count());
    assert_eq!(snap.is_empty(), snap.skills().next().is_none());
    assert_eq!(snap.records().len(), snap.len() + snap.shadowed().len());
    let mut previous: Option<&str> = None;
    for r in snap.skills() {
        let name = r.name.as_str();
        // Sorted, one per name.
        assert!(
            previous.is_none_or(|p| p < name),
            "{previous:?} then {name}"
        );
        previous = Some(name);
        let got = snap.get(name).expect("a resolved name resolves");
        assert!(Arc::ptr_eq(got, r));
        assert_eq!(got.name.as_str(), name);
        let by_qualified = snap.get(&r.qualified_name()).expect("qualified name");
        assert_eq!(by_qualified.name.as_str(), name);
    }
    for s in snap.shadowed() {
        let winner = snap
            .get(&s.shadowed_by)
            .expect("the shadowing skill is indexed");
        assert_eq!(winner.name, s.record.name);
        assert!(Arc::ptr_eq(
            snap.get(s.record.name.as_str()).unwrap(),
            winner
        ));
    }
    // Names the writer uses resolve to records of that name, or to nothing.
    for i in 0..SKILLS {
        let name = format!("skill-{i}");
        if let Some(r) = snap.get(&name) {
            assert_eq!(r.name.as_str(), name);
        }
    }
    snap.len()
}

#[test]
fn readers_see_consistent_snapshots_while_a_writer_reloads() {
    let tmp = tempfile::tempdir().unwrap();
    let (personal, project) = (tmp.path().join("personal"), tmp.path().join("project"));
    fs::create_dir_all(&personal).unwrap();
    for i in 0..SKILLS {
        write_skill(
            &project,
            &format!("skill-{i}"),
            &format!("skill-{i}"),
            "Start.",
        );
    }
    let index = SkillIndex::builder()
        .root(Layer::Personal, &personal)
        .root(Layer::Project, &project)
        .build()
        .unwrap();
    let events = index.subscribe();
    let index = Arc::new(index);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(3));
    let reads = Arc::new(AtomicUsize::new(0));

    let readers: Vec<_> = (0..2)
        .map(|reader| {
            let (index, stop, start, reads) = (
                Arc::clone(&index),
                Arc::clone(&stop),
                Arc::clone(&start),
                Arc::clone(&reads),
            );
            thread::Builder::new()
                .name(format!("reader-{reader}"))
                .spawn(move || {
                    start.wait();
                    let mut last = 0;
                    let mut seen = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        let snap = index.snapshot();
                        assert!(
                            snap.generation() >= last,
                            "generation went from {last} to {}",
                            snap.generation()
                        );
                        last = snap.generation();
                        check(&snap);
                        // Loading may fail (the file may be gone already), but never panics,
                        // and what it returns is the skill asked for.
                        if let Ok(skill) = index.load("skill-0") {
                            assert_eq!(skill.record.name.as_str(), "skill-0");
                        }
                        seen += 1;
                    }
                    reads.fetch_add(seen, Ordering::Relaxed);
                    last
                })
                .unwrap()
        })
        .collect();

    start.wait();
    let began = Instant::now();
    let mut last_generation = index.snapshot().generation();
    for i in 0..ITERATIONS {
        let k = i % SKILLS;
        match i % 4 {
            // Edit a description.
            0 => write_skill(
                &project,
                &format!("skill-{k}"),
                &format!("skill-{k}"),
                &format!("Edit {i}."),
            ),
            // Shadow a project skill from the personal layer, or stop shadowing it.
            1 => {
                let dir = personal.join(format!("skill-{k}"));
                if dir.exists() {
                    fs::remove_dir_all(dir).unwrap();
                } else {
                    write_skill(
                        &personal,
                        &format!("skill-{k}"),
                        &format!("skill-{k}"),
                        "Mine.",
                    );
                }
            }
            // Remove a skill, or bring it back.
            2 => {
                let dir = project.join(format!("skill-{k}"));
                if dir.exists() {
                    fs::remove_dir_all(dir).unwrap();
                } else {
                    write_skill(
                        &project,
                        &format!("skill-{k}"),
                        &format!("skill-{k}"),
                        "Back.",
                    );
                }
            }
            // Rename by frontmatter: the folder keeps its name, the skill changes its own.
            _ => write_skill(
                &project,
                &format!("skill-{k}"),
                &format!("renamed-{k}"),
                "Renamed.",
            ),
        }
        let snap = index.reload_now();
        assert!(snap.generation() > last_generation);
        last_generation = snap.generation();
        check(&snap);
    }
    let elapsed = began.elapsed();
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        let last = reader.join().expect("a reader panicked");
        assert!(last <= last_generation);
    }
    assert!(reads.load(Ordering::Relaxed) > 0, "the readers never ran");
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");

    // Events arrive in publication order, and the shadowing ones come in pairs.
    let events: Vec<_> = events.try_iter().collect();
    assert!(events
        .windows(2)
        .all(|w| w[0].generation <= w[1].generation));
    let shadowed = events
        .iter()
        .filter(|e| e.event == ChangeKind::Shadowed)
        .count();
    let unshadowed = events
        .iter()
        .filter(|e| e.event == ChangeKind::Unshadowed)
        .count();
    assert!(shadowed > 0);
    assert!(unshadowed > 0);
}

/// Concurrent loads of one skill read the same file alike; and a load reads the file as it
/// is, not a copy kept from an earlier load of the same generation (one was kept until
/// it served a version rewritten since to every later reader).
#[test]
fn concurrent_loads_agree_and_a_later_load_reads_the_file_as_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    write_skill(&root, "alpha", "alpha", "Alpha.");
    let index = Arc::new(
        SkillIndex::builder()
            .root(Layer::Project, &root)
            .build()
            .unwrap(),
    );
    let start = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (index, start) = (Arc::clone(&index), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                index.load("alpha").unwrap()
            })
        })
        .collect();
    let loaded: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let again = index.load("alpha").unwrap();
    for skill in &loaded {
        assert_eq!(**skill, *again);
    }
    let generation = index.snapshot().generation();
    write_skill(&root, "alpha", "alpha", "Alpha, rewritten.");
    let rewritten = index.load("alpha").unwrap();
    assert_eq!(
        index.snapshot().generation(),
        generation,
        "no reload between"
    );
    assert!(
        rewritten.record.description.contains("rewritten"),
        "{}",
        rewritten.record.description
    );
}

/// A host that calls the index from a worker of its own rayon pool, while another job of
/// that pool takes the index's writer lock (`roots()`), gets its answer: the index's
/// parallel work is not waited on from the host's worker, which would run the queued job
/// under the lock its caller holds. One worker makes the schedule certain: before the
/// fix, registering, unregistering and reloading here never returned. The channel's bound
/// only turns such a hang into a failure; nothing is timed. The search index's builds
/// (first use, and following each publication under the lock) go the same way.
#[test]
fn a_host_calling_from_its_rayon_pool_never_deadlocks() {
    let tmp = tempfile::tempdir().unwrap();
    let (project, plugin) = (tmp.path().join("project"), tmp.path().join("plugin"));
    write_skill(&project, "deploy", "deploy", "Deploys.");
    write_skill(&plugin, "lint", "lint", "Lints.");
    let index = Arc::new(
        SkillIndex::builder()
            .root(Layer::Project, &project)
            .build()
            .unwrap(),
    );
    let (done, finished) = std::sync::mpsc::channel();
    let ix = Arc::clone(&index);
    thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| {
            // Searched first, so every publication below also follows the search index.
            let calls: [&(dyn Fn() + Sync); 4] = [
                &|| drop(ix.snapshot().search_index()),
                &|| drop(ix.register_plugin("acme", &plugin).unwrap()),
                &|| drop(ix.unregister_plugin("acme").unwrap()),
                &|| drop(ix.reload_now()),
            ];
            for call in calls {
                rayon::join(call, || ix.roots().len());
            }
        });
        done.send(()).unwrap();
    });
    assert!(
        finished.recv_timeout(Duration::from_secs(300)).is_ok(),
        "the index deadlocked when called from a host's rayon worker"
    );
    let snapshot = index.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert!(
        snapshot.search_index_built(),
        "followed through every publication"
    );
}
