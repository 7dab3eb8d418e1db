//! A URL root against a static server on loopback: skills listed and read after their
//! digests are verified, a tampered artifact refused (a last good version kept), a new
//! version picked up by a poll (synchronised on the source's notifier), a start from the
//! cache when the server is gone, an altered cache file refused, and a lock's pins.

mod support;

use std::sync::mpsc;
use std::time::Duration;

use skills_remote::{Lock, RemotePin, RemoteSource, LOCK_VERSION};
use skills_storage::SkillSource;
use support::serve::{publish, skill_md, Server};

const DEADLINE: Duration = Duration::from_secs(20);

struct Site {
    tmp: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        Site {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn site(&self) -> std::path::PathBuf {
        self.tmp.path().join("site")
    }
    fn cache(&self) -> std::path::PathBuf {
        self.tmp.path().join("cache")
    }
    fn open(
        &self,
        server: &Server,
    ) -> Result<std::sync::Arc<RemoteSource>, skills_remote::RemoteError> {
        RemoteSource::builder(&server.url())?
            .cache_dir(self.cache())
            .poll_interval(None)
            .open()
    }
}

fn read(source: &RemoteSource, path: &str) -> String {
    String::from_utf8(source.read(path, 1 << 20).unwrap()).unwrap()
}

#[test]
fn a_url_root_serves_verified_skills_and_polls_for_new_versions() {
    let s = Site::new();
    let alpha = skill_md("alpha", "Alpha.", "# Alpha\n");
    let beta = skill_md("beta", "Beta.", "# Beta\n");
    publish(
        &s.site(),
        &[
            ("alpha", &[("SKILL.md", &alpha)]),
            (
                "beta",
                &[("SKILL.md", &beta), ("references/REF.md", "ref\n")],
            ),
        ],
    );
    let server = Server::start(&s.site());
    let source = s.open(&server).unwrap();
    assert_eq!(source.offline(), None);
    assert_eq!(source.skill_dirs(), ["alpha", "beta"]);
    assert_eq!(read(&source, "beta/references/REF.md"), "ref\n");
    assert_eq!(
        source.files("beta"),
        [
            ("SKILL.md".to_owned(), beta.len() as u64),
            ("references/REF.md".to_owned(), 4)
        ]
    );
    assert!(source.is_dir("beta/references"));
    assert_eq!(
        source.location().unwrap(),
        format!("{}/.well-known/agent-skills", server.url())
    );
    assert_eq!(
        source.remote_origin().unwrap().to_string(),
        format!("url:{}", server.url())
    );

    // A new version, picked up by a poll: the change callback says so.
    let (tx, changed) = mpsc::channel();
    source.set_notifier(skills_storage::SourceNotifier::new(move || {
        let _ = tx.send(());
    }));
    let alpha2 = skill_md("alpha", "Alpha, second.", "# Alpha 2\n");
    publish(
        &s.site(),
        &[
            ("alpha", &[("SKILL.md", &alpha2)]),
            (
                "beta",
                &[("SKILL.md", &beta), ("references/REF.md", "ref\n")],
            ),
        ],
    );
    source.poll_now();
    changed
        .recv_timeout(DEADLINE)
        .expect("the poll reports the change");
    assert_eq!(read(&source, "alpha/SKILL.md"), alpha2);

    // Unchanged: the server answers 304, nothing changes.
    assert!(!source.refresh().unwrap());

    // A tampered artifact (bytes not the digest): refused, the last good version kept.
    let artifacts = publish(
        &s.site(),
        &[
            (
                "alpha",
                &[("SKILL.md", &skill_md("alpha", "Third.", "# 3\n"))],
            ),
            (
                "beta",
                &[("SKILL.md", &beta), ("references/REF.md", "ref\n")],
            ),
        ],
    );
    std::fs::write(&artifacts[0], skill_md("alpha", "Evil.", "# Evil\n")).unwrap();
    assert!(
        !source.refresh().unwrap(),
        "a refused version changes nothing"
    );
    assert_eq!(read(&source, "alpha/SKILL.md"), alpha2);

    // With the server gone, a new source starts from the cache, and says so.
    drop(source);
    server.stop();
    let port_gone = Server::start(&s.tmp.path().join("nothing"));
    let url = port_gone.url();
    port_gone.stop();
    assert!(
        RemoteSource::builder(&url)
            .unwrap()
            .cache_dir(s.cache())
            .open()
            .is_err(),
        "no cache for that URL"
    );
}

#[test]
fn a_start_from_the_cache_verifies_every_file_again() {
    let s = Site::new();
    let alpha = skill_md("alpha", "Alpha.", "# Alpha\n");
    let beta = skill_md("beta", "Beta.", "# Beta\n");
    publish(
        &s.site(),
        &[
            ("alpha", &[("SKILL.md", &alpha)]),
            (
                "beta",
                &[("SKILL.md", &beta), ("scripts/run.sh", "echo hi\n")],
            ),
        ],
    );
    let server = Server::start(&s.site());
    let port = server.port();
    drop(s.open(&server).unwrap());
    server.stop();

    let offline = RemoteSource::builder(&format!("http://127.0.0.1:{port}"))
        .unwrap()
        .cache_dir(s.cache())
        .poll_interval(None)
        .open()
        .unwrap();
    let why = offline.offline().expect("offline");
    assert!(why.contains("cannot fetch"), "{why}");
    assert_eq!(offline.skill_dirs(), ["alpha", "beta"]);
    assert_eq!(read(&offline, "beta/scripts/run.sh"), "echo hi\n");

    // A file altered in the cache (same size) is refused at its read.
    let folder = offline.cache_dir().join("skills");
    let script = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("scripts/run.sh"))
        .find(|p| p.exists())
        .unwrap();
    std::fs::write(&script, "rm -rf /\n").unwrap();
    let e = offline.read("beta/scripts/run.sh", 1 << 20).unwrap_err();
    assert!(
        e.to_string().contains("altered") && e.to_string().contains("digest mismatch"),
        "{e}"
    );

    // An artifact altered in the cache is refused at the next start from it.
    let artifacts = offline.cache_dir().join("artifacts");
    for entry in std::fs::read_dir(&artifacts).unwrap().flatten() {
        let mut bytes = std::fs::read(entry.path()).unwrap();
        bytes[0] ^= 1;
        std::fs::write(entry.path(), bytes).unwrap();
    }
    drop(offline);
    let again = RemoteSource::builder(&format!("http://127.0.0.1:{port}"))
        .unwrap()
        .cache_dir(s.cache())
        .poll_interval(None)
        .open()
        .unwrap();
    let refused = again.refused();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].1.contains("digest mismatch"), "{refused:?}");
    let e = again.read("alpha/SKILL.md", 1 << 20).unwrap_err();
    assert!(e.to_string().contains("digest mismatch"), "{e}");
}

#[test]
fn a_lock_refuses_a_changed_digest_and_a_skill_it_does_not_name() {
    let s = Site::new();
    let alpha = skill_md("alpha", "Alpha.", "# Alpha\n");
    let beta = skill_md("beta", "Beta.", "# Beta\n");
    publish(
        &s.site(),
        &[
            ("alpha", &[("SKILL.md", &alpha)]),
            ("beta", &[("SKILL.md", &beta)]),
        ],
    );
    let server = Server::start(&s.site());
    let first = s.open(&server).unwrap();
    let url = first.url().clone();
    let old = skills_remote::Digest::of(b"an older alpha");
    let lock = Lock {
        version: LOCK_VERSION,
        remote: vec![RemotePin {
            name: "alpha".into(),
            origin: format!("url:{}", first.origin()),
            index: url.to_string(),
            digest: old.to_string(),
        }],
        local: Vec::new(),
    };
    let path = s.tmp.path().join("skills.lock");
    lock.write(&path).unwrap();
    let read_back = Lock::read(&path).unwrap().unwrap();
    assert_eq!(read_back, lock);
    let pinned = RemoteSource::builder(&server.url())
        .unwrap()
        .cache_dir(s.cache())
        .poll_interval(None)
        .pins(read_back.pins_for(&url, &path))
        .open()
        .unwrap();
    let refused = pinned.refused();
    let published = skills_remote::Digest::of(alpha.as_bytes()).to_string();
    assert!(
        refused[0].1.contains(&old.to_string()) && refused[0].1.contains(&published),
        "{refused:?}"
    );
    assert!(refused[1].1.contains("is not in the lock"), "{refused:?}");
    assert!(pinned
        .read("beta/SKILL.md", 1 << 20)
        .unwrap_err()
        .to_string()
        .contains("lock --update"));
}

#[test]
fn old_and_unknown_index_formats_are_refused_at_open() {
    let s = Site::new();
    let folder = support::serve::well_known(&s.site());
    std::fs::create_dir_all(&folder).unwrap();
    let server = Server::start(&s.site());
    for (index, code) in [
        (
            r#"{"skills":[{"name":"a","description":"A.","files":["SKILL.md"]}]}"#,
            "REMOTE_SCHEMA_MISSING",
        ),
        (
            r#"{"$schema":"https://schemas.agentskills.io/discovery/9.0.0/schema.json","skills":[]}"#,
            "REMOTE_SCHEMA_UNKNOWN",
        ),
    ] {
        std::fs::write(folder.join("index.json"), index).unwrap();
        assert_eq!(s.open(&server).unwrap_err().code(), code);
    }
}
