//! `cargo xtask conformance`: the validator against the 80 pinned cases and the real-world
//! corpus counts.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// Expected counts over the real-world corpus: (rule, number of skills with it).
const CORPUS_RULES: [(&str, usize); 6] = [
    ("name.format", 92),
    ("name.matchesDirectory", 87),
    ("allowed-tools.type", 17),
    ("metadata.valueType", 4),
    ("description.maxLength", 2),
    ("frontmatter.unknownField", 906),
];
const CORPUS_FILES: usize = 1745;
const CORPUS_INVALID: usize = 137;

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let shared = crate::shared_dir(crate::flag(args, "--shared"));
    let cases = crate::flag(args, "--cases").map_or_else(|| shared.join("conformance"), Into::into);
    let corpus = crate::flag(args, "--corpus")
        .map_or_else(|| shared.join("corpus/real-world/skills"), Into::into);
    if !cases.join("expected.tsv").is_file() {
        bail!(
            "no conformance suite at {}: the suite and the corpus are external data, kept outside this repository (pass --shared DIR, with the suite at DIR/conformance, or --cases DIR, or set AGENT_SKILLS_SHARED)",
            cases.display()
        );
    }
    let skillctl = crate::build_skillctl(crate::Profile::Debug)?;
    let mut ok = check_cases(&skillctl, &cases)?;
    if corpus.is_dir() {
        ok &= check_corpus(&skillctl, &corpus)?;
        ok &= check_fast_path(&corpus);
    } else {
        println!("corpus: skipped (no {})", corpus.display());
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn validate(skillctl: &Path, paths: &[&Path], lint: bool) -> Result<Value> {
    let mut cmd = Command::new(skillctl);
    cmd.args(["validate", "--format", "json"]);
    if lint {
        cmd.arg("--lint");
    }
    cmd.args(paths);
    let output = cmd.output().context("running skillctl")?;
    if !matches!(output.status.code(), Some(0..=2)) {
        bail!(
            "skillctl crashed on {:?}: {}\n{}",
            paths,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("skillctl printed invalid JSON")
}

fn rules_of(skill: &Value) -> Vec<&str> {
    skill["diagnostics"]
        .as_array()
        .map(|ds| ds.iter().filter_map(|d| d["rule"].as_str()).collect())
        .unwrap_or_default()
}

fn check_cases(skillctl: &Path, cases: &Path) -> Result<bool> {
    let tsv = std::fs::read_to_string(cases.join("expected.tsv"))?;
    let mut rows = 0;
    let mut passed = 0;
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [case, skill_dir, expected, rule, ..] = cols[..] else {
            bail!("malformed row in expected.tsv: {line:?}");
        };
        rows += 1;
        let lint = !rule.contains('.') && rule != "-";
        let doc = validate(skillctl, &[&cases.join(skill_dir)], lint)?;
        let skills = doc["skills"].as_array().cloned().unwrap_or_default();
        let valid = !skills.is_empty() && skills.iter().all(|s| s["valid"] == Value::Bool(true));
        let got_rules: Vec<&str> = skills.iter().flat_map(rules_of).collect();
        let verdict_ok = valid == (expected == "valid");
        let rule_ok = rule == "-" || got_rules.contains(&rule);
        if verdict_ok && rule_ok {
            passed += 1;
        } else {
            println!(
                "FAIL {case}: expected {expected} with {rule}; got {} with {:?}",
                if valid { "valid" } else { "invalid" },
                got_rules
            );
        }
    }
    println!("conformance: {passed}/{rows}");
    Ok(passed == rows && rows == 80)
}

fn check_corpus(skillctl: &Path, corpus: &Path) -> Result<bool> {
    let doc = validate(skillctl, &[corpus], false)?;
    let skills = doc["skills"].as_array().cloned().unwrap_or_default();
    let invalid = skills
        .iter()
        .filter(|s| s["valid"] == Value::Bool(false))
        .count();
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for skill in &skills {
        let mut rules = rules_of(skill);
        rules.sort_unstable();
        rules.dedup();
        for rule in rules {
            *per_rule.entry(rule).or_default() += 1;
        }
    }
    let mut ok = true;
    let mut check = |what: &str, got: usize, want: usize| {
        let mark = if got == want { "ok" } else { "MISMATCH" };
        println!("corpus: {what}: {got} (expected {want}) {mark}");
        ok &= got == want;
    };
    check("skills checked", skills.len(), CORPUS_FILES);
    check("skills invalid", invalid, CORPUS_INVALID);
    for (rule, want) in CORPUS_RULES {
        check(
            &format!("skills with {rule}"),
            per_rule.get(rule).copied().unwrap_or(0),
            want,
        );
    }
    let others: Vec<String> = per_rule
        .iter()
        .filter(|(r, _)| !CORPUS_RULES.iter().any(|(c, _)| c == *r))
        .map(|(r, n)| format!("{r}={n}"))
        .collect();
    println!("corpus: other rules (skills): {}", others.join(", "));
    Ok(ok)
}

/// The frontmatter fast path against the full YAML parser on every real frontmatter:
/// whenever it accepts one, the trees must be identical.
fn check_fast_path(corpus: &Path) -> bool {
    let (mut total, mut accepted, mut disagreements) = (0, 0, Vec::new());
    for path in crate::skill_files(corpus) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(bounds) = skills_parser::frontmatter_bounds(text.as_bytes()) else {
            continue;
        };
        let yaml = &text[bounds.yaml];
        total += 1;
        accepted += usize::from(skills_parser::fast_path_accepts(yaml));
        if !skills_parser::fast_path_agrees(yaml) {
            disagreements.push(path.display().to_string());
        }
    }
    println!(
        "corpus: fast path took {accepted} of {total} frontmatters; disagreements with the full parser: {}",
        disagreements.len()
    );
    for d in &disagreements {
        println!("  fast path disagrees: {d}");
    }
    disagreements.is_empty()
}
