//! Tidy checks, as tests: the architecture ARCHITECTURE.md describes holds because these
//! fail when it does not. Dependencies point one way; the model and the parser do no I/O;
//! library crates never print; every Rust file opens with a `//!` comment; no tracked file
//! holds a path of a particular machine; the code map names every crate and module; the
//! documents stay maps (word caps, no commit hashes) and every test ARCHITECTURE.md names
//! exists.

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
            if name == ".git" {
                // A folder in a clone, a file naming one in a git worktree.
                continue;
            }
            if kind.is_dir() {
                if !matches!(
                    name.as_ref(),
                    "target" | "node_modules" | "corpus" | "artifacts"
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
const ALLOWED: [(&str, &[&str]); 11] = [
    ("model", &[]),
    ("parser", &["model"]),
    ("storage", &["model"]),
    ("remote", &["model", "storage"]),
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
            "model", "parser", "storage", "index", "policy", "runner", "executor", "remote",
        ],
    ),
    (
        "mcp",
        &[
            "model", "parser", "storage", "index", "policy", "runner", "executor", "protocol",
            "remote",
        ],
    ),
    (
        "cli",
        &[
            "model", "parser", "storage", "index", "policy", "runner", "executor", "protocol",
            "mcp", "remote",
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

// ---------------------------------------------------------------------------------------
// No import loop: within a crate, no two modules reach each other's items.
// ---------------------------------------------------------------------------------------

/// Rust source with comments, string and character literals blanked (newlines kept), so
/// that what is searched is code and line numbers still hold.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident = |ch: Option<&char>| ch.is_some_and(|ch| ch.is_alphanumeric() || *ch == '_');
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        let end = if c[i] == '/' && next == Some('/') {
            c[i..]
                .iter()
                .position(|&ch| ch == '\n')
                .map_or(c.len(), |p| i + p)
        } else if c[i] == '/' && next == Some('*') {
            block_comment_end(&c, i)
        } else if c[i] == '"' {
            string_end(&c, i + 1, 0)
        } else if c[i] == 'r'
            && matches!(next, Some('"' | '#'))
            && !ident(
                i.checked_sub(1)
                    .and_then(|p| c.get(p))
                    .filter(|&&p| p != 'b'),
            )
        {
            let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
            if c.get(i + 1 + hashes) == Some(&'"') {
                string_end(&c, i + 2 + hashes, hashes)
            } else {
                i + 1
            }
        } else if c[i] == '\'' && next == Some('\\') {
            c[i + 2..]
                .iter()
                .position(|&ch| ch == '\'')
                .map_or(c.len(), |p| i + 3 + p)
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i + 3
        } else {
            out.push(c[i]);
            i += 1;
            continue;
        };
        for &ch in &c[i..end.min(c.len())] {
            blank(&mut out, ch);
        }
        i = end.max(i + 1);
    }
    out
}

/// Where the (possibly nested) block comment starting at `i` ends.
fn block_comment_end(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Where a string whose body starts at `i` ends: past its closing quote and `hashes` `#`s
/// (a raw string when `hashes` or the caller says so; escapes only count in plain ones).
fn string_end(c: &[char], mut i: usize, hashes: usize) -> usize {
    let raw = i >= 2
        && c[..i - 1]
            .iter()
            .rev()
            .take(hashes + 1)
            .any(|&ch| ch == 'r' || ch == '#');
    while i < c.len() {
        if c[i] == '\\' && !raw {
            i += 2;
        } else if c[i] == '"'
            && c[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&ch| ch == '#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        } else {
            i += 1;
        }
    }
    i
}

/// Code with every `#[cfg(test)]` item (its body, to the matching brace) blanked.
fn without_tests(code: &str) -> String {
    let mut c: Vec<char> = code.chars().collect();
    let marks: Vec<Vec<char>> = ["#[cfg(test)]", "#[cfg(all(test,"]
        .iter()
        .map(|m| m.chars().collect())
        .collect();
    let mut i = 0;
    while i < c.len() {
        let Some(mark) = marks.iter().find(|m| c[i..].starts_with(m)) else {
            i += 1;
            continue;
        };
        let mut end = i + mark.len();
        while end < c.len() && c[end] != '{' && c[end] != ';' {
            end += 1;
        }
        let mut depth = 0;
        while end < c.len() {
            match c[end] {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            end += 1;
            if depth == 0 {
                break;
            }
        }
        for ch in &mut c[i..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = end;
    }
    c.into_iter().collect()
}

/// A token of code: an identifier, `::`, or one other character; with its line.
#[derive(Debug, Clone)]
struct Tok {
    text: String,
    line: usize,
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let start = i;
        if c[i] == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if c[i].is_whitespace() {
            i += 1;
            continue;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            i += 1;
        }
        out.push(Tok {
            text: c[start..i].iter().collect(),
            line,
        });
    }
    out
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|ch| ch.is_alphabetic() || ch == '_')
}

/// One path a use-tree or an inline path names, as segments, with its alias (`as name`).
type Named = (Vec<String>, Option<String>);

/// The paths of the use-tree (or inline path) at `at`, each below `prefix`.
fn use_tree(toks: &[Tok], at: &mut usize, prefix: &mut Vec<String>, out: &mut Vec<Named>) {
    let text = |i: usize| toks.get(i).map_or("", |t| t.text.as_str());
    match text(*at) {
        "{" => {
            *at += 1;
            while *at < toks.len() && text(*at) != "}" {
                let before = *at;
                let mark = prefix.len();
                use_tree(toks, at, prefix, out);
                prefix.truncate(mark);
                if text(*at) == "," || *at == before {
                    *at += 1;
                }
            }
            *at += 1;
        }
        "*" => {
            *at += 1;
            out.push((prefix.clone(), None));
        }
        s if is_ident(s) && s != "as" => {
            prefix.push(s.to_owned());
            *at += 1;
            if text(*at) == "::"
                && (text(*at + 1) == "{" || is_ident(text(*at + 1)) || text(*at + 1) == "*")
            {
                *at += 1;
                use_tree(toks, at, prefix, out);
            } else if text(*at) == "as" {
                out.push((prefix.clone(), Some(text(*at + 1).to_owned())));
                *at += 2;
            } else {
                out.push((prefix.clone(), None));
            }
        }
        _ => out.push((prefix.clone(), None)),
    }
}

/// One module's source: its path in the crate (`""` for the root, `a::b` for
/// `src/a/b.rs`), the file it is read from (for messages) and its text.
struct ModuleSource {
    module: String,
    file: String,
    text: String,
}

/// A reference from a module to a path, and where it is written.
struct Reference {
    from: String,
    path: Vec<String>,
    place: String,
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}::{name}")
    }
}

fn parent(module: &str) -> &str {
    module.rfind("::").map_or("", |at| &module[..at])
}

fn is_ancestor(ancestor: &str, of: &str) -> bool {
    ancestor.is_empty() || of.starts_with(&format!("{ancestor}::"))
}

/// Scans one module's code: the inline modules it declares (`mod name { … }`), its
/// references (paths starting `crate::`, `super::`, `self::` or a child module's name) and
/// its re-exports (`pub use`), each attributed to the (inline) module it is written in.
struct Scan {
    inline: Vec<String>,
    references: Vec<Reference>,
    reexports: Vec<(String, Named)>,
}

fn scan(source: &ModuleSource, children: &dyn Fn(&str, &str) -> bool) -> Scan {
    let toks = tokens(&code_only(&source.text));
    let text = |i: usize| toks.get(i).map_or("", |t| t.text.as_str());
    let mut scan = Scan {
        inline: Vec::new(),
        references: Vec::new(),
        reexports: Vec::new(),
    };
    let mut open: Vec<(String, usize)> = Vec::new();
    let (mut depth, mut i) = (0usize, 0);
    while i < toks.len() {
        let here = open
            .last()
            .map_or(source.module.clone(), |(m, _)| m.clone());
        match text(i) {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if open.last().is_some_and(|(_, d)| *d > depth) {
                    open.pop();
                }
            }
            "mod" if is_ident(text(i + 1)) && text(i + 2) == "{" => {
                let inline = join(&here, text(i + 1));
                scan.inline.push(inline.clone());
                depth += 1;
                open.push((inline, depth));
                i += 3;
                continue;
            }
            "use" if text(i.wrapping_sub(1)) == "pub" || text(i.wrapping_sub(1)) == ")" => {
                let mut at = i + 1;
                let mut named = Vec::new();
                use_tree(&toks, &mut at, &mut Vec::new(), &mut named);
                scan.reexports
                    .extend(named.into_iter().map(|n| (here.clone(), n)));
            }
            head if text(i + 1) == "::"
                && text(i.wrapping_sub(1)) != "::"
                && (matches!(head, "crate" | "super" | "self") || children(&here, head)) =>
            {
                let mut at = i;
                let mut named = Vec::new();
                use_tree(&toks, &mut at, &mut Vec::new(), &mut named);
                for (path, _) in named {
                    scan.references.push(Reference {
                        from: here.clone(),
                        place: format!("{}:{} `{}`", source.file, toks[i].line, path.join("::")),
                        path,
                    });
                }
                i = at.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The module an item path reaches from `from`: the deepest known module on its way, or,
/// for an item the module re-exports, the module that defines it. `None` for a path out of
/// the crate.
fn resolve(
    path: &[String],
    from: &str,
    modules: &std::collections::BTreeSet<String>,
    reexports: &std::collections::BTreeMap<(String, String), String>,
) -> Option<String> {
    let mut base = match path.first().map(String::as_str) {
        Some("crate") => String::new(),
        Some("self" | "super") => from.to_owned(),
        Some(child) if modules.contains(&join(from, child)) => from.to_owned(),
        _ => return None,
    };
    let start = usize::from(path[0] == "crate" || path[0] == "self");
    for (n, segment) in path.iter().enumerate().skip(start) {
        if segment == "super" {
            base = parent(&base).to_owned();
            continue;
        }
        if modules.contains(&join(&base, segment)) {
            base = join(&base, segment);
        } else if let Some(defined) = reexports.get(&(base.clone(), segment.clone())) {
            if n + 1 == path.len() || !modules.contains(defined) {
                return Some(defined.clone());
            }
            base = defined.clone();
        } else {
            break;
        }
    }
    Some(base)
}

/// A loop: modules of one crate that reach each other's items, and one way round it.
#[derive(Debug)]
struct Loop {
    modules: Vec<String>,
    way: String,
}

/// The module loops among one crate's modules.
fn module_loops(sources: &[ModuleSource]) -> Vec<Loop> {
    use std::collections::{BTreeMap, BTreeSet};
    // Tests are no part of the structure: a module's tests may use any other module.
    let sources: Vec<ModuleSource> = sources
        .iter()
        .map(|s| ModuleSource {
            module: s.module.clone(),
            file: s.file.clone(),
            text: without_tests(&code_only(&s.text)),
        })
        .collect();
    let files: BTreeSet<String> = sources.iter().map(|s| s.module.clone()).collect();
    // Inline modules (`mod sys { … }`) first, so that paths through them resolve; each
    // counts as part of its file's module.
    let mut modules = files.clone();
    let in_files = |here: &str, name: &str| files.contains(&join(here, name));
    modules.extend(sources.iter().flat_map(|s| scan(s, &in_files).inline));
    let known = |here: &str, name: &str| modules.contains(&join(here, name));
    let scans: Vec<Scan> = sources.iter().map(|s| scan(s, &known)).collect();
    let file_of = |m: &str| -> String {
        let mut m = m;
        while !files.contains(m) && !m.is_empty() {
            m = parent(m);
        }
        m.to_owned()
    };
    let reexports = reexports_of(&scans, &modules);
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for r in scans.iter().flat_map(|s| &s.references) {
        let Some(to) = resolve(&r.path, &r.from, &modules, &reexports) else {
            continue;
        };
        let (from, to) = (file_of(&r.from), file_of(&to));
        if to != from && !is_ancestor(&to, &from) {
            edges.entry((from, to)).or_insert_with(|| r.place.clone());
        }
    }
    loops_in(&files, &edges)
}

/// What each module re-exports (`pub use`): (module, name) -> the module defining it.
fn reexports_of(
    scans: &[Scan],
    modules: &std::collections::BTreeSet<String>,
) -> std::collections::BTreeMap<(String, String), String> {
    let mut reexports = std::collections::BTreeMap::new();
    for (module, (path, alias)) in scans.iter().flat_map(|s| &s.reexports) {
        let name = alias
            .clone()
            .or_else(|| path.last().cloned())
            .unwrap_or_default();
        let qualified: Vec<String> = if matches!(path[0].as_str(), "crate" | "self" | "super") {
            path.clone()
        } else {
            std::iter::once("self".to_owned())
                .chain(path.iter().cloned())
                .collect()
        };
        let none = std::collections::BTreeMap::new();
        if let Some(defined) = resolve(&qualified, module, modules, &none) {
            if defined != *module {
                reexports.insert((module.clone(), name), defined);
            }
        }
    }
    reexports
}

/// The strongly connected groups of more than one module, each with a shortest way round.
fn loops_in(
    modules: &std::collections::BTreeSet<String>,
    edges: &std::collections::BTreeMap<(String, String), String>,
) -> Vec<Loop> {
    use std::collections::{BTreeSet, VecDeque};
    let next = |m: &str| -> Vec<String> {
        edges
            .keys()
            .filter(|(f, _)| f == m)
            .map(|(_, t)| t.clone())
            .collect()
    };
    // The shortest way from `from` to `to`, as the modules on it (both ends included).
    let way = |from: &str, to: &str| -> Option<Vec<String>> {
        let mut back: std::collections::BTreeMap<String, String> = Default::default();
        let mut queue: VecDeque<String> = next(from).into_iter().collect();
        for m in &queue {
            back.insert(m.clone(), from.to_owned());
        }
        while let Some(m) = queue.pop_front() {
            if m == to {
                let mut path = vec![m.clone()];
                while path.len() == 1 || path.last().is_some_and(|p| p != from) {
                    path.push(back[path.last().unwrap()].clone());
                }
                path.reverse();
                return Some(path);
            }
            for n in next(&m) {
                if !back.contains_key(&n) {
                    back.insert(n.clone(), m.clone());
                    queue.push_back(n);
                }
            }
        }
        None
    };
    let mut seen = BTreeSet::new();
    let mut loops = Vec::new();
    for m in modules {
        if seen.contains(m) || way(m, m).is_none() {
            continue;
        }
        let group: Vec<String> = modules
            .iter()
            .filter(|o| *o == m || (way(m, o).is_some() && way(o, m).is_some()))
            .cloned()
            .collect();
        seen.extend(group.iter().cloned());
        let round = way(m, m).unwrap_or_default();
        let steps: Vec<String> = round
            .windows(2)
            .map(|w| {
                format!(
                    "{} -> {} ({})",
                    w[0],
                    w[1],
                    edges[&(w[0].clone(), w[1].clone())]
                )
            })
            .collect();
        loops.push(Loop {
            modules: group,
            way: steps.join("; "),
        });
    }
    loops
}

/// A crate's modules, read from `src/` (the library or binary root and its module files;
/// `src/bin/` holds single-file binaries, which have no modules to loop).
fn crate_modules(src: &Path) -> Vec<ModuleSource> {
    rust_files_under(src)
        .into_iter()
        .filter(|f| !f.starts_with(src.join("bin")))
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap_or(&f).with_extension("");
            let rel = rel.to_string_lossy().replace('\\', "/");
            let module = match rel.as_str() {
                "lib" | "main" => String::new(),
                other => other.trim_end_matches("/mod").replace('/', "::"),
            };
            ModuleSource {
                module,
                file: f.strip_prefix(root()).unwrap_or(&f).display().to_string(),
                text: read(&f),
            }
        })
        .collect()
}

fn loop_violations() -> Vec<String> {
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let krate = entry.file_name().to_string_lossy().into_owned();
        for l in module_loops(&crate_modules(&entry.path().join("src"))) {
            bad.push(format!(
                "crates/{krate}: the modules {} reach each other's items: {}",
                l.modules.join(", "),
                l.way
            ));
        }
    }
    bad
}

#[test]
fn no_module_loop_in_any_crate() {
    assert_none("module loops", loop_violations());
}

/// Module sources from `(module, text)` pairs, for the self-tests.
fn planted(modules: &[(&str, &str)]) -> Vec<ModuleSource> {
    modules
        .iter()
        .map(|(module, text)| ModuleSource {
            module: (*module).to_owned(),
            file: format!("{module}.rs"),
            text: (*text).to_owned(),
        })
        .collect()
}

#[test]
fn the_loop_check_finds_planted_loops() {
    let loops = module_loops(&planted(&[
        (
            "",
            "mod a;\nmod b;\nmod c;\npub use b::{Thing, Other as Renamed};\n",
        ),
        // a -> b through the root's re-export, b -> a by an inline path.
        ("a", "use crate::Renamed;\npub fn f() {}\n"),
        (
            "b",
            "pub struct Thing;\npub struct Other;\npub fn g() { crate::a::f() }\n",
        ),
        // Siblings in a module folder: a grouped use one way, `super::` the other.
        ("c", "mod d;\nmod e;\n"),
        (
            "c::d",
            "use crate::{b::Thing, c::e::{Y, Z}};\npub struct X;\n",
        ),
        (
            "c::e",
            "pub struct Y;\npub struct Z;\nfn h() -> super::d::X { todo!() }\n",
        ),
        // Through an inline module of f, which counts as f's; f's tests are no part of it.
        (
            "f",
            "mod sys {\n    pub fn k() { crate::g::m() }\n}\npub fn n() {}\n",
        ),
        ("g", "pub fn m() {}\nfn o() { crate::f::n() }\n"),
        (
            "h",
            "#[cfg(test)]\nmod tests {\n    use crate::i::q;\n}\npub fn p() {}\n",
        ),
        ("i", "fn q() { crate::h::p() }\n"),
    ]));
    let found: Vec<Vec<String>> = loops.iter().map(|l| l.modules.clone()).collect();
    assert_eq!(
        found,
        [vec!["a", "b"], vec!["c::d", "c::e"], vec!["f", "g"]],
        "{loops:?}"
    );
    assert!(
        loops[0].way.contains("a.rs:1 `crate::Renamed`"),
        "{loops:?}"
    );
}

#[test]
fn the_loop_check_passes_layers_children_and_prose() {
    let loops = module_loops(&planted(&[
        (
            "",
            "mod a;\nmod b;\npub use a::Thing;\npub fn root_item() {}\n",
        ),
        // a child uses its parent's items; the root uses its children's.
        (
            "a",
            "pub struct Thing;\nmod inner { use super::Thing; }\nfn f() { crate::root_item() }\n",
        ),
        // b uses a; mentions of b's neighbours in comments and strings are not uses.
        (
            "b",
            "use crate::{a::Thing, Thing as Same};\n/// [`crate::b`] and `crate::a`\n\
             fn g() { let _ = \"crate::b::g\"; let _ = r#\"super::a\"#; }\n\
             #[cfg(test)]\nmod tests { use super::*; use crate::a::Thing; }\n",
        ),
    ]));
    assert!(loops.is_empty(), "{loops:?}");
}

// ---------------------------------------------------------------------------------------
// Files are opened in the homes named here, and nowhere else.
// ---------------------------------------------------------------------------------------

/// What opens a file or lists a folder (a file's metadata or real path is not an open).
const OPENS: [&str; 11] = [
    "File::open",
    "File::create",
    "File::options",
    "OpenOptions",
    "fs::read(",
    "fs::read_to_string(",
    "fs::write(",
    "read_dir(",
    "fs::open(",
    "openat(",
    "openat2(",
];

/// The files of `crates/*/src` that may open files, each with why.
const OPEN_HOMES: &[(&str, &str)] = &[
    (
        "crates/storage/src/read.rs",
        "reads a skill's files: without blocking, bounded, beneath its root",
    ),
    (
        "crates/storage/src/discover.rs",
        "discovery lists a root's folders to find skills",
    ),
    (
        "crates/storage/src/source.rs",
        "a folder source lists a skill's files by the one listing rule",
    ),
    (
        "crates/storage/src/scaffold.rs",
        "creates a new skill's folder and files, following no link",
    ),
    (
        "crates/executor/src/audit.rs",
        "the audit sink appends to its own log file, never a skill's",
    ),
    (
        "crates/storage/src/skill_dir.rs",
        "the home of file-system safety: opens beneath a skill folder, without blocking, regular files only",
    ),
    (
        "crates/runner/src/supervisor.rs",
        "the supervisor reads /proc to find the processes it must stop",
    ),
    (
        "crates/cli/src/mcp.rs",
        "the binary reads the token file its user names",
    ),
    (
        "crates/remote/src/disk.rs",
        "a URL root's cache and the lock file, written through a temporary name and a rename",
    ),
    (
        "crates/cli/src/cases.rs",
        "the binary reads the trigger case file its user names",
    ),
    (
        "crates/cli/src/publish.rs",
        "publish writes the index, archives and catalogue it builds into the folder its user names",
    ),
    (
        "crates/index/src/available.rs",
        "lists the folders of the PATH scripts receive, to look up the programs skills need",
    ),
];

/// The opens in `files` (path, text) outside `homes`, tests (`#[cfg(test)]`) left out; and
/// the paths that opened something at all.
fn opens_outside(files: &[(String, String)], homes: &[&str]) -> (Vec<String>, Vec<String>) {
    let (mut bad, mut opening) = (Vec::new(), Vec::new());
    for (path, text) in files {
        let code = without_tests(&code_only(text));
        for (i, line) in code.lines().enumerate() {
            let Some(open) = OPENS.iter().find(|o| line.contains(*o)) else {
                continue;
            };
            if !opening.contains(path) {
                opening.push(path.clone());
            }
            if !homes.contains(&path.as_str()) {
                bad.push(format!(
                    "{path}:{}: {open} outside the homes that open files",
                    i + 1
                ));
            }
        }
    }
    (bad, opening)
}

fn open_violations() -> Vec<String> {
    let crates = root().join("crates");
    let files: Vec<(String, String)> = files()
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| {
            let rel = f
                .strip_prefix(root())
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let in_src = f.strip_prefix(&crates).ok()?.iter().nth(1)? == "src";
            in_src.then(|| (rel, read(&f)))
        })
        .collect();
    let homes: Vec<&str> = OPEN_HOMES.iter().map(|(path, _)| *path).collect();
    let (mut bad, opening) = opens_outside(&files, &homes);
    for home in &homes {
        if !opening.iter().any(|p| p == home) {
            bad.push(format!(
                "{home} opens no file any more: remove it from OPEN_HOMES"
            ));
        }
    }
    bad
}

#[test]
fn files_are_opened_only_in_their_homes() {
    assert_none("file opens", open_violations());
}

#[test]
fn the_open_check_finds_a_planted_open() {
    let files = [
        (
            "crates/storage/src/read.rs".to_owned(),
            "fn f() { std::fs::File::open(p); }".to_owned(),
        ),
        (
            "crates/index/src/sneaky.rs".to_owned(),
            "//! `File::open` in prose is fine\nfn g() {\n    let _ = std::fs::read_to_string(p);\n}\n\
             #[cfg(test)]\nmod tests { fn t() { std::fs::write(p, b\"\"); } }\n"
                .to_owned(),
        ),
    ];
    let (bad, opening) = opens_outside(&files, &["crates/storage/src/read.rs"]);
    assert_eq!(
        bad,
        ["crates/index/src/sneaky.rs:3: fs::read_to_string( outside the homes that open files"]
    );
    assert_eq!(opening.len(), 2);
}

/// The words of a document: runs of characters between whitespace.
fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// ARCHITECTURE.md without its "## Code map" section (from that heading to the next `## `).
fn outside_code_map(text: &str) -> String {
    let mut out = String::new();
    let mut in_map = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            in_map = line.trim_end() == "## Code map";
        }
        if !in_map {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// README.md at most 2,000 words, and ARCHITECTURE.md at most 2,500 outside its code map, so
/// that with a code map of at most five lines a module it stays within 4,500 (issue 36).
#[test]
fn documents_stay_within_their_word_caps() {
    let readme = word_count(&read(&root().join("README.md")));
    assert!(
        readme <= 2_000,
        "README.md has {readme} words, more than 2,000"
    );
    let architecture = read(&root().join("ARCHITECTURE.md"));
    let rest = word_count(&outside_code_map(&architecture));
    assert!(
        rest <= 2_500,
        "ARCHITECTURE.md has {rest} words outside its code map, more than 2,500"
    );
}

/// ARCHITECTURE.md at most 4,500 words in all.
#[test]
fn architecture_md_is_at_most_4500_words() {
    let words = word_count(&read(&root().join("ARCHITECTURE.md")));
    assert!(
        words <= 4_500,
        "ARCHITECTURE.md has {words} words, more than 4,500"
    );
}

/// Whether `word` reads as an abbreviated or whole git commit hash: 7 to 40 lowercase hex
/// digits holding both a digit and a letter `a`-`f`. A word is a maximal run of ASCII
/// letters and digits, so a hash in backticks, after `@` or before a comma is found, while
/// a longer run is not a hash: a sha256 digest (64 digits) is allowed, and so are decimal
/// numbers (no letter) and English words (`decade`, `facade`: no digit). Upper case is not
/// git's spelling, so `0F5A675` is allowed.
fn looks_like_a_commit_hash(word: &str) -> bool {
    (7..=40).contains(&word.len())
        && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

fn commit_hash_violations() -> Vec<String> {
    let mut bad = Vec::new();
    for file in files() {
        if file.extension().is_none_or(|e| e != "md") {
            continue;
        }
        for (i, line) in read(&file).lines().enumerate() {
            for word in line.split(|c: char| !c.is_ascii_alphanumeric()) {
                if looks_like_a_commit_hash(word) {
                    bad.push(format!(
                        "{}:{}: {word} reads as a commit hash; documents say what is true now (history is in git)",
                        file.strip_prefix(root()).unwrap_or(&file).display(),
                        i + 1
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn the_commit_hash_rule_finds_hashes_and_nothing_else() {
    for hash in [
        "0f5a675",
        "bb3d48c",
        "4d5940690b393afb91e8ec5273ee61fc797fa281",
    ] {
        assert!(looks_like_a_commit_hash(hash), "{hash}");
    }
    let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    for word in [
        "1234567", "deadbeef", "facade", "decade", "0f5a6", digest, "0F5A675",
    ] {
        assert!(!looks_like_a_commit_hash(word), "{word}");
    }
}

#[test]
fn no_document_holds_a_commit_hash() {
    assert_none("commit hashes in documents", commit_hash_violations());
}

/// Every `path.rs::test_name` ARCHITECTURE.md names (its invariants) is a test in that file,
/// so an invariant never points at a test that moved or went away.
#[test]
fn every_test_named_in_architecture_md_exists() {
    let text = read(&root().join("ARCHITECTURE.md"));
    let mut named = 0;
    let mut bad = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        let Some((file, test)) = quoted.split_once("::") else {
            continue;
        };
        if !file.ends_with(".rs") {
            continue;
        }
        named += 1;
        let source = read(&root().join(file));
        if !source.contains(&format!("fn {test}(")) {
            bad.push(format!(
                "ARCHITECTURE.md names {file}::{test}, which does not exist"
            ));
        }
    }
    assert_none("tests named in ARCHITECTURE.md", bad);
    assert!(named >= 20, "only {named} tests named");
}
