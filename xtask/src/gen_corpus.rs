//! `cargo xtask gen-corpus`: deterministic synthetic skills whose sizes follow the
//! real-world corpus (SKILL.md median about 3 KB, p99 about 34 KB; frontmatter 200 to 1,000
//! bytes; some with `allowed-tools`, `metadata`, `references/`, `scripts/`), plus a chosen
//! share of invalid ones.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

/// A small deterministic generator (xorshift64*), so a seed always gives the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A standard normal sample (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

const WORDS: &[&str] = &[
    "analyze", "build", "report", "table", "file", "review", "data", "deploy", "service", "check",
    "format", "invoice", "schema", "query", "release", "notes", "chart", "image", "archive",
    "test", "summary", "config", "pipeline", "document", "extract", "convert", "template",
    "metric",
];

fn words(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.below(WORDS.len())]);
    }
    s
}

/// What one generated skill is.
pub(crate) struct Options {
    pub(crate) count: usize,
    pub(crate) seed: u64,
    pub(crate) invalid_share: f64,
}

/// Writes `options.count` skills into `out` (created if needed). Returns the skill folders.
pub(crate) fn generate(out: &Path, options: &Options) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut rng = Rng(options.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut dirs = Vec::with_capacity(options.count);
    for i in 0..options.count {
        let name = format!(
            "{}-{}-{i:05}",
            WORDS[rng.below(WORDS.len())],
            WORDS[rng.below(WORDS.len())]
        );
        let dir = out.join(&name);
        std::fs::create_dir_all(&dir)?;
        // Log-normal total size: median 3,000 bytes, p99 about 34,000 (sigma 1.04).
        let target = (8.006 + 1.04 * rng.normal()).exp().clamp(400.0, 200_000.0) as usize;
        let invalid = rng.unit() < options.invalid_share;
        let mut fm = String::new();
        let _ = writeln!(fm, "---");
        let shown_name = if invalid && rng.below(2) == 0 {
            name.to_uppercase()
        } else {
            name.clone()
        };
        let _ = writeln!(fm, "name: {shown_name}");
        let desc_words = 12 + rng.below(60);
        let _ = writeln!(
            fm,
            "description: {}. Use when the user asks to {}.",
            words(&mut rng, desc_words),
            words(&mut rng, 4)
        );
        if rng.below(4) == 0 {
            let _ = writeln!(fm, "license: MIT");
        }
        if rng.below(3) == 0 {
            let _ = writeln!(
                fm,
                "allowed-tools: Read Grep Bash(git log:*) Bash(python3 scripts/run.py:*)"
            );
        }
        if rng.below(3) == 0 {
            let _ = writeln!(
                fm,
                "metadata:\n  author: generated\n  version: \"1.{}\"",
                rng.below(20)
            );
        }
        if invalid && rng.below(2) == 1 {
            let _ = writeln!(fm, "description: Use when: this duplicate key is invalid");
        }
        let _ = writeln!(fm, "---");
        let mut body = format!("# {}\n\n", words(&mut rng, 3));
        let mut step = 1;
        while fm.len() + body.len() < target {
            let n = 8 + rng.below(16);
            let _ = writeln!(body, "{step}. {}.", words(&mut rng, n));
            step += 1;
            if step % 12 == 0 {
                let _ = writeln!(body, "\n## {}\n", words(&mut rng, 2));
            }
        }
        std::fs::write(dir.join("SKILL.md"), format!("{fm}{body}"))?;
        if rng.below(4) == 0 {
            std::fs::create_dir_all(dir.join("references"))?;
            std::fs::write(
                dir.join("references/guide.md"),
                format!("# Guide\n\n{}\n", words(&mut rng, 200)),
            )?;
        }
        if rng.below(5) == 0 {
            std::fs::create_dir_all(dir.join("scripts"))?;
            std::fs::write(
                dir.join("scripts/run.py"),
                "import sys\nprint(' '.join(sys.argv[1:]))\n",
            )?;
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let count: usize = crate::flag(args, "--count")
        .unwrap_or("1000")
        .parse()
        .context("--count")?;
    let seed: u64 = crate::flag(args, "--seed")
        .unwrap_or("1")
        .parse()
        .context("--seed")?;
    let invalid_share: f64 = crate::flag(args, "--invalid-share")
        .unwrap_or("0")
        .parse()
        .context("--invalid-share")?;
    let Some(out) = crate::flag(args, "--out") else {
        anyhow::bail!("gen-corpus needs --out DIR");
    };
    let dirs = generate(
        Path::new(out),
        &Options {
            count,
            seed,
            invalid_share,
        },
    )?;
    println!("gen-corpus: {} skills in {out}", dirs.len());
    Ok(ExitCode::SUCCESS)
}
