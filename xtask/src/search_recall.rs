//! `cargo xtask search-recall`: how well `skills_search` finds real skills. The real-world
//! corpus is indexed as `skillctl` would index it (one project root, depth 6); for every
//! resolved skill a query is made from its own description, and the skill's rank among the
//! results gives recall@1 and recall@5.
//!
//! The query rule: the description's words (letters only, lowercased), less words of two
//! letters or fewer and a list of function words; of what remains, the 2nd to the 5th word
//! (the first is skipped: it is most often the verb that opens every description, "Create",
//! "Use", "Generate"). A skill with fewer than three such words is not measured. Two runs
//! are reported: with the words of the skill's own name kept, and held out (so the name
//! cannot give the skill away: harder, and unfair to catalogues whose skills differ only
//! by the product they name, such as 860 Composio skills `Automate <App> tasks via Rube
//! MCP`).
//!
//! Then the offering threshold (`SearchIndex::offer_threshold`) at fractions of its value:
//! of the measured queries, how often the skill they were made from reaches it (it would
//! be offered), and how often another skill does once that skill is left out (a request
//! with no skill of its own would still be offered one: the false offers a threshold must
//! keep down).

use std::process::ExitCode;

use anyhow::Result;
use skills_index::SkillIndex;
use skills_model::Layer;

const FUNCTION_WORDS: [&str; 30] = [
    "the", "and", "for", "with", "this", "that", "when", "use", "used", "using", "you", "your",
    "from", "into", "are", "can", "will", "any", "all", "its", "not", "but", "skill", "skills",
    "should", "asks", "user", "users", "such", "via",
];

/// Fractions of the offering threshold measured.
const FRACTIONS: [f32; 5] = [0.25, 0.5, 0.75, 1.0, 1.5];

/// Whether a query may hold words of the skill's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameWords {
    Kept,
    HeldOut,
}

/// The query made from a description (see the module documentation), or `None`.
fn query_of(name: &str, description: &str, name_words_rule: NameWords) -> Option<String> {
    let name_words: Vec<&str> = name.split(|c: char| !c.is_alphanumeric()).collect();
    let words: Vec<String> = description
        .split(|c: char| !c.is_alphabetic())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 2)
        .filter(|w| !FUNCTION_WORDS.contains(&w.as_str()))
        .filter(|w| {
            name_words_rule == NameWords::Kept
                || !name_words.iter().any(|n| n.eq_ignore_ascii_case(w))
        })
        .collect();
    (words.len() >= 3).then(|| words[1..words.len().min(5)].join(" "))
}

pub(crate) fn run(args: &[String]) -> Result<ExitCode> {
    let corpus = crate::corpus_dir(args)?;
    let index = SkillIndex::builder()
        .root(Layer::Project, &corpus)
        .depth(6)
        .build()?;
    let snap = index.snapshot();
    println!("search-recall: {} skills indexed", snap.len());
    for (rule, label) in [
        (NameWords::Kept, "description words"),
        (
            NameWords::HeldOut,
            "description words, the name's words held out",
        ),
    ] {
        let threshold = snap.offer_threshold();
        let mut offers = [(0usize, 0usize); FRACTIONS.len()];
        let (mut measured, mut at1, mut at5) = (0usize, 0usize, 0usize);
        for record in snap.skills() {
            let Some(query) = query_of(record.name.as_str(), &record.description, rule) else {
                continue;
            };
            measured += 1;
            let hits = snap.search(&query, 5, |_| true).hits;
            let rank = hits
                .iter()
                .position(|h| std::sync::Arc::ptr_eq(&h.record, record));
            let own = rank.map_or(0.0, |r| hits[r].score);
            let other = hits
                .iter()
                .find(|h| !std::sync::Arc::ptr_eq(&h.record, record))
                .map_or(0.0, |h| h.score);
            for (slot, f) in offers.iter_mut().zip(FRACTIONS) {
                slot.0 += usize::from(own >= f * threshold);
                slot.1 += usize::from(other >= f * threshold);
            }
            match rank {
                Some(0) => {
                    at1 += 1;
                    at5 += 1;
                }
                Some(_) => at5 += 1,
                None => {}
            }
        }
        let pct = |n: usize| 100.0 * n as f64 / measured.max(1) as f64;
        println!(
            "{label}: {measured} measured; recall@1 {at1}/{measured} ({:.1}%), recall@5 {at5}/{measured} ({:.1}%)",
            pct(at1),
            pct(at5)
        );
        for ((own, other), f) in offers.iter().zip(FRACTIONS) {
            println!(
                "  offered from {f:.2} of the threshold ({:.3}): its own skill {:.1}%, another once it is left out {:.1}%",
                f * threshold,
                pct(*own),
                pct(*other)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::{query_of, NameWords};

    #[test]
    fn queries_skip_the_opening_verb_function_words_and_the_name() {
        let description = "Fill and flatten PDF forms. Use when the user hands over a PDF.";
        assert_eq!(
            query_of("pdf-forms", description, NameWords::HeldOut).as_deref(),
            Some("flatten hands over")
        );
        assert_eq!(
            query_of("pdf-forms", description, NameWords::Kept).as_deref(),
            Some("flatten pdf forms hands")
        );
        assert_eq!(query_of("x", "Too short.", NameWords::Kept), None);
    }
}
