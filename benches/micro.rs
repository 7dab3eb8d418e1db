//! Criterion micro-benchmarks of the hot paths: parsing one typical SKILL.md, and a
//! tool-rule decision. `cargo bench --bench micro`.

use criterion::{criterion_group, criterion_main, Criterion};
use skills_model::ToolRules;
use skills_parser::{ParseInput, SkillParser};

const SKILL: &[u8] = b"---
name: pdf-tools
description: Fill, merge and split PDF files. Use when the user asks to work with a PDF.
license: MIT
allowed-tools: Read Bash(python3 scripts/fill.py:*) Bash(qpdf:*)
metadata:
  author: example
  version: \"1.2\"
---
# PDF tools

1. Inspect the file with `qpdf --show-npages`.
2. Fill forms with `scripts/fill.py`.
";

fn parse(c: &mut Criterion) {
    let parser = SkillParser::default();
    c.bench_function("parse typical SKILL.md", |b| {
        b.iter(|| parser.parse(&ParseInput::new(std::hint::black_box(SKILL), "pdf-tools")));
    });
}

fn decide(c: &mut Criterion) {
    let (rules, _) = ToolRules::parse_lenient(
        "Read Bash(git log:*) Bash(git diff:*) Bash(python3 scripts/run.py:*)",
    );
    c.bench_function("tool rules: match a Bash call", |b| {
        b.iter(|| {
            rules.any_matches(
                std::hint::black_box("Bash"),
                Some(std::hint::black_box("git diff --staged")),
            )
        });
    });
}

criterion_group!(benches, parse, decide);
criterion_main!(benches);
