//! `skillctl publish`: strict refusal, the index's shape, deterministic bytes, and the
//! catalogue page, read in a real browser (headless Chromium) from a loopback server.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use common::{run, skillctl, Fixture};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The schema a published index names.
const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Three skills: a lone SKILL.md, one with a script, a hidden folder and a link inside, and
/// one whose description holds markup.
fn skills(f: &Fixture) {
    f.skill("alpha", "", "# Alpha\n");
    f.skill("beta", "", "Run scripts/go.sh.\n");
    f.file("beta", "scripts/go.sh", "echo hi\n");
    f.file("beta", "references/deep/notes.md", "notes\n");
    f.file("beta", ".hidden/secret", "not published\n");
    f.file("beta", "node_modules/x.js", "not published\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let script = f.root().join("beta/scripts/go.sh");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("SKILL.md", f.root().join("beta/same.md")).unwrap();
    }
    let dir = f.root().join("gamma");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: gamma\ndescription: \"Escapes <script>alert('x')</script> & friends; use it for markup.\"\n---\nBody\n",
    )
    .unwrap();
}

fn publish(root: &Path, out: &Path, extra: &[&str]) -> common::Run {
    run(skillctl()
        .arg("publish")
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(extra)
        .env_remove("SOURCE_DATE_EPOCH"))
}

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn index(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join(".well-known/agent-skills/index.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Copies `from` to `to` (files and folders; links as links), every file with the mtime
/// `when`.
fn copy_with_mtime(from: &Path, to: &Path, when: SystemTime) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_with_mtime(&src, &dst, when);
        } else {
            std::fs::copy(&src, &dst).unwrap();
            let file = std::fs::File::options().write(true).open(&dst).unwrap();
            file.set_modified(when).unwrap();
        }
    }
}

#[test]
fn publish_writes_the_newest_index_shape() {
    let f = Fixture::new();
    skills(&f);
    let out = f.path().join("site");
    let said = publish(&f.root(), &out, &[]);
    assert!(said.ok().contains("published 3 skills"), "{said:?}");
    let index = index(&out);
    assert_eq!(index["$schema"], SCHEMA);
    let entries = index["skills"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
    let folder = out.join(".well-known/agent-skills");
    for e in entries {
        let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 5, "{e}");
        let bytes = std::fs::read(folder.join(e["url"].as_str().unwrap())).unwrap();
        assert_eq!(
            e["digest"].as_str().unwrap(),
            format!("sha256:{:x}", Sha256::digest(&bytes)),
            "the digest is the artifact's sha256"
        );
    }
    assert_eq!(entries[0]["type"], "skill-md");
    assert_eq!(entries[0]["url"], "alpha/SKILL.md");
    assert_eq!(entries[1]["type"], "archive");
    assert_eq!(entries[1]["url"], "beta.tar.gz");
    assert_eq!(
        std::fs::read(folder.join("alpha/SKILL.md")).unwrap(),
        std::fs::read(f.root().join("alpha/SKILL.md")).unwrap()
    );
}

/// One archive member: path, mode, uid, gid, mtime, type, bytes.
type Member = (String, u32, u64, u64, u64, tar::EntryType, Vec<u8>);

/// The archive's members.
fn members(archive: &[u8]) -> Vec<Member> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    tar.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let h = e.header().clone();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (
                e.path().unwrap().to_string_lossy().into_owned(),
                h.mode().unwrap(),
                h.uid().unwrap(),
                h.gid().unwrap(),
                h.mtime().unwrap(),
                h.entry_type(),
                bytes,
            )
        })
        .collect()
}

#[test]
fn an_archive_holds_the_listed_files_with_fixed_owners_times_and_header() {
    let f = Fixture::new();
    skills(&f);
    let out = f.path().join("site");
    publish(&f.root(), &out, &[]).ok();
    let archive = std::fs::read(out.join(".well-known/agent-skills/beta.tar.gz")).unwrap();
    // gzip: magic, deflate, no flags (no name), mtime 0, XFL, OS 255 (unknown).
    assert_eq!(&archive[..4], &[0x1f, 0x8b, 8, 0]);
    assert_eq!(&archive[4..8], &[0, 0, 0, 0]);
    assert_eq!(archive[9], 255);
    let members = members(&archive);
    let paths: Vec<&str> = members.iter().map(|m| m.0.as_str()).collect();
    let mut expected = vec!["SKILL.md", "references/deep/notes.md", "scripts/go.sh"];
    if cfg!(unix) {
        expected.insert(2, "same.md");
    }
    assert_eq!(
        paths, expected,
        "the index's listing, sorted: no hidden file, no node_modules"
    );
    let skill_md = std::fs::read(f.root().join("beta/SKILL.md")).unwrap();
    for (path, mode, uid, gid, mtime, kind, bytes) in &members {
        assert_eq!((*uid, *gid, *mtime), (0, 0, 0), "{path}");
        assert_eq!(
            *kind,
            tar::EntryType::Regular,
            "{path}: no links, no folders"
        );
        let want = if cfg!(unix) && path == "scripts/go.sh" {
            0o755
        } else {
            0o644
        };
        assert_eq!(*mode, want, "{path}");
        if path == "same.md" {
            assert_eq!(
                bytes, &skill_md,
                "a link inside the folder is stored as its file"
            );
        }
    }
}

#[test]
fn publishing_twice_and_from_a_copy_gives_identical_bytes() {
    let f = Fixture::new();
    skills(&f);
    let first = f.path().join("first");
    let second = f.path().join("second");
    let copied = f.path().join("copied");
    publish(&f.root(), &first, &["--published", "2026-03-12"]).ok();
    publish(&f.root(), &second, &["--published", "2026-03-12"]).ok();
    let copy = f.path().join("copy");
    copy_with_mtime(
        &f.root(),
        &copy,
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_234_567_890),
    );
    publish(&copy, &copied, &["--published", "2026-03-12"]).ok();
    let a = tree(&first);
    assert_eq!(a.len(), 5, "{:?}", a.keys());
    assert_eq!(a, tree(&second), "publishing twice");
    assert_eq!(a, tree(&copied), "publishing a copy with other mtimes");
    // Publishing into a folder that holds an earlier publication leaves nothing stale.
    std::fs::remove_dir_all(f.root().join("gamma")).unwrap();
    publish(&f.root(), &first, &["--published", "2026-03-12"]).ok();
    let names: Vec<String> = tree(&first).into_keys().collect();
    assert!(!names.iter().any(|n| n.contains("gamma")), "{names:?}");
    // The archives' digests do not depend on the date.
    publish(&f.root(), &second, &["--published", "2027-01-01"]).ok();
    assert_eq!(index(&first)["skills"], index(&second)["skills"]);
}

#[test]
fn publish_refuses_an_invalid_skill_and_names_it() {
    let f = Fixture::new();
    f.skill("good", "", "Body\n");
    let bad = f.root().join("bad-one");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("SKILL.md"), "---\nname: Bad_One\n---\nBody\n").unwrap();
    let out = f.path().join("site");
    let said = publish(&f.root(), &out, &[]);
    said.fails(1, "the skill Bad_One");
    assert!(said.stderr.contains("bad-one"), "{said:?}");
    assert!(said.stderr.contains("error["), "the diagnostics: {said:?}");
    assert!(said.stderr.contains("nothing published"), "{said:?}");
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn publish_refuses_a_name_used_twice() {
    let f = Fixture::new();
    for group in ["a", "b"] {
        let dir = f.root().join(group).join("twin");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: twin\ndescription: A twin skill; use it for tests of names used twice.\n---\n",
        )
        .unwrap();
    }
    let out = f.path().join("site");
    publish(&f.root(), &out, &[]).fails(1, "two skills are named twin");
    assert!(!out.exists());
}

#[test]
fn the_date_shown_comes_from_the_option_then_source_date_epoch_then_the_epoch() {
    let f = Fixture::new();
    f.skill("alpha", "", "Body\n");
    let out = f.path().join("site");
    let page = |out: &Path| {
        std::fs::read_to_string(out.join(".well-known/agent-skills/index.html")).unwrap()
    };
    publish(&f.root(), &out, &[]).ok();
    assert!(page(&out).contains("datetime=\"1970-01-01T00:00:00Z\""));
    run(skillctl()
        .arg("publish")
        .arg(f.root())
        .arg("--out")
        .arg(&out)
        .env("SOURCE_DATE_EPOCH", "1700000000"))
    .ok();
    assert!(page(&out).contains("datetime=\"2023-11-14T22:13:20Z\""));
    run(skillctl()
        .arg("publish")
        .arg(f.root())
        .args(["--published", "2026-03-12T10:00:00Z", "--out"])
        .arg(&out)
        .env("SOURCE_DATE_EPOCH", "1700000000"))
    .ok();
    assert!(page(&out).contains("datetime=\"2026-03-12T10:00:00Z\""));
    publish(&f.root(), &out, &["--published", "soon"]).fails(2, "--published");
}

#[test]
fn the_catalogue_escapes_markup() {
    let f = Fixture::new();
    skills(&f);
    let out = f.path().join("site");
    publish(&f.root(), &out, &[]).ok();
    let page = std::fs::read_to_string(out.join(".well-known/agent-skills/index.html")).unwrap();
    assert!(!page.contains("<script"), "{page}");
    assert!(page.contains("Escapes &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; friends"));
}

/// A static file server on loopback serving `root`, one thread a connection; returns its
/// address. Enough HTTP/1.1 for a browser: GET, a content type, `Connection: close`.
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let root = root.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    return;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let path = request.split(' ').nth(1).unwrap_or("/").to_owned();
                let file = root.join(path.trim_start_matches('/'));
                let (status, kind, body) = match std::fs::read(&file) {
                    Ok(body) if !path.contains("..") => {
                        let kind = match file.extension().and_then(|e| e.to_str()) {
                            Some("html") => "text/html; charset=utf-8",
                            Some("json") => "application/json",
                            _ => "application/octet-stream",
                        };
                        ("200 OK", kind, body)
                    }
                    _ => ("404 Not Found", "text/plain", b"not found".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            });
        }
    });
    format!("http://{addr}")
}

/// Debian's Chromium: `.ci/run` installs it when it is absent.
fn chromium() -> PathBuf {
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "Chromium is not installed: .ci/run installs it (apt-get install -y chromium); \
         this test needs a real browser to read the catalogue"
    );
}

/// The DOM Chromium renders for `url`, headless, with a hang guard.
fn rendered_dom(url: &str, profile: &Path) -> String {
    let child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    // A guard against a browser that never ends, not a bound on how fast it is.
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(output) => {
            let output = output.expect("chromium's output");
            assert!(
                output.status.success(),
                "chromium failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("chromium did not finish (killed)");
        }
    }
}

#[test]
fn a_browser_finds_every_skill_on_the_catalogue() {
    let f = Fixture::new();
    skills(&f);
    let out = f.path().join("site");
    publish(&f.root(), &out, &["--published", "2026-03-12"]).ok();
    let base = serve(out.clone());
    let dom = rendered_dom(
        &format!("{base}/.well-known/agent-skills/index.html"),
        &f.path().join("profile"),
    );
    assert!(dom.contains("<main>"), "a rendered page: {dom}");
    assert!(
        !dom.contains("<script"),
        "no script element in the DOM: {dom}"
    );
    for entry in index(&out)["skills"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let article = dom
            .split("<article")
            .find(|a| a.contains(&format!("id=\"skill-{name}\"")))
            .unwrap_or_else(|| panic!("no article for {name}: {dom}"));
        assert!(article.contains(&format!("<h2>{name}</h2>")), "{article}");
        let description = entry["description"]
            .as_str()
            .unwrap()
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(
            article.contains(&description),
            "{name}'s description: {article}"
        );
        assert!(
            article.contains(entry["digest"].as_str().unwrap()),
            "{name}'s digest: {article}"
        );
        assert!(
            article.contains("2026-03-12T00:00:00Z"),
            "{name}'s date: {article}"
        );
    }
}
