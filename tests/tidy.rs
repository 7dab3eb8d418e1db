//! Tidy checks, as tests: the architecture ARCHITECTURE.md describes holds because these
//! fail when it does not. Dependencies point one way; the model and the parser do no I/O;
//! library crates never print; every Rust file opens with a `//!` comment; no tracked file
//! holds a path of a particular machine; the code map names every crate and module.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file of the project (what git would track): the tree without build output,
/// dependencies and VCS folders.
fn files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !matches!(
                    name.as_ref(),
                    "target" | ".git" | "node_modules" | "corpus" | "artifacts"
                ) {
                    walk(&path, out);
                }
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out.sort();
    out
}

fn rust_files_under(dir: &Path) -> Vec<PathBuf> {
    files()
        .into_iter()
        .filter(|p| p.starts_with(dir) && p.extension().is_some_and(|e| e == "rs"))
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The workspace crates each crate may depend on: the direction ARCHITECTURE.md documents.
const ALLOWED: [(&str, &[&str]); 10] = [
    ("model", &[]),
    ("parser", &["model"]),
    ("storage", &["model"]),
    ("index", &["model", "parser", "storage"]),
    ("policy", &["model"]),
    ("runner", &["model", "storage"]),
    (
        "executor",
        &["model", "parser", "storage", "index", "policy", "runner"],
    ),
    (
        "protocol",
        &[
            "model", "parser", "storage", "index", "policy", "runner", "executor",
        ],
    ),
    (
        "mcp",
        &[
            "model", "parser", "storage", "index", "policy", "runner", "executor", "protocol",
        ],
    ),
    (
        "cli",
        &[
            "model", "parser", "storage", "index", "policy", "runner", "executor", "protocol",
            "mcp",
        ],
    ),
];

/// The `skills-*` dependencies of a manifest's `[dependencies]` (and target-specific ones).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let mut deps = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if in_deps {
            if let Some(name) = line.strip_prefix("skills-") {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                deps.push(name);
            }
        }
    }
    deps
}

fn dependency_violations() -> Vec<String> {
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let manifest = read(&entry.path().join("Cargo.toml"));
        let allowed = ALLOWED.iter().find(|(c, _)| *c == name).map(|(_, a)| *a);
        let Some(allowed) = allowed else {
            bad.push(format!(
                "crates/{name} is not in the tidy test's dependency table"
            ));
            continue;
        };
        for dep in workspace_deps(&manifest) {
            if !allowed.contains(&dep.as_str()) {
                bad.push(format!(
                    "crates/{name} depends on skills-{dep}, against the documented direction"
                ));
            }
        }
    }
    bad
}

fn io_violations() -> Vec<String> {
    let mut bad = Vec::new();
    for krate in ["model", "parser", "policy"] {
        for file in rust_files_under(&root().join("crates").join(krate).join("src")) {
            for (i, line) in read(&file).lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for banned in ["std::fs", "std::process", "std::net", "File::open"] {
                    if code.contains(banned) {
                        bad.push(format!(
                            "{}:{}: {banned} in a crate that does no I/O",
                            file.display(),
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    bad
}

fn print_violations() -> Vec<String> {
    let mut bad = Vec::new();
    for krate in [
        "model", "parser", "storage", "index", "policy", "runner", "executor", "protocol", "mcp",
    ] {
        for file in rust_files_under(&root().join("crates").join(krate).join("src")) {
            for (i, line) in read(&file).lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for banned in ["println!(", "eprintln!(", "print!(", "eprint!(", "dbg!("] {
                    if code.contains(banned) && !code.contains(&format!("\"{banned}")) {
                        bad.push(format!(
                            "{}:{}: {banned} in a library crate",
                            file.display(),
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    bad
}

fn header_violations() -> Vec<String> {
    files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !read(p).trim_start().starts_with("//!"))
        .map(|p| format!("{} does not open with a `//!` comment", p.display()))
        .collect()
}

/// Paths of a particular machine. `/home/ada` is the documentation's example user.
fn machine_path_violations() -> Vec<String> {
    let patterns = ["/work/", "/root/", "/Users/", "C:\\Users\\"];
    let mut bad = Vec::new();
    let this = root().join("tests/tidy.rs");
    for file in files().into_iter().filter(|f| *f != this) {
        let text = read(&file);
        for (i, line) in text.lines().enumerate() {
            for p in patterns {
                if line.contains(p) && !line.contains("tidy: allow") {
                    bad.push(format!(
                        "{}:{}: a machine path ({p})",
                        file.display(),
                        i + 1
                    ));
                }
            }
            if let Some(at) = line.find("/home/") {
                let rest = &line[at + "/home/".len()..];
                if !rest.starts_with("ada") && !rest.is_empty() && !line.contains("tidy: allow") {
                    bad.push(format!(
                        "{}:{}: a machine path (/home/...)",
                        file.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    bad
}

fn code_map_violations() -> Vec<String> {
    let map = read(&root().join("ARCHITECTURE.md"));
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !map.contains(&format!("`crates/{name}`")) {
            bad.push(format!(
                "ARCHITECTURE.md's code map does not name crates/{name}"
            ));
        }
        for file in rust_files_under(&entry.path().join("src")) {
            let module = file
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if module == "lib.rs" || module == "main.rs" {
                continue;
            }
            if !map.contains(&format!("`{module}`")) {
                bad.push(format!(
                    "ARCHITECTURE.md's code map does not name crates/{name}/src/{module}"
                ));
            }
        }
    }
    bad
}

fn assert_none(what: &str, violations: Vec<String>) {
    assert!(violations.is_empty(), "{what}:\n{}", violations.join("\n"));
}

#[test]
fn dependencies_point_one_way() {
    assert_none("dependency direction", dependency_violations());
}

#[test]
fn the_model_and_the_parser_do_no_io() {
    assert_none("I/O in model, parser or policy", io_violations());
}

#[test]
fn library_crates_never_print() {
    assert_none("printing in a library", print_violations());
}

#[test]
fn every_rust_file_opens_with_a_doc_comment() {
    assert_none("missing `//!` headers", header_violations());
}

#[test]
fn no_tracked_file_holds_a_machine_path() {
    assert_none("machine paths", machine_path_violations());
}

#[test]
fn the_code_map_names_every_crate_and_module() {
    assert_none("code map", code_map_violations());
}
