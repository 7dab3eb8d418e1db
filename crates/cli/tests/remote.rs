//! A URL root end to end: skills published as a well-known index by `skillctl publish`,
//! served by a plain static server on loopback, read by real
//! `skillctl` processes with their own cache folder (`XDG_CACHE_HOME`): listed, loaded and
//! read in a session, named by URL; a tampered artifact refused; a new version picked up
//! by polling (synchronised on the `skills_changed` event); a new process started from the
//! cache with the server stopped; a cache file altered on disk refused; and a lock that
//! refuses a changed digest and an unnamed skill until `lock --update`.

mod common;
#[path = "../../remote/tests/support/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, skillctl, Run, Session};
use serde_json::{json, Value};
use serve::{skill_md, Server};

struct Fleet {
    tmp: tempfile::TempDir,
}

impl Fleet {
    /// A site, a cache and a project (holding `.git`, where `skills.lock` goes).
    fn new() -> Fleet {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("project/.git")).unwrap();
        Fleet { tmp }
    }
    fn site(&self) -> PathBuf {
        self.tmp.path().join("site")
    }
    fn cache(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }
    fn project(&self) -> PathBuf {
        self.tmp.path().join("project")
    }
    /// `skillctl ARGS --no-defaults --root enterprise=URL`, in the project, with the cache.
    fn cmd(&self, url: &str, args: &[&str]) -> Command {
        let mut command = skillctl();
        command
            .args(args)
            .arg("--no-defaults")
            .arg("--root")
            .arg(format!("enterprise={url}"))
            .current_dir(self.project())
            .env("XDG_CACHE_HOME", self.cache());
        command
    }
    fn list(&self, url: &str) -> Run {
        run(&mut self.cmd(url, &["list", "--format", "json"]))
    }
    /// `list --format json`, exit 0; what a URL root refused is also logged on stderr.
    fn listed(&self, url: &str) -> Value {
        parsed(&self.list(url))
    }
    /// Every cached file named `name` below the cache's unpacked skills.
    fn cached(&self, name: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.cache()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.ends_with(name) && path.to_string_lossy().contains("/skills/") {
                    found.push(path);
                }
            }
        }
        found
    }
}

/// Publishes `skills` (each a name and its files) with `skillctl publish`: their folders
/// are written beside `site` (replacing the last ones), then published into `site`.
/// Returns each skill's artifact, in the order given: `NAME/SKILL.md` for a lone
/// `SKILL.md`, `NAME.tar.gz` for any other.
fn publish(site: &Path, skills: &[(&str, &[(&str, &str)])]) -> Vec<PathBuf> {
    let root = site.parent().unwrap().join("skills");
    let _ = std::fs::remove_dir_all(&root);
    for (name, files) in skills {
        for (path, text) in *files {
            let file = root.join(name).join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
    }
    let published = run(skillctl().arg("publish").arg(&root).arg("--out").arg(site));
    assert_eq!(published.code, Some(0), "{published:#?}");
    let folder = serve::well_known(site);
    skills
        .iter()
        .map(|(name, files)| match files {
            [("SKILL.md", _)] => folder.join(name).join("SKILL.md"),
            _ => folder.join(format!("{name}.tar.gz")),
        })
        .collect()
}

fn parsed(run: &Run) -> Value {
    assert_eq!(run.code, Some(0), "{run:#?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:#?}"))
}

fn names(listed: &Value) -> Vec<&str> {
    listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

fn messages(listed: &Value) -> String {
    listed["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}\n", d["message"]))
        .collect()
}

/// Three skills: a lone SKILL.md, and two archives with supporting files.
fn three(alpha_body: &str) -> (String, String, String) {
    (
        skill_md("alpha", "Alpha for tests.", alpha_body),
        skill_md(
            "beta",
            "Beta with references.",
            "# Beta\n\nSee references/REF.md.\n",
        ),
        skill_md("gamma", "Gamma with a script.", "# Gamma\n"),
    )
}

fn publish_three(site: &Path, alpha_body: &str) -> Vec<PathBuf> {
    let (a, b, g) = three(alpha_body);
    publish(
        site,
        &[
            ("alpha", &[("SKILL.md", &a)]),
            (
                "beta",
                &[("SKILL.md", &b), ("references/REF.md", "the reference\n")],
            ),
            (
                "gamma",
                &[("SKILL.md", &g), ("scripts/run.sh", "echo gamma\n")],
            ),
        ],
    )
}

#[test]
fn a_session_lists_loads_and_reads_the_skills_of_a_url_root() {
    let f = Fleet::new();
    publish_three(&f.site(), "# Alpha\n");
    let server = Server::start(&f.site());
    let url = server.url();
    // A personal folder's alpha is shadowed by the enterprise URL's, as a folder's would be.
    let personal = f.tmp.path().join("personal/alpha");
    std::fs::create_dir_all(&personal).unwrap();
    std::fs::write(
        personal.join("SKILL.md"),
        skill_md("alpha", "Local alpha.", "# Local\n"),
    )
    .unwrap();
    let root = format!("personal={}", personal.parent().unwrap().display());
    let listed = parsed(&run(
        &mut f.cmd(&url, &["list", "--format", "json", "--root", &root])
    ));
    assert_eq!(names(&listed), ["alpha", "beta", "gamma"]);
    let alpha = &listed["skills"][0];
    assert_eq!(alpha["layer"], "enterprise");
    assert_eq!(
        alpha["path"],
        format!("{url}/.well-known/agent-skills/alpha/SKILL.md")
    );
    assert_eq!(alpha["origin"], format!("url:{url}"));
    assert_eq!(
        listed["shadowed"][0]["shadowed_by"], "enterprise:alpha",
        "{listed}"
    );

    let cache = f.cache();
    let root = format!("enterprise={url}");
    let mut s = Session::start_with(
        &f.project(),
        &["--root", &root],
        &[("XDG_CACHE_HOME", cache.as_os_str())],
    );
    let all = s.ok("skills_list", json!({}));
    assert!(all.to_string().contains("Beta with references."), "{all}");
    let receipt = s.ok("skills_load", json!({"skills": ["beta"]}));
    let entry = &receipt["active_skills"][0];
    assert_eq!(
        entry["location"],
        format!("{url}/.well-known/agent-skills/beta/SKILL.md")
    );
    assert_eq!(entry["origin"], format!("url:{url}"));
    assert!(entry["body"]
        .as_str()
        .unwrap()
        .contains("See references/REF.md."));
    let read = s.ok("skills_read", json!({"path": "references/REF.md"}));
    assert!(read.to_string().contains("the reference"), "{read}");
    // A URL root's script never runs: untrusted, it is refused naming the origin and how
    // to trust it (trusted, it would be refused as having no folder of its own on disk).
    s.ok("skills_load", json!({"skills": ["gamma"]}));
    let (code, message) = s.err(
        "skills_run_script",
        json!({"skill": "gamma", "path": "scripts/run.sh"}),
    );
    assert_eq!(code, "SKILL_UNTRUSTED", "{message}");
    assert!(message.contains(&format!("--trust url:{url}")), "{message}");
    let listed = s.ok("skills_list", json!({}));
    assert_eq!(
        listed["skills"][0]["origin"],
        format!("url:{url}"),
        "{listed}"
    );
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn a_tampered_artifact_is_refused() {
    let f = Fleet::new();
    let artifacts = publish_three(&f.site(), "# Alpha\n");
    // beta's archive replaced after the index was written: its digest no longer holds.
    let (_, _, g) = three("");
    std::fs::write(
        &artifacts[1],
        serve::tar_gz(&[("SKILL.md", &g.replace("gamma", "beta"))]),
    )
    .unwrap();
    let server = Server::start(&f.site());
    let listed = f.listed(&server.url());
    assert_eq!(names(&listed), ["alpha", "gamma"]);
    let why = messages(&listed);
    assert!(
        why.contains("digest mismatch") && why.contains("beta.tar.gz"),
        "{why}"
    );
}

#[test]
fn a_new_version_published_is_picked_up_by_polling() {
    let f = Fleet::new();
    publish_three(&f.site(), "# Alpha\n");
    let server = Server::start(&f.site());
    let cache = f.cache();
    let root = format!("enterprise={}", server.url());
    let mut s = Session::start_with(
        &f.project(),
        &["--root", &root, "--poll-interval", "50ms", "--events"],
        &[("XDG_CACHE_HOME", cache.as_os_str())],
    );
    s.ok("skills_list", json!({}));
    // The description changes too: a source's change draws events for the records that
    // differ (a body-only edit draws none; see the notes of issue 40a).
    let (_, b, g) = three("");
    let a2 = skill_md(
        "alpha",
        "Alpha, second edition.",
        "# Alpha, second edition\n",
    );
    publish(
        &f.site(),
        &[
            ("alpha", &[("SKILL.md", &a2)]),
            (
                "beta",
                &[("SKILL.md", &b), ("references/REF.md", "the reference\n")],
            ),
            (
                "gamma",
                &[("SKILL.md", &g), ("scripts/run.sh", "echo gamma\n")],
            ),
        ],
    );
    let event = s.event("skills_changed");
    assert!(event.to_string().contains("alpha"), "{event}");
    let receipt = s.ok("skills_load", json!({"skills": ["alpha"]}));
    assert!(receipt.to_string().contains("second edition"), "{receipt}");
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn with_the_server_stopped_a_new_process_starts_from_the_cache_and_refuses_an_altered_file() {
    let f = Fleet::new();
    publish_three(&f.site(), "# Alpha\n");
    let server = Server::start(&f.site());
    let url = server.url();
    assert_eq!(names(&f.listed(&url)), ["alpha", "beta", "gamma"]);
    server.stop();

    let offline = f.list(&url);
    assert_eq!(offline.code, Some(0), "{offline:#?}");
    assert!(
        offline.stderr.contains("cannot be reached") && offline.stderr.contains("from the cache"),
        "{offline:#?}"
    );
    assert_eq!(offline.stderr.lines().count(), 1, "said once: {offline:#?}");
    assert!(
        offline.stderr.contains(&f.cache().display().to_string()),
        "names the cache: {offline:#?}"
    );
    let listed: Value = serde_json::from_str(&offline.stdout).unwrap();
    assert_eq!(names(&listed), ["alpha", "beta", "gamma"]);

    // A cached file altered on disk (same size, so the folder looks whole) is refused.
    let script = &f.cached("run.sh")[0];
    std::fs::write(script, "rm -rf ~/\n").unwrap();
    let skill = f
        .cached("SKILL.md")
        .into_iter()
        .find(|p| std::fs::read_to_string(p).unwrap().contains("name: alpha"))
        .unwrap();
    let text = std::fs::read_to_string(&skill).unwrap();
    std::fs::write(&skill, text.replace("Alpha for tests.", "Alpha for TESTS.")).unwrap();
    let listed = f.listed(&url);
    assert_eq!(names(&listed), ["beta", "gamma"]);
    let why = messages(&listed);
    assert!(
        why.contains("altered") && why.contains("digest mismatch"),
        "{why}"
    );
}

#[test]
fn a_lock_refuses_a_changed_digest_and_an_unnamed_skill_until_update() {
    let f = Fleet::new();
    let (a, b, _) = three("# Alpha\n");
    publish(
        &f.site(),
        &[
            ("alpha", &[("SKILL.md", &a)]),
            (
                "beta",
                &[("SKILL.md", &b), ("references/REF.md", "the reference\n")],
            ),
        ],
    );
    let server = Server::start(&f.site());
    let url = server.url();
    let wrote = run(&mut f.cmd(&url, &["lock"]));
    assert!(wrote.ok().contains("2 remote skills pinned"), "{wrote:#?}");
    let lock: Value =
        serde_json::from_slice(&std::fs::read(f.project().join("skills.lock")).unwrap()).unwrap();
    assert_eq!(lock["remote"][0]["origin"], format!("url:{url}"));
    let pinned = lock["remote"][0]["digest"].as_str().unwrap().to_owned();

    // alpha changes and gamma appears: neither loads.
    publish_three(&f.site(), "# Alpha, unreviewed\n");
    let listed = f.listed(&url);
    assert_eq!(names(&listed), ["beta"]);
    let why = messages(&listed);
    let (a2, _, _) = three("# Alpha, unreviewed\n");
    let published = format!("sha256:{}", serve_hex(&a2));
    assert!(
        why.contains(&pinned) && why.contains(&published),
        "both digests: {why}"
    );
    assert!(
        why.contains("\\\"gamma\\\"") && why.contains("is not in the lock"),
        "{why}"
    );

    let check = run(&mut f.cmd(&url, &["lock"]));
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert!(
        check.stdout.contains("+ gamma") && check.stdout.contains("- alpha"),
        "{check:#?}"
    );
    run(&mut f.cmd(&url, &["lock", "--update"])).ok();
    assert_eq!(names(&f.listed(&url)), ["alpha", "beta", "gamma"]);
}

/// The hex of a text's SHA-256.
fn serve_hex(text: &str) -> String {
    skills_remote::Digest::of(text.as_bytes()).hex()
}

#[test]
fn a_plugin_registered_over_the_wire_may_be_a_url_root_on_https_or_loopback() {
    let f = Fleet::new();
    publish_three(&f.site(), "# Alpha\n");
    let server = Server::start(&f.site());
    let cache = f.cache();
    let mut s = Session::start_with(&f.project(), &[], &[("XDG_CACHE_HOME", cache.as_os_str())]);
    let out = s.ok(
        "register_plugin",
        json!({"id": "fleet", "root": server.url()}),
    );
    assert_eq!(out["skills"], 3, "{out}");
    assert_eq!(out["root"], server.url());
    let receipt = s.ok("skills_load", json!({"skills": ["fleet:gamma"]}));
    let location = format!("{}/.well-known/agent-skills/gamma/SKILL.md", server.url());
    assert_eq!(
        receipt["active_skills"][0]["location"], location,
        "{receipt}"
    );
    // http:// only on loopback; an https:// origin that cannot be reached and has no cache.
    for (root, why) in [
        ("http://example.com", "only on a loopback address"),
        ("https://127.0.0.1:1", "nothing is cached"),
    ] {
        let (code, message) = s.err("register_plugin", json!({"id": "other", "root": root}));
        assert_eq!(code, "SKILL_REMOTE_ROOT_FAILED", "{root}: {message}");
        assert!(message.contains(why), "{root}: {message}");
    }
    let (status, _) = s.finish();
    assert!(status.success());
}
