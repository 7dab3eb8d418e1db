//! `skillctl list` and `skillctl show`: what the index holds.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use serde_json::json;
use skills_index::Snapshot;
use skills_model::SkillRecord;

use crate::out::{visible, DiagnosticView, Object, RecordView, Seq, ShadowedView};
use crate::roots::RootArgs;
use crate::validate::Format;

/// List the skills every root provides, after precedence.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl list
  skillctl list --preset claude --shadowed
  skillctl list --no-defaults --root project=./skills --format json
  skillctl list --lint

Exit status: 0 listed, 2 usage error")]
pub(crate) struct ListArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Also list the skills that lost their name to a higher layer.
    #[arg(long)]
    shadowed: bool,
    /// Only skills with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Also lint the skills a model sees together: `description.overlap` names pairs whose
    /// descriptions a model could not tell apart.
    #[arg(long)]
    lint: bool,
}

/// Show one skill: its record, body, files and digest.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl show deploy
  skillctl show project:deploy --format json
  skillctl show ./skills/deploy

Exit status: 0 shown, 1 no such skill, 2 usage error")]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// A bare name (`deploy`), a qualified one (`project:deploy`), or a skill folder.
    name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// `text` on one line, at most `max` characters, into `flat` (cleared first, and kept from
/// line to line: a fresh string for each was most of the rest of the cost): cut at the last
/// word boundary that fits, with `…`.
fn shorten(flat: &mut String, text: &str, max: usize) {
    // Only as many words as reach past the line are flattened, a prefix of the whole text
    // flattened: descriptions run to 1,024 characters, and flattening each whole was a
    // twentieth of the CPU of `list` at 10,000 skills.
    flat.clear();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
            chars += 1;
        }
        flat.push_str(word);
        chars += word.chars().count();
        if chars > max {
            break;
        }
    }
    cut(flat, max)
}

/// `flat` (words, one space between) if it has at most `max` characters; else its first
/// `max - 1`, back to the last space, with `…`. Whatever follows the first `max`
/// characters of `flat` makes no difference.
fn cut(flat: &mut String, max: usize) {
    if flat.chars().count() <= max {
        return;
    }
    let room = flat
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(flat.as_str(), |(end, _)| &flat[..end]);
    let keep = match room.rfind(' ') {
        Some(space) if space > 0 => room[..space].trim_end_matches([',', ';', ':', '.']).len(),
        _ => room.len(),
    };
    flat.truncate(keep);
    flat.push('…');
}

pub(crate) fn list(args: &ListArgs) -> Result<ExitCode> {
    let index = args.roots.build_index(false)?;
    let snap = index.snapshot();
    let keep = |r: &SkillRecord| {
        args.tag
            .as_ref()
            .is_none_or(|t| r.frontmatter.tags.contains(t))
    };
    let lint = if args.lint {
        overlaps(&snap)
    } else {
        Vec::new()
    };
    let mut out = crate::stdout();
    match args.format {
        Format::Json => list_json(&mut out, &snap, &keep, args.lint.then_some(&lint))?,
        Format::Human => {
            list_human(&mut out, &snap, &keep, args.shadowed)?;
            for l in &lint {
                writeln!(out, "warning[{}]: {}", l.rule, visible(&l.message))?;
            }
        }
    }
    out.flush()?;
    // The process ends here: freeing every record first would only cost time (8 ms at
    // 10,000 skills); the exit returns the memory at once.
    std::mem::forget(snap);
    std::mem::forget(index);
    Ok(ExitCode::SUCCESS)
}

/// `list --format json`: the snapshot's diagnostics, generation, shadowed skills and the
/// skills `keep` keeps.
fn list_json(
    out: &mut impl std::io::Write,
    snap: &Snapshot,
    keep: &(impl Fn(&SkillRecord) -> bool + Sync),
    lint: Option<&Vec<Finding>>,
) -> Result<()> {
    // Written as it is serialised: no tree of the whole answer is built. The
    // records, most of it, are serialised a run at a time (`Object::array_field`).
    let mut doc = Object::new(out);
    doc.array_field(
        "diagnostics",
        snap.each_diagnostic(),
        |(path, d), element| {
            element.write_diagnostic(&DiagnosticView::at(path, d));
            Ok(())
        },
    )?;
    doc.field("generation", &snap.generation())?;
    if let Some(lint) = lint {
        doc.field("lint", lint)?;
    }
    doc.field(
        "shadowed",
        &Seq::new(
            snap.shadowed()
                .iter()
                .filter(|s| keep(&s.record))
                .map(ShadowedView::of),
        ),
    )?;
    doc.array_field("skills", snap.skills().filter(|r| keep(r)), |r, element| {
        let unmet = snap.unmet(r);
        element.write_record(&RecordView::of(r).unavailable(&unmet))
    })?;
    doc.end()?;
    writeln!(out)?;
    Ok(())
}

/// A lint finding over several skills (`list --lint`).
#[derive(Debug, serde::Serialize)]
struct Finding {
    rule: &'static str,
    /// The skills it names, by qualified name.
    skills: Vec<String>,
    similarity: f64,
    /// The words both hold, heaviest first.
    shared: Vec<String>,
    message: String,
}

/// `description.overlap` over the skills a model may be offered together: resolved, not
/// `disable-model-invocation`, and a pair only when some session sees both (their scopes
/// meet).
fn overlaps(snap: &Snapshot) -> Vec<Finding> {
    let offered: Vec<&Arc<SkillRecord>> = snap
        .skills()
        .filter(|r| r.model_invocable())
        .filter(|r| r.frontmatter.scope.as_deref().is_none_or(|s| !s.unreadable))
        .collect();
    let described: Vec<skills_index::Described<'_>> = offered
        .iter()
        .map(|r| skills_index::Described::from(&***r))
        .collect();
    skills_index::overlaps(&described)
        .into_iter()
        .filter(|o| scopes_meet(offered[o.first], offered[o.second]))
        .map(|o| {
            let (a, b) = (
                offered[o.first].qualified_name(),
                offered[o.second].qualified_name(),
            );
            Finding {
                rule: skills_model::Rule::DescriptionOverlap.id(),
                message: skills_index::overlap_message(&o, &a, &b),
                similarity: (f64::from(o.similarity) * 1000.0).round() / 1000.0,
                shared: o.shared,
                skills: vec![a, b],
            }
        })
        .collect()
}

/// Whether some session may see both skills: on no dimension do both scopes name values
/// and share none.
fn scopes_meet(a: &SkillRecord, b: &SkillRecord) -> bool {
    let (Some(x), Some(y)) = (
        a.frontmatter.scope.as_deref(),
        b.frontmatter.scope.as_deref(),
    ) else {
        return true;
    };
    [
        (&x.agents, &y.agents),
        (&x.tenants, &y.tenants),
        (&x.environments, &y.environments),
    ]
    .iter()
    .all(|(p, q)| p.is_empty() || q.is_empty() || p.iter().any(|v| q.contains(v)))
}

/// `list`: a line for each skill `keep` keeps (then each shadowed one, with `--shadowed`),
/// and the counts.
fn list_human(
    out: &mut impl std::io::Write,
    snap: &Snapshot,
    keep: &impl Fn(&SkillRecord) -> bool,
    with_shadowed: bool,
) -> Result<()> {
    // What is shown, after --tag: the counts and the column width follow it.
    let shown: Vec<&Arc<SkillRecord>> = snap.skills().filter(|r| keep(r)).collect();
    let shadowed: Vec<_> = if with_shadowed {
        snap.shadowed().iter().filter(|s| keep(&s.record)).collect()
    } else {
        Vec::new()
    };
    let width = shown
        .iter()
        .map(|r| visible(&r.qualified_name()).len())
        .chain(
            shadowed
                .iter()
                .map(|s| visible(&s.record.qualified_name()).len()),
        )
        .max()
        .unwrap_or(0);
    let mut description = String::new();
    for r in &shown {
        shorten(&mut description, &r.description, 100);
        writeln!(
            out,
            "{:width$}  {}",
            visible(&r.qualified_name()),
            visible(&description)
        )?;
    }
    for s in &shadowed {
        let name = s.record.qualified_name();
        let shown_name = visible(&name);
        if s.contested {
            writeln!(
                out,
                "{shown_name:width$}  (contested with {}: no skill holds the bare name)",
                visible(&s.shadowed_by)
            )?;
        } else if name == s.shadowed_by {
            // Two skills of one layer share a qualified name: the winner's path says which.
            writeln!(
                out,
                "{shown_name:width$}  (shadowed by {} at {})",
                visible(&s.shadowed_by),
                visible(&s.winner_path.display().to_string())
            )?;
        } else {
            writeln!(
                out,
                "{shown_name:width$}  (shadowed by {})",
                visible(&s.shadowed_by)
            )?;
        }
    }
    let errors = snap.each_diagnostic().filter(|(_, d)| d.is_error()).count();
    let hidden = snap.shadowed().iter().filter(|s| keep(&s.record)).count();
    let n = |count: usize, one: &str, many: &str| {
        format!("{count} {}", if count == 1 { one } else { many })
    };
    writeln!(
        out,
        "{} ({} shadowed, {} in skill files; `skillctl validate` shows them)",
        n(shown.len(), "skill", "skills"),
        hidden,
        n(errors, "error", "errors")
    )?;
    Ok(())
}

pub(crate) fn show(args: &ShowArgs) -> Result<ExitCode> {
    // A skill folder given as the argument is read on its own, as the reference CLI does.
    // It is loaded as that folder's own skill: by its record, not by its name, which a
    // sibling folder may hold too.
    let loaded = if crate::author::is_skill_path(&args.name) {
        let record = crate::author::record_of(std::path::Path::new(&args.name))?;
        let folder = record.dir().to_path_buf();
        let parent = folder.parent().unwrap_or(&folder).to_path_buf();
        let index = skills_index::SkillIndex::builder()
            .root(skills_model::Layer::Project, parent)
            .build()?;
        if index
            .snapshot()
            .records()
            .iter()
            .all(|r| r.path != record.path)
        {
            anyhow::bail!(
                "{} holds no skill the loader reads: it does not search folders named `target` or `node_modules`, or hidden ones (`skillctl validate` and `skillctl prompt` read the folder as given)",
                args.name
            );
        }
        let loaded = index.load_record(&record);
        (loaded, index)
    } else {
        let index = args.roots.build_index(false)?;
        (index.load(&args.name), index)
    };
    let (loaded, index) = loaded;
    let snapshot = index.snapshot();
    let unmet = snapshot
        .records()
        .iter()
        .find(|r| loaded.as_ref().is_ok_and(|s| s.record.path == r.path))
        .map(|r| snapshot.unmet(r))
        .unwrap_or_default();
    let skill = match loaded {
        Ok(skill) => skill,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "skillctl: {}",
                crate::out::one_line(&e.to_string())
            );
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = crate::stdout();
    let r = &skill.record;
    match args.format {
        Format::Json => {
            // One skill: a tree is cheap here, and its keys come out sorted.
            let mut doc = serde_json::to_value(RecordView::of(r))?;
            doc["frontmatter"] = serde_json::to_value(&*r.frontmatter)?;
            doc["body"] = json!(skill.body);
            doc["files"] = serde_json::to_value(&skill.files)?;
            doc["digest"] = json!(skill.digest);
            doc["diagnostics"] = serde_json::to_value(&*r.diagnostics)?;
            if let Some(needs) = skills_model::Requires::of(&r.frontmatter) {
                doc["requires"] = serde_json::to_value(&*needs)?;
            }
            if !unmet.is_empty() {
                doc["unavailable"] = serde_json::to_value(&unmet)?;
            }
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Human => {
            writeln!(
                out,
                "{} ({})",
                visible(&r.qualified_name()),
                visible(&r.path.display().to_string())
            )?;
            writeln!(out, "{}", visible(&r.description))?;
            writeln!(out, "digest: {}", skill.digest)?;
            if let Some(needs) = skills_model::Requires::of(&r.frontmatter) {
                writeln!(
                    out,
                    "requires: {}",
                    visible(&serde_json::to_string(&*needs)?)
                )?;
            }
            if let Some(security) = &r.frontmatter.security {
                writeln!(
                    out,
                    "security: {}",
                    visible(&serde_json::to_string(security)?)
                )?;
            }
            for why in &unmet {
                writeln!(
                    out,
                    "unavailable: {} ({})",
                    visible(&why.to_string()),
                    why.fix()
                )?;
            }
            for f in &skill.files {
                writeln!(out, "file: {} ({} bytes)", visible(&f.path), f.size)?;
            }
            writeln!(out, "\n{}", visible(&skill.body))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// List every skill whose needs this machine (or the host's tools) does not meet, and
/// what to install or set.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl doctor
  skillctl doctor --host-tool Bash --host-tool web --format json

Exit status: 0 every skill's needs are met, 1 some are not, 2 usage error")]
pub(crate) struct DoctorArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// A tool the host offers the model (repeatable); without any, tool needs are not
    /// judged.
    #[arg(long, value_name = "NAME")]
    host_tool: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub(crate) fn doctor(args: &DoctorArgs) -> Result<ExitCode> {
    let index = args.roots.build_index(false)?;
    let snap = index.snapshot();
    let offered = (!args.host_tool.is_empty()).then_some(args.host_tool.as_slice());
    let mut found = Vec::new();
    for r in snap.skills() {
        let Some(needs) = skills_model::Requires::of(&r.frontmatter) else {
            continue;
        };
        let mut unmet = snap.unmet(r);
        unmet.extend(needs.unmet_tools(offered));
        if !unmet.is_empty() {
            found.push((r, unmet));
        }
    }
    let mut out = crate::stdout();
    match args.format {
        Format::Json => {
            let skills: Vec<serde_json::Value> = found
                .iter()
                .map(|(r, unmet)| {
                    json!({
                        "qualified_name": r.qualified_name(),
                        "path": r.path,
                        "unavailable": unmet,
                        "fix": unmet.iter().map(skills_model::Unmet::fix).collect::<Vec<_>>(),
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &json!({"skills": skills}))?;
            writeln!(out)?;
        }
        Format::Human => {
            for (r, unmet) in &found {
                writeln!(out, "{}", visible(&r.qualified_name()))?;
                for why in unmet {
                    writeln!(out, "  {}: {}", visible(&why.to_string()), why.fix())?;
                }
            }
            writeln!(
                out,
                "{} of {} skills have needs unmet here",
                found.len(),
                snap.len()
            )?;
        }
    }
    out.flush()?;
    Ok(if found.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    /// `shorten` flattens only the words it needs: what it gives is what the whole text
    /// flattened then [`cut`](super::cut) gives, for texts shorter than, as long as, one
    /// past and far past the room, with runs of spaces, tabs and newlines, long words and
    /// characters of several bytes.
    #[test]
    fn a_shortened_text_is_the_whole_text_flattened_and_cut() {
        let shorten = |text: &str, max: usize| {
            let mut flat = "left from the line before".to_owned();
            super::shorten(&mut flat, text, max);
            flat
        };
        let whole = |text: &str, max: usize| {
            let mut flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            super::cut(&mut flat, max);
            flat
        };
        let texts = [
            "",
            "   ",
            "one",
            "  one \n\t two  ",
            "abcd efgh",
            "abcd efghi",
            "abcd, efgh. ijkl",
            "unbrokenwordlongerthantheroom and more",
            "é日 ü ß\u{3000}全角 spaces",
            "a b c d e f g h i j k l m n o p",
        ];
        for (text, max, want) in [
            ("one  two\nthree", 100, "one two three"),
            ("abcd, efgh. ijkl", 12, "abcd…"),
            ("abcd efgh ijkl", 11, "abcd efgh…"),
            ("unbrokenword", 5, "unbr…"),
            ("é日 ü ß", 4, "é日…"),
            (" x", 0, "…"),
        ] {
            assert_eq!(shorten(text, max), want, "{text:?} in {max}");
        }
        for text in texts {
            let long = text.repeat(40);
            for text in [text, long.as_str()] {
                for max in [0, 1, 2, 4, 9, 10, 11, 12, 20, 100] {
                    assert_eq!(shorten(text, max), whole(text, max), "{text:?} in {max}");
                }
            }
        }
    }
}
