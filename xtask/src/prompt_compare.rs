//! `cargo xtask prompt-compare`: `skills_executor::available_skills` against the reference
//! tool, `agentskills to-prompt` (PyPI `skills-ref`), over skills of the real-world corpus.
//!
//! The reference refuses a whole call when one skill cannot be read (strictyaml refuses flow
//! sequences such as `[a, b]`, for one), so it is first run on each folder alone, in
//! parallel, and only the folders it accepts are kept. Then it renders all of them in one
//! call, and that output is compared byte for byte with ours for the same folders in the
//! same order (our records come from `skills_parser`).
//!
//! Each skill is also compared on its own, so that a difference can be told apart: when the
//! reference's name or description (read back from its output) is not the value our parser
//! read, the difference comes from YAML parsing, not from rendering, and it is reported as
//! such.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use skills_model::{Layer, SkillRecord};
use skills_parser::{ParseInput, SkillParser};

/// How many corpus folders to try by default (spread evenly over the sorted list).
const DEFAULT_LIMIT: usize = 300;

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let shared = crate::shared_dir(crate::flag(args, "--shared"));
    let corpus = crate::flag(args, "--corpus")
        .map_or_else(|| shared.join("corpus/real-world/skills"), Into::into);
    let limit = match crate::flag(args, "--limit") {
        Some(n) => n
            .parse()
            .context("--limit takes a number (0: every folder)")?,
        None => DEFAULT_LIMIT,
    };
    if !corpus.is_dir() {
        bail!(
            "no corpus at {}: the real-world corpus is external data, kept outside this repository (pass --shared DIR, with the corpus at DIR/corpus/real-world/skills, or --corpus DIR, or set AGENT_SKILLS_SHARED)",
            corpus.display()
        );
    }
    let reference = Reference::find()?;
    println!("prompt-compare: reference: {}", reference.version());

    let mut all = Vec::new();
    skill_dirs(&corpus, &mut all)?;
    all.sort();
    let tried = sample(&all, limit);
    println!(
        "prompt-compare: {} of the {} skill folders under {}",
        tried.len(),
        all.len(),
        corpus.display()
    );
    let accepted = accepted_by(&reference, &tried)?;
    let singles = compare_each(&accepted);
    let batch_same = compare_batch(&reference, &accepted, &singles.records)?;
    Ok(report(&singles, accepted.len(), batch_same))
}

/// Each folder alone: those the reference accepts, with its output for each.
fn accepted_by(reference: &Reference, tried: &[PathBuf]) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let singles = reference.each(tried);
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for (dir, single) in tried.iter().zip(singles) {
        match single {
            Ok(out) => accepted.push((dir.clone(), out)),
            Err(why) => refused.push((dir.clone(), why)),
        }
    }
    println!(
        "prompt-compare: the reference refuses {} of them{}",
        refused.len(),
        refused
            .first()
            .map(|(d, why)| format!(" (first: {}: {why})", d.display()))
            .unwrap_or_default()
    );
    if accepted.is_empty() {
        bail!("the reference accepted no folder");
    }
    Ok(accepted)
}

/// Ours beside the reference's, skill by skill: the records we read, how many render
/// identically, and the differences (in rendering, or in what the parsers read).
struct Singles {
    records: Vec<SkillRecord>,
    identical: usize,
    rendering: Vec<String>,
    parsing: Vec<String>,
}

fn compare_each(accepted: &[(PathBuf, Vec<u8>)]) -> Singles {
    let parser = SkillParser::default();
    let mut out = Singles {
        records: Vec::new(),
        identical: 0,
        rendering: Vec::new(),
        parsing: Vec::new(),
    };
    for (dir, theirs) in accepted {
        let record = match our_record(&parser, dir) {
            Ok(record) => record,
            Err(why) => {
                out.parsing.push(format!("{}: {why}", dir.display()));
                continue;
            }
        };
        let ours = skills_executor::available_skills(&[&record]);
        if ours.as_bytes() == theirs.as_slice() {
            out.identical += 1;
        } else {
            let theirs = String::from_utf8_lossy(theirs);
            match field_difference(&record, &theirs) {
                Some(what) => out.parsing.push(format!("{}: {what}", dir.display())),
                None => out.rendering.push(format!(
                    "{}: {}",
                    dir.display(),
                    first_difference(&ours, &theirs)
                )),
            }
        }
        out.records.push(record);
    }
    out
}

/// All of them in one call, in the same order: whether ours is identical (said either way).
fn compare_batch(
    reference: &Reference,
    accepted: &[(PathBuf, Vec<u8>)],
    records: &[SkillRecord],
) -> Result<bool> {
    let theirs = reference.to_prompt(accepted.iter().map(|(d, _)| d.as_path()))?;
    let refs: Vec<&SkillRecord> = records.iter().collect();
    let ours = skills_executor::available_skills(&refs);
    let batch_same = ours.as_bytes() == theirs.as_slice();
    if batch_same {
        println!(
            "prompt-compare: one call with all {} folders: identical ({} bytes)",
            accepted.len(),
            theirs.len()
        );
    } else {
        println!(
            "prompt-compare: one call with all {} folders: DIFFERENT: {}",
            accepted.len(),
            first_difference(&ours, &String::from_utf8_lossy(&theirs))
        );
    }
    Ok(batch_same)
}

/// Prints the differences and the count; success only when nothing differs.
fn report(singles: &Singles, accepted: usize, batch_same: bool) -> ExitCode {
    let Singles {
        identical,
        rendering,
        parsing,
        ..
    } = singles;
    if !rendering.is_empty() {
        println!(
            "prompt-compare: {} rendering differences; the first:\n  {}",
            rendering.len(),
            rendering[0]
        );
    }
    if !parsing.is_empty() {
        println!(
            "prompt-compare: {} differences in what the parsers read (YAML, not rendering):",
            parsing.len()
        );
        for line in parsing {
            println!("  {line}");
        }
    }
    println!("prompt-compare: {identical}/{accepted} identical");
    if batch_same && rendering.is_empty() && parsing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// How to run the reference tool: `agentskills`, or `python3 -m skills_ref.cli` when pip
/// installed it where `PATH` does not reach.
struct Reference {
    program: String,
    prefix: Vec<String>,
}

impl Reference {
    fn find() -> Result<Reference> {
        let on_path = Reference {
            program: "agentskills".into(),
            prefix: Vec::new(),
        };
        if on_path.works() {
            return Ok(on_path);
        }
        println!("prompt-compare: `agentskills` is not on PATH; installing skills-ref with pip");
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "skills-ref"])
            .status()
            .context("running python3 -m pip")?;
        if !status.success() {
            bail!("`python3 -m pip install --quiet skills-ref` failed: {status}");
        }
        if on_path.works() {
            return Ok(on_path);
        }
        let module = Reference {
            program: "python3".into(),
            prefix: vec!["-m".into(), "skills_ref.cli".into()],
        };
        if module.works() {
            return Ok(module);
        }
        bail!("skills-ref is installed but neither `agentskills` nor `python3 -m skills_ref.cli` runs")
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.prefix)
            // The reference prints UTF-8 whatever the locale.
            .env("PYTHONIOENCODING", "utf-8")
            .env("PYTHONUTF8", "1")
            .stdin(Stdio::null());
        cmd
    }

    fn works(&self) -> bool {
        self.command()
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn version(&self) -> String {
        let out = self.command().arg("--version").output();
        let version = out
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        format!(
            "{} {}({version})",
            self.program,
            self.prefix
                .iter()
                .map(|a| format!("{a} "))
                .collect::<String>()
        )
    }

    /// `to-prompt DIR...`: its output, or why it refused.
    fn try_to_prompt<'a>(
        &self,
        dirs: impl IntoIterator<Item = &'a Path>,
    ) -> Result<Vec<u8>, String> {
        let out = self
            .command()
            .arg("to-prompt")
            .args(dirs)
            .output()
            .map_err(|e| format!("cannot run the reference: {e}"))?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            Err(stderr.lines().next().unwrap_or("").trim().to_owned())
        }
    }

    fn to_prompt<'a>(&self, dirs: impl IntoIterator<Item = &'a Path>) -> Result<Vec<u8>> {
        self.try_to_prompt(dirs).map_err(|why| {
            anyhow::anyhow!("the reference refused a folder it accepted alone: {why}")
        })
    }

    /// `to-prompt DIR` for each folder alone, on as many threads as there are CPUs.
    fn each(&self, dirs: &[PathBuf]) -> Vec<Result<Vec<u8>, String>> {
        let next = AtomicUsize::new(0);
        let results = Mutex::new(vec![Err(String::new()); dirs.len()]);
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let result = self.try_to_prompt([dir.as_path()]);
                    if let Ok(mut results) = results.lock() {
                        results[i] = result;
                    }
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Every folder under `dir` that holds a `SKILL.md` (symbolic links not followed).
fn skill_dirs(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    if dir.join("SKILL.md").is_file() {
        found.push(dir.to_path_buf());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            skill_dirs(&entry.path(), found)?;
        }
    }
    Ok(())
}

/// At most `limit` items spread evenly over `all` (every item when `limit` is 0).
fn sample(all: &[PathBuf], limit: usize) -> Vec<PathBuf> {
    if limit == 0 || all.len() <= limit {
        return all.to_vec();
    }
    (0..limit)
        .map(|i| all[i * all.len() / limit].clone())
        .collect()
}

/// The record our index would build for the folder (the folder resolved like the reference
/// resolves it).
fn our_record(parser: &SkillParser, dir: &Path) -> Result<SkillRecord, String> {
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let path = dir.join("SKILL.md");
    let source = std::fs::read(&path).map_err(|e| e.to_string())?;
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let input =
        ParseInput::new(&source, &dir_name).with_references_dir(dir.join("references").is_dir());
    let parsed = parser.parse(&input);
    let Some(name) = parsed.lenient_name() else {
        return Err(format!(
            "our parser reads no usable name and description (name {:?}, description {:?})",
            parsed.frontmatter.name, parsed.frontmatter.description
        ));
    };
    Ok(SkillRecord {
        name,
        description: parsed
            .frontmatter
            .description
            .clone()
            .unwrap_or_default()
            .into(),
        layer: Layer::Project,
        plugin: None,
        remote: None,
        path,
        body_offset: parsed.body_offset,
        frontmatter: Arc::new(parsed.frontmatter),
        diagnostics: parsed.diagnostics.into(),
    })
}

/// When the reference's one-skill output holds another name or description than ours: which,
/// and both values.
fn field_difference(record: &SkillRecord, theirs: &str) -> Option<String> {
    let between = |open: &str, close: &str| -> Option<String> {
        let start = theirs.find(open)? + open.len();
        let end = start + theirs[start..].find(close)?;
        Some(unescape(&theirs[start..end]))
    };
    let fields = [
        (
            "name",
            py_strip(record.name.as_str()),
            between("<name>\n", "\n</name>\n"),
        ),
        (
            "description",
            py_strip(&record.description),
            between("<description>\n", "\n</description>\n<location>"),
        ),
    ];
    fields.into_iter().find_map(|(field, ours, theirs)| {
        let theirs = theirs.unwrap_or_default();
        (ours != theirs).then(|| {
            let at = ours
                .chars()
                .zip(theirs.chars())
                .take_while(|(a, b)| a == b)
                .count();
            format!(
                "{field} differs from character {at}: ours {:?}, the reference's {:?}",
                excerpt(ours, at),
                excerpt(&theirs, at)
            )
        })
    })
}

/// Up to 80 characters of `s` from 20 before character `at`.
fn excerpt(s: &str, at: usize) -> String {
    let from = at.saturating_sub(20);
    let text: String = s.chars().skip(from).take(80).collect();
    format!("{}{text}", if from > 0 { "…" } else { "" })
}

/// The first line where two texts differ.
fn first_difference(ours: &str, theirs: &str) -> String {
    let mut a = ours.split('\n');
    let mut b = theirs.split('\n');
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return "same lines, other bytes".into(),
            (x, y) => {
                return format!(
                    "line {line}: ours {:?}, the reference's {:?}",
                    x.map(|s| excerpt(s, 0)),
                    y.map(|s| excerpt(s, 0))
                )
            }
        }
    }
}

/// Python's `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// The inverse of Python's `html.escape`.
fn unescape(s: &str) -> String {
    s.replace("&#x27;", "'")
        .replace("&quot;", "\"")
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
}
