//! `cargo xtask lint-rates`: how often each lint rule fires over the real-world corpus.
//!
//! Every `SKILL.md` under the corpus is parsed in process with the lint rules on, given the
//! same facts `skillctl validate` gives the parser (its folder's name, whether the folder has
//! `references/`). For each rule it prints the number of skills it fires on (a skill counts
//! once however many findings it has), out of the total, and the percentage; then the same
//! counts per top-level folder of the corpus (one folder per source repository). A noisy
//! rule is one that fires on most skills: its warning stops being read.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use skills_model::{Rule, Severity};
use skills_parser::{ParseInput, SkillParser};

/// The lint rules, in the order they are reported.
const LINT_RULES: [Rule; 6] = [
    Rule::ContextBudget,
    Rule::DescriptionQuality,
    Rule::NoGenericInstructions,
    Rule::ProgressiveDisclosure,
    Rule::DefaultsOverMenus,
    Rule::GotchasPresent,
];

/// Per source (top-level folder): the number of skills, then per rule the skills it fires on.
type Totals = BTreeMap<String, (usize, BTreeMap<&'static str, usize>)>;

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let corpus = crate::corpus_dir(args)?;
    let list = crate::flag(args, "--list");
    let files = crate::skill_files(&corpus);
    if files.is_empty() {
        bail!("no SKILL.md under {}", corpus.display());
    }
    let (totals, unreadable) = tally(&corpus, &files, list);
    if list.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    print_rates(&corpus, &totals, unreadable);
    print_per_source(&totals);
    Ok(ExitCode::SUCCESS)
}

/// Lints every file: the totals per source, and how many files could not be read. With
/// `list`, prints each finding of that rule as it goes.
fn tally(corpus: &Path, files: &[std::path::PathBuf], list: Option<&str>) -> (Totals, usize) {
    let parser = SkillParser::builder().lint(true).build();
    let mut totals = Totals::new();
    let mut unreadable = 0;
    for path in files {
        let Ok(source) = std::fs::read(path) else {
            unreadable += 1;
            continue;
        };
        let dir = path.parent().unwrap_or(Path::new(""));
        let dir_name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let input = ParseInput::new(&source, &dir_name)
            .with_references_dir(dir.join("references").is_dir());
        let parsed = parser.parse(&input);
        let rel = path.strip_prefix(corpus).unwrap_or(path);
        let group = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let entry = totals.entry(group).or_default();
        entry.0 += 1;
        for rule in LINT_RULES {
            let Some(finding) = parsed
                .diagnostics
                .iter()
                .find(|d| d.rule == rule && d.severity != Severity::Error)
            else {
                continue;
            };
            *entry.1.entry(rule.id()).or_default() += 1;
            if list == Some(rule.id()) {
                println!("{}\t{}", rel.display(), finding.message);
            }
        }
    }
    (totals, unreadable)
}

/// Each rule's rate over the whole corpus.
fn print_rates(corpus: &Path, totals: &Totals, unreadable: usize) {
    let total: usize = totals.values().map(|(n, _)| n).sum();
    println!(
        "lint rates over {} ({total} skills{}):",
        corpus.display(),
        if unreadable > 0 {
            format!(", {unreadable} unreadable")
        } else {
            String::new()
        }
    );
    println!("  {:<24} {:>6} {:>6} {:>7}", "rule", "fires", "of", "%");
    for rule in LINT_RULES {
        let fires: usize = totals
            .values()
            .map(|(_, per)| per.get(rule.id()).copied().unwrap_or(0))
            .sum();
        println!(
            "  {:<24} {fires:>6} {total:>6} {:>6.1}%",
            rule.id(),
            percent(fires, total)
        );
    }
}

/// Per source: the skills each rule fires on, beside the source's skills.
fn print_per_source(totals: &Totals) {
    println!();
    println!("per source (skills it fires on / skills):");
    let width = totals.keys().map(String::len).max().unwrap_or(6).max(6);
    let header: Vec<String> = LINT_RULES.iter().map(|r| short(r.id())).collect();
    println!(
        "  {:<width$} {:>5}  {}",
        "source",
        "total",
        header.join(" ")
    );
    for (group, (n, per)) in totals {
        let cells: Vec<String> = LINT_RULES
            .iter()
            .map(|r| {
                let h = short(r.id());
                format!("{:>w$}", per.get(r.id()).copied().unwrap_or(0), w = h.len())
            })
            .collect();
        println!("  {group:<width$} {n:>5}  {}", cells.join(" "));
    }
}

/// A column header for a rule: its id's first word.
fn short(id: &str) -> String {
    id.split('-').next().unwrap_or(id).to_owned()
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    // Counts are far below 2^52: the conversions are exact.
    #[allow(clippy::cast_precision_loss)]
    let ratio = part as f64 / whole as f64;
    ratio * 100.0
}
