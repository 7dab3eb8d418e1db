//! Test support shared by the remote crate's tests and `skillctl`'s: a plain static HTTP
//! server on loopback (GET only, `ETag` and `If-None-Match`, one request per connection),
//! and `publish`, which writes a well-known index (v0.2.0) of skills into a site folder:
//! a lone `SKILL.md` as `skill-md`, any other skill as a `.tar.gz` archive.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A static file server on `127.0.0.1`, serving a folder as it is at each request.
pub struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `root` on a free port of `127.0.0.1`.
    pub fn start(root: &Path) -> Server {
        Server::on(root, 0)
    }

    /// Serves `root` on `port` (a port a stopped server had: a restart at the same URL).
    pub fn on(root: &Path, port: u16) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let (root, flag) = (root.to_path_buf(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let _ = answer(&root, stream);
                }
            }
        });
        Server {
            port,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops serving: the port is closed when this returns.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

/// A weak validator of `bytes`: their length and an FNV-1a hash.
fn etag(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("\"{hash:016x}-{}\"", bytes.len())
}

/// Answers one request.
fn answer(root: &Path, stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let mut if_none_match = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("if-none-match") {
                if_none_match = Some(value.trim().to_owned());
            }
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/");
    let file = path
        .trim_start_matches('/')
        .split('/')
        .filter(|p| !p.is_empty() && *p != "..")
        .fold(root.to_path_buf(), |dir, part| dir.join(part));
    let mut out = stream;
    match std::fs::read(&file) {
        Ok(bytes) if if_none_match.as_deref() == Some(etag(&bytes).as_str()) => {
            write!(
                out,
                "HTTP/1.1 304 Not Modified\r\nETag: {}\r\nConnection: close\r\n\r\n",
                etag(&bytes)
            )
        }
        Ok(bytes) => {
            let kind = match file.extension().and_then(|e| e.to_str()) {
                Some("json") => "application/json",
                Some("gz") => "application/gzip",
                Some("zip") => "application/zip",
                _ => "text/markdown",
            };
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nETag: {}\r\nConnection: close\r\n\r\n",
                bytes.len(),
                etag(&bytes)
            )?;
            out.write_all(&bytes)
        }
        Err(_) => write!(
            out,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    }
}

/// The folder of a site's index.
pub fn well_known(site: &Path) -> PathBuf {
    site.join(".well-known").join("agent-skills")
}

/// A `SKILL.md` named `name`, described `description`, with `body`.
pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

/// A deterministic `.tar.gz` of `files`.
pub fn tar_gz(files: &[(&str, &str)]) -> Vec<u8> {
    let mut out = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut header = tar::Header::new_ustar();
        header.set_path(path).unwrap();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        out.append(&header, text.as_bytes()).unwrap();
    }
    let tar = out.into_inner().unwrap();
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Writes the index of `skills` (each a name and its files; a lone `SKILL.md` is published
/// as `skill-md`, any other as a `.tar.gz`) into `site`, replacing what was there; returns
/// each skill's artifact path below `site`.
pub fn publish(site: &Path, skills: &[(&str, &[(&str, &str)])]) -> Vec<PathBuf> {
    let folder = well_known(site);
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    let mut entries = Vec::new();
    let mut artifacts = Vec::new();
    for (name, files) in skills {
        let description = files
            .iter()
            .find(|(p, _)| *p == "SKILL.md")
            .and_then(|(_, t)| t.lines().find_map(|l| l.strip_prefix("description: ")))
            .unwrap_or_default();
        let (kind, url, bytes) = match files {
            [("SKILL.md", text)] => (
                "skill-md",
                format!("{name}/SKILL.md"),
                text.as_bytes().to_vec(),
            ),
            _ => ("archive", format!("{name}.tar.gz"), tar_gz(files)),
        };
        let path = folder.join(&url);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        artifacts.push(path);
        entries.push(serde_json::json!({
            "name": name,
            "type": kind,
            "description": description,
            "url": url,
            "digest": skills_remote::Digest::of(&bytes).to_string(),
        }));
    }
    let index = serde_json::json!({
        "$schema": skills_remote::SCHEMA_0_2_0,
        "skills": entries,
    });
    std::fs::write(
        folder.join("index.json"),
        serde_json::to_vec_pretty(&index).unwrap(),
    )
    .unwrap();
    artifacts
}
