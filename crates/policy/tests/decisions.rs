//! Data-driven decision tests: every `tests/decisions/*.txt` is one table of skills' rules
//! and resolved calls, each call with the decision it must get. No folder, no session: a
//! table says where a path leads (as the executor would resolve it) and which file it is.
//!
//! A table holds, line by line (`#` starts a comment line; blank lines are skipped):
//! - `skill <name> <dir>`, then the skill's frontmatter lines, each indented by two spaces
//!   (beside `name` and `description`, which the harness writes);
//! - `real <name> <path>|none`: the folder's real path (default: `<dir>` itself);
//! - `scripts <name> <dev>:<ino>...`: the identities of the skill's scripts at activation;
//! - `untrusted <name> <origin>`: the skill comes from a remote origin the host does not
//!   trust (`url:https://HOST`, `mcp:LABEL`); `Bash` is the host's code-execution tool;
//! - `default allow|deny`, `mode restrict|preapprove`: the host's fallback (default: allow,
//!   restrict);
//! - `stack <name>...`: the active skills, bottom to top, for the calls that follow
//!   (default: every skill declared, in order; `stack` alone: none);
//! - a call: `<Tool>[:plain|:read|:write] <arg> [=> <resolved>|=> loop] [id <dev>:<ino>]
//!   -> allow|deny [script-read] ["<text the reason contains>"]`. `<arg>` is a JSON string,
//!   or `-` for a call with no argument; what a tool does with it comes from the built-in
//!   path tools unless the suffix says; a path resolves to itself (relative to `/cwd`)
//!   unless `=>` says where its links lead (`loop`: they loop).
//!
//! Beside each table, `<table>.expected` is the table with every call's whole decision
//! written under it (allowed or denied, the skill and the rule that decided, the reason).
//! Run with `UPDATE_EXPECT=1` to (re)write them; a mismatch otherwise fails with a line diff.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_policy::{
    AllowedToolsMode, CompiledRules, Decision, DefaultDecision, Fallback, FolderFacts, PathAccess,
    ResolvedPath,
};

#[test]
fn decision_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/decisions");
    let update = std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1");
    let mut tables: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no tables in {}", root.display());
    let mut failures = Vec::new();
    let mut cases = 0;
    for table in &tables {
        let text = fs::read_to_string(table).expect("a readable table");
        let run = run_table(&text);
        cases += run.cases;
        failures.extend(
            run.wrong
                .iter()
                .map(|w| format!("{}: {w}", table.display())),
        );
        let expected_path = table.with_extension("expected");
        let expected = fs::read_to_string(&expected_path).ok();
        if expected.as_deref() == Some(run.rendered.as_str()) {
            continue;
        }
        if update {
            fs::write(&expected_path, &run.rendered).expect("write the expected decisions");
            continue;
        }
        let diff = match &expected {
            Some(expected) => line_diff(expected, &run.rendered),
            None => format!("(no {})\n{}", expected_path.display(), run.rendered),
        };
        failures.push(format!("--- {}\n{diff}", expected_path.display()));
    }
    assert!(cases > 0, "no calls in the tables");
    assert!(
        failures.is_empty(),
        "{} of {cases} decisions differ (rerun with UPDATE_EXPECT=1 to accept new reasons):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One table's outcome: its text with each decision under its call, the calls whose
/// decision is not the one the table asks for, and how many calls it holds.
struct Run {
    rendered: String,
    wrong: Vec<String>,
    cases: usize,
}

/// A skill as a table declares it.
struct Declared {
    dir: PathBuf,
    lines: String,
    real: Option<PathBuf>,
    scripts: Vec<(u64, u64)>,
    untrusted: Option<String>,
}

/// What a table says so far.
struct State {
    skills: BTreeMap<String, Declared>,
    order: Vec<String>,
    stack: Option<Vec<String>>,
    fallback: Fallback,
}

fn run_table(text: &str) -> Run {
    let mut state = State {
        skills: BTreeMap::new(),
        order: Vec::new(),
        stack: None,
        fallback: support::DEFAULTS,
    };
    let mut run = Run {
        rendered: String::new(),
        wrong: Vec::new(),
        cases: 0,
    };
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        run.rendered.push_str(line);
        run.rendered.push('\n');
        if let Some(fm) = line.strip_prefix("  ") {
            let name = current.as_ref().expect("frontmatter under a skill");
            let skill = state.skills.get_mut(name).expect("a declared skill");
            writeln!(skill.lines, "{fm}").expect("a string");
            continue;
        }
        current = None;
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "skill" => current = Some(declare(&mut state, rest)),
            "real" => {
                let (name, path) = rest.split_once(' ').expect("real <name> <path>");
                let real = (path != "none").then(|| PathBuf::from(path));
                state.skills.get_mut(name).expect("a declared skill").real = real;
            }
            "scripts" => {
                let mut words = rest.split(' ');
                let name = words.next().expect("scripts <name>");
                let ids = words.map(identity).collect();
                state
                    .skills
                    .get_mut(name)
                    .expect("a declared skill")
                    .scripts = ids;
            }
            "untrusted" => {
                let (name, origin) = rest.split_once(' ').expect("untrusted <name> <origin>");
                state
                    .skills
                    .get_mut(name)
                    .expect("a declared skill")
                    .untrusted = Some(origin.to_owned());
            }
            "default" => state.fallback.default = default_of(rest),
            "mode" => state.fallback.mode = mode_of(rest),
            "stack" => {
                state.stack = Some(rest.split_whitespace().map(str::to_owned).collect());
            }
            _ => {
                run.cases += 1;
                let (decision, wrong) = judge(&state, line);
                if let Some(wrong) = wrong {
                    run.wrong.push(format!("line {}: {line}: {wrong}", n + 1));
                }
                run.rendered.push_str(&render(&decision));
            }
        }
    }
    run
}

fn declare(state: &mut State, rest: &str) -> String {
    let (name, dir) = rest.split_once(' ').expect("skill <name> <dir>");
    state.skills.insert(
        name.to_owned(),
        Declared {
            dir: PathBuf::from(dir),
            lines: String::new(),
            real: Some(PathBuf::from(dir)),
            scripts: Vec::new(),
            untrusted: None,
        },
    );
    state.order.push(name.to_owned());
    name.to_owned()
}

fn identity(text: &str) -> (u64, u64) {
    let (dev, ino) = text.split_once(':').expect("<dev>:<ino>");
    (
        dev.parse().expect("a device"),
        ino.parse().expect("an inode"),
    )
}

fn default_of(text: &str) -> DefaultDecision {
    match text {
        "allow" => DefaultDecision::Allow,
        "deny" => DefaultDecision::Deny,
        other => panic!("default {other:?}: allow or deny"),
    }
}

fn mode_of(text: &str) -> AllowedToolsMode {
    match text {
        "restrict" => AllowedToolsMode::Restrict,
        "preapprove" => AllowedToolsMode::Preapprove,
        other => panic!("mode {other:?}: restrict or preapprove"),
    }
}

/// The active skills' compiled rules, bottom to top.
fn stack(state: &State) -> Vec<CompiledRules> {
    let names = state.stack.as_ref().unwrap_or(&state.order);
    names
        .iter()
        .map(|name| {
            let s = state
                .skills
                .get(name)
                .unwrap_or_else(|| panic!("stack names {name:?}, which no skill line declares"));
            let facts = FolderFacts {
                canonical_dir: s.real.clone(),
                script_files: Arc::from(s.scripts.clone()),
                untrusted_origin: s.untrusted.clone(),
            };
            support::rules(name, &s.dir, &s.lines, facts)
        })
        .collect()
}

/// A call line, read.
struct CallLine {
    tool: String,
    access: PathAccess,
    arg: Option<String>,
    resolved: Option<Option<PathBuf>>,
    id: Option<(u64, u64)>,
    allow: bool,
    script_read: bool,
    reason: Option<String>,
}

fn parse_call(line: &str) -> CallLine {
    let (tool, rest) = line.split_once(' ').expect("<Tool> <arg> -> ...");
    let (tool, access) = match tool.split_once(':') {
        Some((tool, "plain")) => (tool, PathAccess::None),
        Some((tool, "read")) => (tool, PathAccess::Read),
        Some((tool, "write")) => (tool, PathAccess::Write),
        Some((_, other)) => panic!("access {other:?}: plain, read or write"),
        None => (tool, support::access_of(tool)),
    };
    let (arg, mut rest) = match rest.strip_prefix("- ") {
        Some(rest) => (None, rest),
        None => {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
            let arg = stream.next().expect("an argument").expect("a JSON string");
            (Some(arg), &rest[stream.byte_offset()..])
        }
    };
    let mut call = CallLine {
        tool: tool.to_owned(),
        access,
        arg,
        resolved: None,
        id: None,
        allow: false,
        script_read: false,
        reason: None,
    };
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("=> ") {
            let (target, r) = r.split_once(' ').unwrap_or((r, ""));
            call.resolved = Some((target != "loop").then(|| PathBuf::from(target)));
            rest = r;
        } else if let Some(r) = rest.strip_prefix("id ") {
            let (id, r) = r.split_once(' ').unwrap_or((r, ""));
            call.id = Some(identity(id));
            rest = r;
        } else if let Some(r) = rest.strip_prefix("-> ") {
            let (verdict, r) = r.split_once(' ').unwrap_or((r, ""));
            call.allow = match verdict {
                "allow" => true,
                "deny" => false,
                other => panic!("verdict {other:?}: allow or deny"),
            };
            let r = r.trim_start();
            let r = match r.strip_prefix("script-read") {
                Some(r) => {
                    call.script_read = true;
                    r.trim_start()
                }
                None => r,
            };
            if !r.is_empty() {
                call.reason = Some(serde_json::from_str(r).expect("the reason as a JSON string"));
            }
            return call;
        } else {
            panic!("expected `=>`, `id` or `->` at {rest:?}");
        }
    }
}

/// The decision on one call line, and what is wrong with it (if anything).
fn judge(state: &State, line: &str) -> (Decision, Option<String>) {
    let call = parse_call(line);
    let path = call.arg.as_deref().map(|arg| {
        let mut path = support::plain_path(arg);
        if let Some(resolved) = &call.resolved {
            path.resolved.clone_from(resolved);
        }
        path.identity = call.id;
        path
    });
    let stack = stack(state);
    let decision = support::decide(
        &stack,
        &call.tool,
        call.access,
        call.arg.as_deref(),
        path.filter(|_: &ResolvedPath| call.access != PathAccess::None),
        state.fallback,
    )
    .bounded();
    let mut wrong = Vec::new();
    if decision.allowed != call.allow {
        wrong.push(format!("allowed is {}", decision.allowed));
    }
    if decision.script_read != call.script_read {
        wrong.push(format!("script_read is {}", decision.script_read));
    }
    if let Some(text) = &call.reason {
        if !decision.reason.contains(text.as_str()) {
            wrong.push(format!("the reason does not contain {text:?}"));
        }
    }
    let wrong = (!wrong.is_empty()).then(|| format!("{} ({})", wrong.join(", "), decision.reason));
    (decision, wrong)
}

/// A decision as the expected file shows it, under its call.
fn render(d: &Decision) -> String {
    let verdict = if d.allowed { "allowed" } else { "denied" };
    let script = if d.script_read { " (script read)" } else { "" };
    let by = match (&d.skill, &d.rule) {
        (Some(skill), Some(rule)) => format!(" by {skill}, rule {rule}"),
        (Some(skill), None) => format!(" by {skill}"),
        (None, _) => String::new(),
    };
    format!("  = {verdict}{script}{by}: {}\n", d.reason)
}

/// Lines of `expected` and `actual` that differ, side by side.
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i).copied(), a.get(i).copied());
        if x != y {
            let _ = writeln!(
                out,
                "line {}:\n  - {}\n  + {}",
                i + 1,
                x.unwrap_or("(none)"),
                y.unwrap_or("(none)")
            );
        }
    }
    out
}
