//! `skillctl validate`: the strict validator's command line (human and JSON output).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use skills_index::{validate_paths, SkillReport};
use skills_model::{Diagnostic, Severity};
use skills_parser::SkillParser;

use crate::out::{DiagnosticView, Seq};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Human,
    Json,
}

/// Check skills against the Agent Skills specification.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl validate my-skill
  skillctl validate --lint --format json skills/

Exit status: 0 every skill valid (warnings allowed), 1 a skill is invalid, 2 usage error or a path that does not exist")]
pub(crate) struct Args {
    /// Run the lint rules too (warnings only), `description.overlap` among the skills
    /// given included.
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
    let validation = validate_paths(&args.paths, &parser);
    for (dir, e) in &validation.problems {
        let _ = writeln!(
            std::io::stderr(),
            "warning: cannot list {}: {}",
            crate::out::one_line(&dir.display().to_string()),
            crate::out::one_line(&e.to_string())
        );
    }
    let missing_path = validation.missing_paths;
    let mut reports = validation.reports;
    if args.lint {
        overlap(&mut reports);
    }
    let mut out = crate::stdout();
    match args.format {
        Format::Human => out.write_all(human(&reports, colour()).as_bytes())?,
        Format::Json => json(&reports, &mut out)?,
    }
    out.flush()?;
    Ok(if missing_path {
        ExitCode::from(2)
    } else if reports.iter().all(SkillReport::is_valid) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `description.overlap` over the skills checked together, which `validate --lint` takes
/// as one catalogue: a warning on each skill of a pair.
fn overlap(reports: &mut [SkillReport]) {
    let read: Vec<(usize, String, skills_model::Frontmatter)> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let fm = &r.parsed.as_ref()?.frontmatter;
            fm.description.as_deref().filter(|d| !d.trim().is_empty())?;
            let name = r
                .name()
                .map(str::to_owned)
                .or_else(|| Some(r.dir.file_name()?.to_string_lossy().into_owned()))?;
            Some((i, name, fm.clone()))
        })
        .collect();
    let described: Vec<skills_index::Described<'_>> = read
        .iter()
        .map(|(_, name, fm)| skills_index::Described {
            name,
            description: fm.description.as_deref().unwrap_or(""),
            when_to_use: fm.when_to_use.as_deref(),
            tags: &fm.tags,
        })
        .collect();
    for o in skills_index::overlaps(&described) {
        let (a, b) = (&read[o.first], &read[o.second]);
        let message = skills_index::overlap_message(&o, &a.1, &b.1);
        for i in [a.0, b.0] {
            reports[i].diagnostics.push(Diagnostic::warning(
                skills_model::Rule::DescriptionOverlap,
                message.clone(),
            ));
        }
    }
}

struct Totals {
    valid: usize,
    invalid: usize,
    /// Paths given that do not exist: not skills, so neither valid nor invalid.
    missing: usize,
    errors: usize,
    warnings: usize,
}

/// Whether a report is for a path that does not exist (not a skill at all).
/// A path given that reaches nothing: not there, or not reachable (a link loop, a
/// dangling link, a folder it may not enter), as `validate_paths` found it.
fn is_missing_path(r: &SkillReport) -> bool {
    r.parsed.is_none() && std::fs::metadata(&r.dir).is_err()
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
    let missing = reports.iter().filter(|r| is_missing_path(r)).count();
    Totals {
        valid,
        invalid: reports.len() - valid - missing,
        missing,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
    }
}

/// Whether to colour human output: only on a terminal, never with `NO_COLOR` set to
/// anything non-empty (no-color.org); `CLICOLOR_FORCE` (non-empty, not `0`) colours a pipe
/// too.
fn colour() -> bool {
    use std::io::IsTerminal as _;
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    set("CLICOLOR_FORCE") || std::io::stdout().is_terminal()
}

fn human(reports: &[SkillReport], colour: bool) -> String {
    let mut out = String::new();
    for report in reports {
        for d in &report.diagnostics {
            render(&mut out, report, d, colour);
        }
    }
    let t = totals(reports);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let missing = match t.missing {
        0 => String::new(),
        1 => ", 1 path not found".to_owned(),
        n => format!(", {n} paths not found"),
    };
    let _ = writeln!(
        out,
        "{}: {} valid, {} invalid{missing} ({}, {})",
        if t.invalid == 0 && t.missing == 0 {
            "ok"
        } else {
            "failed"
        },
        t.valid,
        t.invalid,
        plural(t.errors, "error"),
        plural(t.warnings, "warning"),
    );
    out
}

/// One diagnostic in the style of rustc: the header, the place, the line and a marker.
fn render(out: &mut String, report: &SkillReport, d: &Diagnostic, colour: bool) {
    let paint = match (colour, d.severity) {
        (false, _) => ("", ""),
        (true, Severity::Error) => ("\x1b[1;31m", "\x1b[0m"),
        (true, Severity::Warning) => ("\x1b[1;33m", "\x1b[0m"),
        (true, Severity::Info) => ("\x1b[1;36m", "\x1b[0m"),
    };
    let _ = writeln!(
        out,
        "{}{}[{}]{}: {}",
        paint.0,
        d.severity,
        d.rule,
        paint.1,
        crate::out::visible(&d.message)
    );
    let file = report.file.display().to_string();
    let file = crate::out::visible(&file);
    let (Some(line), Some(column)) = (d.line, d.column) else {
        let _ = writeln!(out, " --> {file}\n");
        return;
    };
    let width = line.to_string().len();
    let _ = writeln!(out, "{:width$}--> {file}:{line}:{column}", "");
    let text = String::from_utf8_lossy(&report.source);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if let Some(source_line) = lines(text).nth(line.saturating_sub(1) as usize) {
        let (shown, before) = quoted(source_line, column.saturating_sub(1) as usize);
        // Under the column as shown: an escaped character before it takes its escape's width.
        let pad: String = crate::out::visible(&before)
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = writeln!(out, "{:width$} |", "");
        let _ = writeln!(out, "{line} | {}", crate::out::visible(&shown));
        let _ = writeln!(out, "{:width$} | {pad}^", "");
    }
    out.push('\n');
}

/// At most [`QUOTED`] characters of `line` around the 0-based character `column`, with `…`
/// where the line is cut (a line cut mid-word read as if the word ended there), and what is
/// shown before the column.
fn quoted(line: &str, column: usize) -> (String, String) {
    let chars: Vec<char> = line.chars().collect();
    let start = if column < QUOTED - 10 {
        0
    } else {
        column
            .saturating_sub(QUOTED / 2)
            .min(chars.len().saturating_sub(QUOTED))
    };
    let end = chars.len().min(start + QUOTED);
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&chars[start..end]);
    let before_len = shown.chars().count() - (end - start) + column.clamp(start, end) - start;
    let before = shown.chars().take(before_len).collect();
    if end < chars.len() {
        shown.push('…');
    }
    (shown, before)
}

/// How many characters of a source line a diagnostic quotes.
const QUOTED: usize = 200;

/// A file's lines as places count them: YAML breaks lines at a carriage return alone too,
/// so a frontmatter holding one has its later places a line further than `str::lines`
/// counts (which showed the line before the one meant).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let now = rest?;
        match now.find(['\r', '\n']) {
            Some(i) => {
                let skip = if now[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&now[i + skip..]).filter(|r| !r.is_empty());
                Some(&now[..i])
            }
            None => {
                rest = None;
                Some(now)
            }
        }
    })
}

/// The reports as one JSON document, written as it is serialised (keys in alphabetical
/// order, as before).
fn json(reports: &[SkillReport], out: &mut impl std::io::Write) -> anyhow::Result<()> {
    #[derive(serde::Serialize)]
    struct Skill<'a, D> {
        diagnostics: D,
        name: Option<&'a str>,
        path: String,
        valid: bool,
    }
    #[derive(serde::Serialize)]
    struct Summary {
        checked: usize,
        errors: usize,
        invalid: usize,
        missing: usize,
        valid: usize,
        warnings: usize,
    }
    #[derive(serde::Serialize)]
    struct Doc<S> {
        skills: S,
        summary: Summary,
    }
    let t = totals(reports);
    let doc = Doc {
        skills: Seq::new(reports.iter().map(|r| Skill {
            diagnostics: Seq::new(r.diagnostics.iter().map(DiagnosticView::of)),
            name: r.name(),
            path: r.dir.display().to_string(),
            valid: r.is_valid(),
        })),
        summary: Summary {
            checked: reports.len(),
            errors: t.errors,
            invalid: t.invalid,
            missing: t.missing,
            valid: t.valid,
            warnings: t.warnings,
        },
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Regression (issue 37): a source line longer than the quote was cut mid-word with
    /// nothing to say so, and a caret past the cut sat at its end. The quote is marked `…`
    /// where cut, and holds the column.
    #[test]
    fn a_quoted_line_is_marked_where_cut_and_holds_the_column() {
        let long: String = (0..60).map(|i| format!("word{i:02} ")).collect();
        let tail = &long[long.len() - 200..];
        let table: [(&str, usize, String, String); 4] = [
            ("short: line", 7, "short: line".into(), "short: ".into()),
            (&long, 4, format!("{}…", &long[..200]), "word".into()),
            (
                &long,
                419,
                format!("…{tail}"),
                format!("…{}", &tail[..tail.len() - 1]),
            ),
            (
                &long,
                300,
                format!("…{}…", &long[200..400]),
                format!("…{}", &long[200..300]),
            ),
        ];
        for (line, column, shown, before) in table {
            assert_eq!(super::quoted(line, column), (shown, before), "{column}");
        }
    }

    /// Lines break at `\r\n`, `\n` and a `\r` alone, as YAML's places count them.
    #[test]
    fn source_lines_break_where_yaml_breaks_them() {
        let table: [(&str, &[&str]); 7] = [
            ("a\nb\n", &["a", "b"]),
            ("a\r\nb\r\n", &["a", "b"]),
            ("a\rb\nc", &["a", "b", "c"]),
            ("a\n\nb", &["a", "", "b"]),
            ("a\r\rb", &["a", "", "b"]),
            ("a", &["a"]),
            ("a\r", &["a"]),
        ];
        for (text, want) in table {
            assert_eq!(super::lines(text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }
}
