//! `cargo xtask lint-rates`: how often each lint rule fires over the real-world corpus.
//!
//! Every `SKILL.md` under the corpus is parsed in process with the lint rules on, given the
//! same facts `skillctl validate` gives the parser (its folder's name, whether the folder has
//! `references/`). For each rule it prints the number of skills it fires on (a skill counts
//! once however many findings it has), out of the total, and the percentage; then the same
//! counts per top-level folder of the corpus (one folder per source repository). A noisy
//! rule is one that fires on most skills: its warning stops being read.
//!
//! `description.overlap` judges pairs, not one file: the skills of one source (one
//! repository, installed together) are compared with each other, as `list --lint` compares
//! the skills a session sees, and a skill counts when it is in at least one pair.
//! `--list description.overlap` prints each pair (similarity, both paths, shared words);
//! `--near LOW` prints the pairs from LOW up to the threshold instead (the near misses).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use skills_model::{Rule, Severity};
use skills_parser::{ParseInput, SkillParser};

/// The lint rules, in the order they are reported.
const LINT_RULES: [Rule; 7] = [
    Rule::ContextBudget,
    Rule::DescriptionQuality,
    Rule::NoGenericInstructions,
    Rule::ProgressiveDisclosure,
    Rule::DefaultsOverMenus,
    Rule::GotchasPresent,
    Rule::DescriptionOverlap,
];

/// What the overlap reads of one skill: its path under the corpus and its fields.
struct Read {
    rel: std::path::PathBuf,
    name: String,
    description: String,
    when_to_use: Option<String>,
    tags: Vec<String>,
}

/// Per source: its skills as the overlap reads them.
type Sources = BTreeMap<String, Vec<Read>>;

/// Per source (top-level folder): the number of skills, then per rule the skills it fires on.
type Totals = BTreeMap<String, (usize, BTreeMap<&'static str, usize>)>;

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let corpus = crate::corpus_dir(args)?;
    let list = crate::flag(args, "--list");
    let files = crate::skill_files(&corpus);
    if files.is_empty() {
        bail!("no SKILL.md under {}", corpus.display());
    }
    let (mut totals, unreadable, sources) = tally(&corpus, &files, list);
    let near = crate::flag(args, "--near")
        .map(str::parse::<f32>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--near: {e}"))?;
    overlap(&mut totals, &sources, list, near);
    if list.is_some() || near.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    print_rates(&corpus, &totals, unreadable);
    print_per_source(&totals);
    Ok(ExitCode::SUCCESS)
}

/// Lints every file: the totals per source, and how many files could not be read. With
/// `list`, prints each finding of that rule as it goes.
fn tally(
    corpus: &Path,
    files: &[std::path::PathBuf],
    list: Option<&str>,
) -> (Totals, usize, Sources) {
    let parser = SkillParser::builder().lint(true).build();
    let mut totals = Totals::new();
    let mut sources = Sources::new();
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
        let fm = &parsed.frontmatter;
        sources.entry(group.clone()).or_default().push(Read {
            rel: rel.to_path_buf(),
            name: fm.name.as_deref().unwrap_or(&dir_name).to_owned(),
            description: fm.description.as_deref().unwrap_or("").to_owned(),
            when_to_use: fm.when_to_use.as_deref().map(str::to_owned),
            tags: fm.tags.clone(),
        });
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
    (totals, unreadable, sources)
}

/// `description.overlap` within each source: the skills in a pair counted in `totals`;
/// with `list`, each pair printed; with `near`, the pairs from `near` up to the threshold.
fn overlap(totals: &mut Totals, sources: &Sources, list: Option<&str>, near: Option<f32>) {
    let rule = Rule::DescriptionOverlap.id();
    for (group, reads) in sources {
        let described: Vec<skills_index::Described<'_>> = reads
            .iter()
            .map(|r| skills_index::Described {
                name: &r.name,
                description: &r.description,
                when_to_use: r.when_to_use.as_deref(),
                tags: &r.tags,
            })
            .collect();
        let found = skills_index::overlaps(&described);
        let mut in_pair = vec![false; reads.len()];
        for o in &found {
            in_pair[o.first] = true;
            in_pair[o.second] = true;
            if list == Some(rule) {
                let (a, b) = (&reads[o.first], &reads[o.second]);
                println!(
                    "{:.3}\t{}\t{}\t{}",
                    o.similarity,
                    a.rel.display(),
                    b.rel.display(),
                    o.shared.join(" ")
                );
            }
        }
        if let Some(low) = near {
            for (a, b, sim) in skills_index::similarities(&described) {
                if sim >= low && sim < skills_index::OVERLAP_THRESHOLD {
                    let (a, b) = (&reads[a], &reads[b]);
                    println!("{sim:.3}\t{}\t{}", a.rel.display(), b.rel.display());
                }
            }
        }
        let fires = in_pair.iter().filter(|x| **x).count();
        let entry = totals.entry(group.clone()).or_default();
        *entry.1.entry(rule).or_default() += fires;
    }
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

/// A column header for a rule: its id's first word (after the dot of a dotted id).
fn short(id: &str) -> String {
    if let Some((_, last)) = id.split_once('.') {
        return last.to_owned();
    }
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
