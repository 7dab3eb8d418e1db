//! `skillctl publish`: a root's skills as a well-known index (the Agent Skills discovery
//! format, schema 0.2.0) that any static web server can serve, with a catalogue page for
//! people beside it.
//!
//! Every skill must pass the strict rules, or nothing is written. A skill that is a lone
//! `SKILL.md` is published as that file (`skill-md`); any other as a `.tar.gz` of its folder
//! (`archive`), holding exactly the files the index lists for a skill
//! ([`SkillSource::files`]: no hidden entries, no `node_modules`, links inside the folder
//! stored as the files they lead to). The output depends only on the skills' bytes (and
//! owner-executable bits) and the publication date: entries and members sorted, every
//! member owned by 0:0 with mtime 0, a gzip header with no name, no time and OS byte 255.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use sha2::{Digest as _, Sha256};
use skills_index::{validate_paths, SkillReport};
use skills_model::Severity;
use skills_parser::SkillParser;
use skills_storage::{DiscoveryOptions, FsSource, SkillSource, SKILL_FILE};

/// The schema of the index written (the newest the discovery format defines).
pub(crate) const INDEX_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where the index goes below `--out`.
const WELL_KNOWN: &str = ".well-known/agent-skills";
/// The largest file a skill may publish.
const MAX_FILE: u64 = 32 << 20;
/// The most bytes one skill's files may add up to (what a reader unpacks at most).
const MAX_SKILL: u64 = 64 << 20;
/// The most files one archive may hold (what a reader unpacks at most).
const MAX_FILES: usize = 2_000;
/// The most bytes one artifact may have (what a reader downloads at most).
const MAX_ARTIFACT: usize = 32 << 20;

/// Publish a root's skills as a well-known index for a static web server.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl publish skills --out site
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) skillctl publish skills --out site

Writes OUT/.well-known/agent-skills/: index.json, index.html, NAME/SKILL.md for a lone
SKILL.md and NAME.tar.gz for any other skill. The publication date shown on index.html is
--published, else SOURCE_DATE_EPOCH, else 1970-01-01T00:00:00Z.

Exit status: 0 published, 1 a skill is invalid (nothing written), 2 usage error or unreadable input")]
pub(crate) struct PublishArgs {
    /// A folder of skills (searched as `validate` searches), or one skill folder.
    root: PathBuf,
    /// The folder to write into (its .well-known/agent-skills is replaced whole).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// When the skills are published, for index.html: an RFC 3339 date or time
    /// (2026-03-12 or 2026-03-12T10:00:00Z).
    #[arg(long, value_name = "DATE")]
    published: Option<String>,
}

/// How a skill is distributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A lone `SKILL.md`.
    SkillMd,
    /// A `.tar.gz` of the folder.
    Archive,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::SkillMd => "skill-md",
            Kind::Archive => "archive",
        }
    }
}

/// One skill ready to write: its artifact and its index entry.
#[derive(Debug)]
struct Artifact {
    name: String,
    description: String,
    kind: Kind,
    /// Relative to the index's folder (and so to the index URL).
    url: String,
    digest: String,
    bytes: Vec<u8>,
}

pub(crate) fn run(args: &PublishArgs) -> Result<ExitCode> {
    let published = published_at(args.published.as_deref())?;
    let Some(skills) = valid_skills(&args.root)? else {
        return Ok(ExitCode::from(1));
    };
    let mut artifacts = skills
        .iter()
        .map(artifact)
        .collect::<Result<Vec<Artifact>>>()?;
    artifacts.sort_by(|a, b| a.name.cmp(&b.name));
    let folder = write_folder(&args.out, &artifacts, &published)?;
    let mut out = crate::stdout();
    writeln!(
        out,
        "published {} skill{} to {}",
        artifacts.len(),
        if artifacts.len() == 1 { "" } else { "s" },
        crate::out::one_line(&folder.join("index.json").display().to_string())
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The publication date, RFC 3339 in UTC to the second: `--published`, else
/// `SOURCE_DATE_EPOCH`, else the Unix epoch (never the clock: the output stays the same).
fn published_at(option: Option<&str>) -> Result<String> {
    let time = if let Some(text) = option {
        parse_date(text).with_context(|| format!("--published {text:?}"))?
    } else if let Some(epoch) = std::env::var_os("SOURCE_DATE_EPOCH") {
        let text = epoch.to_string_lossy();
        let secs: u64 = text.trim().parse().with_context(|| {
            format!("SOURCE_DATE_EPOCH {text:?} is not a whole number of seconds")
        })?;
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    } else {
        SystemTime::UNIX_EPOCH
    };
    Ok(humantime::format_rfc3339_seconds(time).to_string())
}

/// An RFC 3339 time, or a bare date (midnight UTC).
fn parse_date(text: &str) -> Result<SystemTime> {
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    humantime::parse_rfc3339_weak(full.trim_end_matches('Z'))
        .or_else(|_| humantime::parse_rfc3339(&full))
        .map_err(|e| anyhow::anyhow!("expected 2026-03-12 or 2026-03-12T10:00:00Z: {e}"))
}

/// The skills under `root`, each valid and each name once; `None` (after saying why on
/// standard error) when one is not.
fn valid_skills(root: &Path) -> Result<Option<Vec<SkillReport>>> {
    if !root.exists() {
        bail!("{} does not exist", root.display());
    }
    let validation = validate_paths(&[root.to_path_buf()], &SkillParser::builder().build());
    if let Some((dir, e)) = validation.problems.first() {
        bail!("cannot list {}: {e}", dir.display());
    }
    let reports = validation.reports;
    if reports.iter().all(|r| r.parsed.is_none()) {
        bail!("no skill found under {}", root.display());
    }
    let mut err = std::io::stderr().lock();
    let invalid: Vec<&SkillReport> = reports.iter().filter(|r| !r.is_valid()).collect();
    for report in &invalid {
        refusal(&mut err, report)?;
    }
    let mut seen: std::collections::BTreeMap<&str, &Path> = std::collections::BTreeMap::new();
    let mut twice = false;
    for report in reports.iter().filter(|r| r.is_valid()) {
        let name = report.name().unwrap_or_default();
        if let Some(first) = seen.insert(name, &report.dir) {
            twice = true;
            writeln!(
                err,
                "error: two skills are named {name}: {} and {}",
                crate::out::one_line(&first.display().to_string()),
                crate::out::one_line(&report.dir.display().to_string())
            )?;
        }
    }
    if !invalid.is_empty() || twice {
        writeln!(
            err,
            "skillctl publish: nothing published: {} invalid skill{}{}",
            invalid.len(),
            if invalid.len() == 1 { "" } else { "s" },
            if twice { ", and a name used twice" } else { "" }
        )?;
        return Ok(None);
    }
    Ok(Some(reports))
}

/// Names an invalid skill and its errors.
fn refusal(err: &mut impl std::io::Write, report: &SkillReport) -> std::io::Result<()> {
    let name = report.name().map_or_else(
        || "(no name)".to_owned(),
        |n| crate::out::one_line(n).into_owned(),
    );
    writeln!(
        err,
        "error: the skill {name} ({}) is invalid:",
        crate::out::one_line(&report.file.display().to_string())
    )?;
    for d in report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
    {
        let place = match (d.line, d.column) {
            (Some(l), Some(c)) => format!(" at {l}:{c}"),
            _ => String::new(),
        };
        writeln!(
            err,
            "  error[{}]{place}: {}",
            d.rule,
            crate::out::one_line(&d.message)
        )?;
    }
    Ok(())
}

/// A skill's artifact: its `SKILL.md` alone, or an archive of the files the index lists.
fn artifact(report: &SkillReport) -> Result<Artifact> {
    let name = report.name().unwrap_or_default().to_owned();
    let description = report
        .parsed
        .as_ref()
        .and_then(|p| p.frontmatter.description.as_deref())
        .unwrap_or_default()
        .to_owned();
    let source = FsSource::new(report.dir.clone(), DiscoveryOptions::validate());
    let files = source.files(".");
    let (kind, url, bytes) = if files.len() == 1 && files[0].0 == SKILL_FILE {
        let bytes = read_file(&source, &report.dir, SKILL_FILE)?;
        (Kind::SkillMd, format!("{name}/{SKILL_FILE}"), bytes)
    } else {
        let bytes = archive(&source, &report.dir, &files)?;
        (Kind::Archive, format!("{name}.tar.gz"), bytes)
    };
    Ok(Artifact {
        digest: format!("sha256:{:x}", Sha256::digest(&bytes)),
        name,
        description,
        kind,
        url,
        bytes,
    })
}

fn read_file(source: &FsSource, dir: &Path, rel: &str) -> Result<Vec<u8>> {
    source
        .read(rel, MAX_FILE)
        .with_context(|| format!("cannot read {}", dir.join(rel).display()))
}

/// The gzip-compressed tar of `files` (in the listing's order), each a regular file owned
/// by 0:0 with mtime 0 and mode 0644, or 0755 when its owner may execute it.
fn archive(source: &FsSource, dir: &Path, files: &[(String, u64)]) -> Result<Vec<u8>> {
    if files.len() > MAX_FILES {
        bail!(
            "{}: {} files, more than the {MAX_FILES} a reader unpacks",
            dir.display(),
            files.len()
        );
    }
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    let mut total = 0u64;
    for (rel, _) in files {
        let bytes = read_file(source, dir, rel)?;
        total += bytes.len() as u64;
        if total > MAX_SKILL {
            bail!(
                "{}: the skill's files add up to more than {MAX_SKILL} bytes",
                dir.display()
            );
        }
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(if executable(&dir.join(rel)) {
            0o755
        } else {
            0o644
        });
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        tar.append_data(&mut header, rel, bytes.as_slice())
            .with_context(|| format!("cannot archive {}", dir.join(rel).display()))?;
    }
    let gz = tar.into_inner().context("cannot finish an archive")?;
    let bytes = gz.finish().context("cannot finish an archive")?;
    if bytes.len() > MAX_ARTIFACT {
        bail!(
            "{}: the archive is {} bytes, more than the {MAX_ARTIFACT} a reader downloads",
            dir.display(),
            bytes.len()
        );
    }
    Ok(bytes)
}

/// Whether the file's owner may execute it (what the archive's mode keeps of a file's).
fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o100 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Writes the folder beside `out/.well-known/agent-skills`, then puts it in that one's
/// place, so nothing of an earlier publication stays. Returns the folder.
fn write_folder(out: &Path, artifacts: &[Artifact], published: &str) -> Result<PathBuf> {
    let well_known = out.join(".well-known");
    let folder = out.join(WELL_KNOWN);
    let fresh = well_known.join(format!(".agent-skills.new-{}", std::process::id()));
    let old = well_known.join(format!(".agent-skills.old-{}", std::process::id()));
    std::fs::create_dir_all(&fresh)
        .with_context(|| format!("cannot create {}", fresh.display()))?;
    let put = |rel: &str, bytes: &[u8]| -> Result<()> {
        let path = fresh.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    for a in artifacts {
        put(&a.url, &a.bytes)?;
    }
    put("index.json", index_json(artifacts)?.as_bytes())?;
    put("index.html", catalogue(artifacts, published).as_bytes())?;
    let had = folder.exists();
    if had {
        std::fs::rename(&folder, &old)
            .with_context(|| format!("cannot move {} aside", folder.display()))?;
    }
    std::fs::rename(&fresh, &folder)
        .with_context(|| format!("cannot put {} in place", folder.display()))?;
    if had {
        std::fs::remove_dir_all(&old)
            .with_context(|| format!("cannot remove {}", old.display()))?;
    }
    Ok(folder)
}

/// An index entry, its fields in the order the format lists them.
#[derive(serde::Serialize)]
struct Entry<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    description: &'a str,
    url: &'a str,
    digest: &'a str,
}

/// The index document.
#[derive(serde::Serialize)]
struct Index<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    skills: Vec<Entry<'a>>,
}

/// The index, entries by name, two-space indented, ending in a newline.
fn index_json(artifacts: &[Artifact]) -> Result<String> {
    let skills = artifacts
        .iter()
        .map(|a| Entry {
            name: &a.name,
            kind: a.kind.as_str(),
            description: &a.description,
            url: &a.url,
            digest: &a.digest,
        })
        .collect();
    let index = Index {
        schema: INDEX_SCHEMA,
        skills,
    };
    let mut text = serde_json::to_string_pretty(&index)?;
    text.push('\n');
    Ok(text)
}

/// `text` safe in HTML text and in a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The catalogue page: one section per skill (name, description, kind, digest, the date
/// published, a link to the artifact), plain HTML with no script.
fn catalogue(artifacts: &[Artifact], published: &str) -> String {
    let mut page = String::from(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<title>Agent Skills</title>\n<style>\n",
        "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5}\n",
        "article{border-top:1px solid #ccc;padding:.5rem 0}\n",
        "code{font-size:.85em;word-break:break-all}\n",
        "dt{font-weight:600;float:left;clear:left;width:7rem}\ndd{margin-left:7rem}\n",
        "</style>\n</head>\n<body>\n<h1>Agent Skills</h1>\n",
        "<p>Skills published as a well-known index: <a href=\"index.json\">index.json</a>. ",
        "Every artifact is checked against its digest before use.</p>\n",
    ));
    let _ = writeln!(page, "<main>");
    for a in artifacts {
        let name = escape(&a.name);
        let _ = write!(
            page,
            "<article class=\"skill\" id=\"skill-{name}\">\n<h2>{name}</h2>\n<p class=\"description\">{}</p>\n<dl>\n\
             <dt>Type</dt><dd>{}</dd>\n<dt>Digest</dt><dd><code class=\"digest\">{}</code></dd>\n\
             <dt>Published</dt><dd><time datetime=\"{published}\">{published}</time></dd>\n\
             <dt>Download</dt><dd><a href=\"{}\">{}</a></dd>\n</dl>\n</article>\n",
            escape(&a.description),
            a.kind.as_str(),
            escape(&a.digest),
            escape(&a.url),
            escape(&a.url),
        );
    }
    let _ = write!(page, "</main>\n</body>\n</html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_written() {
        assert_eq!(
            published_at(Some("2026-03-12")).unwrap(),
            "2026-03-12T00:00:00Z"
        );
        assert_eq!(
            published_at(Some("2026-03-12T10:11:12Z")).unwrap(),
            "2026-03-12T10:11:12Z"
        );
        assert!(published_at(Some("yesterday")).is_err());
    }

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape("<script>alert(\"x\") & 'y'</script>"),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }
}
