//! `scaffold` against a hostile path: it writes and removes only the folder it made.

/// Regression: `new` made its folder through a link in its path, then wrote and (on
/// failure) removed by whole path: with the link swapped between, a write failed on
/// another folder's file and the cleanup deleted that other folder. Attempts are counted,
/// not timed.
#[cfg(unix)]
#[test]
fn scaffold_never_removes_a_folder_it_did_not_make() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    let victim = b.join("precious");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("SKILL.md"), "not scaffold's\n").unwrap();
    std::fs::write(victim.join("data.txt"), "someone's work\n").unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, link, a, b) = (Arc::clone(&stop), link.clone(), a.clone(), b.clone());
        let next = link.with_file_name("link.tmp");
        std::thread::spawn(move || {
            let mut to_b = true;
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&next);
                std::os::unix::fs::symlink(if to_b { &b } else { &a }, &next).unwrap();
                std::fs::rename(&next, &link).unwrap();
                to_b = !to_b;
            }
        })
    };
    for _ in 0..2_000 {
        let _ =
            skills_storage::scaffold(&link, "precious", skills_storage::ScaffoldParts::default());
        let _ = std::fs::remove_dir_all(a.join("precious"));
        if !victim.join("data.txt").exists() {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(
        victim.join("data.txt").is_file(),
        "another folder was removed"
    );
    assert!(
        victim.join("SKILL.md").is_file(),
        "another folder's file was removed"
    );
}
