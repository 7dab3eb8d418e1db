//! `skillctl validate`: the strict validator's command line (human and JSON output).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use skills_index::{check_candidate, SkillReport, DEFAULT_SKILL_FILE_LIMIT};
use skills_model::{Diagnostic, Severity};
use skills_parser::SkillParser;
use skills_storage::{discover, Candidate, DiscoveryOptions, SKILL_FILE};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Human,
    Json,
}

/// Check skills against the Agent Skills specification.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run the lint rules too (warnings only).
    #[arg(long)]
    lint: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Skill directories, SKILL.md files, or folders to search for skills.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let parser = SkillParser::builder().lint(args.lint).build();
    let mut reports = Vec::new();
    let mut pending: Vec<(PathBuf, Candidate, usize)> = Vec::new();
    let mut positions: HashMap<PathBuf, usize> = HashMap::new();
    let mut missing_path = false;
    for path in &args.paths {
        let Ok(meta) = std::fs::metadata(path) else {
            missing_path = true;
            reports.push(SkillReport::missing(
                path,
                format!("{}: no such file or directory", path.display()),
            ));
            continue;
        };
        let candidates = if meta.is_dir() {
            let found = discover(path, &DiscoveryOptions::validate());
            for (dir, e) in &found.problems {
                tracing_free_warning(dir, e);
            }
            if found.candidates.is_empty() {
                reports.push(SkillReport::missing(
                    path,
                    "no SKILL.md in or below this directory",
                ));
            }
            found.candidates
        } else {
            match file_candidate(path) {
                Some(c) => vec![c],
                None => {
                    reports.push(SkillReport::missing(
                        path,
                        "not a SKILL.md file or a directory holding skills",
                    ));
                    Vec::new()
                }
            }
        };
        for candidate in candidates {
            let key =
                std::fs::canonicalize(&candidate.dir).unwrap_or_else(|_| candidate.dir.clone());
            match positions.get(&key).map(|i| &mut pending[*i]) {
                // A skill reached twice (through a link) is checked once, under the folder
                // whose name is its real one when there is such a path, so the verdict does
                // not depend on the order of the paths.
                Some((k, existing, _)) => {
                    if k.file_name() == candidate.dir.file_name()
                        && existing.dir.file_name() != k.file_name()
                    {
                        *existing = candidate;
                    }
                }
                None => {
                    positions.insert(key.clone(), pending.len());
                    pending.push((key, candidate, reports.len()));
                }
            }
        }
    }
    let mut checked: Vec<(usize, SkillReport)> = pending
        .into_iter()
        .map(|(_, c, at)| (at, check_candidate(&c, &parser, DEFAULT_SKILL_FILE_LIMIT)))
        .collect();
    // Keep reports in the order their paths were given, missing-path reports included.
    for (offset, (at, report)) in checked.drain(..).enumerate() {
        reports.insert((at + offset).min(reports.len()), report);
    }
    let text = match args.format {
        Format::Human => human(&reports),
        Format::Json => json(&reports)?,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if missing_path {
        ExitCode::from(2)
    } else if reports.iter().all(SkillReport::is_valid) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn tracing_free_warning(dir: &Path, e: &std::io::Error) {
    let _ = writeln!(
        std::io::stderr(),
        "warning: cannot list {}: {e}",
        dir.display()
    );
}

/// A file given directly: `SKILL.md`, or a wrongly-cased `skill.md`.
fn file_candidate(path: &Path) -> Option<Candidate> {
    let name = path.file_name()?.to_str()?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if name == SKILL_FILE {
        Some(Candidate {
            dir,
            skill_file: Some(path.to_path_buf()),
            misnamed: None,
        })
    } else if name.eq_ignore_ascii_case(SKILL_FILE) {
        Some(Candidate {
            dir,
            skill_file: None,
            misnamed: Some(path.to_path_buf()),
        })
    } else {
        None
    }
}

struct Totals {
    valid: usize,
    invalid: usize,
    errors: usize,
    warnings: usize,
}

fn totals(reports: &[SkillReport]) -> Totals {
    let count = |sev| {
        reports
            .iter()
            .flat_map(|r| &r.diagnostics)
            .filter(|d| d.severity == sev)
            .count()
    };
    let valid = reports.iter().filter(|r| r.is_valid()).count();
    Totals {
        valid,
        invalid: reports.len() - valid,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
    }
}

fn human(reports: &[SkillReport]) -> String {
    let mut out = String::new();
    for report in reports {
        for d in &report.diagnostics {
            render(&mut out, report, d);
        }
    }
    let t = totals(reports);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{}: {} valid, {} invalid ({}, {})",
        if t.invalid == 0 { "ok" } else { "failed" },
        t.valid,
        t.invalid,
        plural(t.errors, "error"),
        plural(t.warnings, "warning"),
    );
    out
}

/// One diagnostic in the style of rustc: the header, the place, the line and a marker.
fn render(out: &mut String, report: &SkillReport, d: &Diagnostic) {
    let _ = writeln!(out, "{}[{}]: {}", d.severity, d.rule, d.message);
    let file = report.file.display();
    let (Some(line), Some(column)) = (d.line, d.column) else {
        let _ = writeln!(out, " --> {file}\n");
        return;
    };
    let width = line.to_string().len();
    let _ = writeln!(out, "{:width$}--> {file}:{line}:{column}", "");
    let text = String::from_utf8_lossy(&report.source);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if let Some(source_line) = text.lines().nth(line.saturating_sub(1) as usize) {
        let shown: String = source_line.chars().take(200).collect();
        let pad: String = shown
            .chars()
            .take(column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = writeln!(out, "{:width$} |", "");
        let _ = writeln!(out, "{line} | {shown}");
        let _ = writeln!(out, "{:width$} | {pad}^", "");
    }
    out.push('\n');
}

fn json(reports: &[SkillReport]) -> anyhow::Result<String> {
    let skills: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            serde_json::json!({
                "path": r.dir.display().to_string(),
                "name": r.name(),
                "valid": r.is_valid(),
                "diagnostics": r.diagnostics,
            })
        })
        .collect();
    let t = totals(reports);
    let doc = serde_json::json!({
        "skills": skills,
        "summary": {
            "checked": reports.len(),
            "valid": t.valid,
            "invalid": t.invalid,
            "errors": t.errors,
            "warnings": t.warnings,
        },
    });
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}
