//! `skills_search` ranking over real skills in `tests/fixtures/search` (written for these
//! tests): a table of queries with their expected top results, inflected and multi-word
//! queries included; incremental updates after an add, an edit and a delete; filters.

use std::path::{Path, PathBuf};

use skills_index::{SearchField, SkillIndex};
use skills_model::Layer;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search")
}

/// Writes `<root>/<name>/SKILL.md` with that name and description.
fn skill_with_description(root: &Path, name: &str, description: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
    )
    .unwrap();
}

fn top(index: &SkillIndex, query: &str, n: usize) -> Vec<String> {
    index
        .snapshot()
        .search(query, n, |_| true)
        .hits
        .into_iter()
        .map(|h| h.record.name.to_string())
        .collect()
}

#[test]
fn queries_find_the_skills_people_mean() {
    let index = SkillIndex::builder()
        .root(Layer::Project, fixtures())
        .build()
        .unwrap();
    // (query, the expected first result)
    let table = [
        ("pdf", "pdf-forms"),
        ("fill a form", "pdf-forms"),
        ("documentations", "api-docs"),
        ("documenting endpoints", "api-docs"),
        ("release notes changelog", "changelog"),
        ("which commit broke the tests regression", "git-bisect"),
        ("plot a graph", "spreadsheet-charts"),
        ("charting", "spreadsheet-charts"),
        ("container", "docker-images"),
        ("database migration", "sql-migrations"),
        ("outage postmortem report", "incident-report"),
        ("localize strings", "translate-strings"),
        ("testing coverage", "unit-tests"),
        ("presentation slides", "slide-decks"),
        ("review my pull request", "code-review"),
    ];
    let mut wrong = Vec::new();
    for (query, expected) in table {
        let got = top(&index, query, 1);
        if got.first().map(String::as_str) != Some(expected) {
            wrong.push(format!("{query:?}: expected {expected}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(top(&index, "the and of", 5).is_empty());
    assert!(top(&index, "kubernetes", 5).is_empty());
}

#[test]
fn a_hit_says_which_fields_matched_and_ties_go_to_precedence() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |root: &str, name: &str, extra: &str| {
        let dir = tmp.path().join(root).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Formats tables. Use when asked.\n{extra}---\nBody.\n"),
        )
        .unwrap();
    };
    write("project", "tables-a", "");
    write("personal", "tables-b", "");
    write("project", "tables-c", "priority: 5\n");
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path().join("project"))
        .root(Layer::Personal, tmp.path().join("personal"))
        .build()
        .unwrap();
    let hits = index.snapshot().search("formatting", 10, |_| true).hits;
    let names: Vec<&str> = hits.iter().map(|h| h.record.name.as_str()).collect();
    // Equal scores: the personal layer first, then the higher priority, then the name.
    assert_eq!(names, ["tables-b", "tables-c", "tables-a"]);
    assert_eq!(hits[0].matched, [SearchField::Description]);
    let hits = index.snapshot().search("tables", 10, |_| true).hits;
    assert!(hits[0].matched.contains(&SearchField::Name));
    // A filter keeps only what the caller may see.
    let outcome = index
        .snapshot()
        .search("tables", 1, |r| r.layer == Layer::Project);
    assert_eq!((outcome.hits.len(), outcome.total), (1, 2));
}

#[test]
fn the_index_follows_adds_edits_and_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, description: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("SKILL.md");
        std::fs::write(
            &file,
            format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        )
        .unwrap();
        file
    };
    let a = write("alpha", "Bakes sourdough bread. Use when baking.");
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    // Nothing searched yet: no search index is built.
    assert!(!index.snapshot().search_index_built());
    assert_eq!(top(&index, "bread", 5), ["alpha"]);
    // Searched once: from now on every publication carries an up-to-date search index.
    let b = write("beta", "Brews coffee. Use when the user wants coffee.");
    index.apply_changed_paths(std::slice::from_ref(&b));
    assert!(index.snapshot().search_index_built());
    assert_eq!(top(&index, "coffee", 5), ["beta"]);
    write("alpha", "Makes pizza dough. Use when cooking pizza.");
    index.apply_changed_paths(std::slice::from_ref(&a));
    assert!(top(&index, "bread", 5).is_empty());
    assert_eq!(top(&index, "pizza", 5), ["alpha"]);
    std::fs::remove_dir_all(tmp.path().join("beta")).unwrap();
    index.apply_changed_paths(std::slice::from_ref(&b));
    assert!(top(&index, "coffee", 5).is_empty());
    let memory = index.snapshot().search_index().heap_bytes();
    assert!(memory > 0);
}

/// Regression: two words with one stem ("report", "reports") were two terms of one skill,
/// so a skill that used both inflections scored as if it matched twice.
#[test]
fn regression_inflections_of_one_word_are_one_term() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, description) in [
        ("mixed", "Reports and report."),
        ("same", "Report and report."),
    ] {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        )
        .unwrap();
    }
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    let hits = index.snapshot().search("report", 2, |_| true).hits;
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].score, hits[1].score, "{hits:?}");
}

/// An index that followed adds, edits and deletes (sharing its postings, passing over
/// removed documents) ranks and scores every query as an index built afresh over the same
/// skills does, through the removals' fresh rebuild and past it.
#[test]
fn an_index_that_followed_changes_scores_as_a_fresh_one() {
    let tmp = tempfile::tempdir().unwrap();
    let words = [
        "report", "chart", "deploy", "release", "notes", "table", "invoice", "schema", "review",
        "archive", "image", "metric",
    ];
    let write = |i: usize, round: usize| {
        let name = format!("skill-{i:02}");
        let dir = tmp.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let description: Vec<&str> = (0..1 + (i * 7 + round * 3) % 9)
            .map(|k| words[(i * 5 + k * 3 + round) % words.len()])
            .collect();
        let file = dir.join("SKILL.md");
        std::fs::write(
            &file,
            format!(
                "---\nname: {name}\ndescription: {}.\n---\nBody.\n",
                description.join(" ")
            ),
        )
        .unwrap();
        file
    };
    let files: Vec<PathBuf> = (0..40).map(|i| write(i, 0)).collect();
    let followed = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    followed.snapshot().search_index();
    let queries = [
        "report",
        "chart notes",
        "deploy release table",
        "invoices archived",
    ];
    // Each round edits a few skills, removes one and adds one. A round that would leave
    // more than a quarter of the documents removed (the third does) is built afresh.
    for round in 1..8 {
        let mut changed = Vec::new();
        for i in (round..40).step_by(9) {
            changed.push(write(i, round));
        }
        let gone = tmp.path().join(format!("skill-{:02}", round * 4));
        if gone.exists() {
            std::fs::remove_dir_all(&gone).unwrap();
            changed.push(gone.join("SKILL.md"));
        }
        changed.push(write(40 + round, round));
        followed.apply_changed_paths(&changed);
        assert!(followed.snapshot().search_index_built());
        let fresh = SkillIndex::builder()
            .root(Layer::Project, tmp.path())
            .build()
            .unwrap();
        assert_eq!(
            followed.snapshot().search_index().len(),
            fresh.snapshot().len()
        );
        for query in queries {
            let scored = |index: &SkillIndex| {
                let outcome = index.snapshot().search(query, 50, |_| true);
                let hits: Vec<(String, u32, Vec<SearchField>)> = outcome
                    .hits
                    .into_iter()
                    .map(|h| (h.record.name.to_string(), h.score.to_bits(), h.matched))
                    .collect();
                (hits, outcome.total)
            };
            assert_eq!(
                scored(&followed),
                scored(&fresh),
                "round {round}, {query:?}"
            );
        }
    }
    drop(files);
}

/// Promise: a search for an audience is scored over what that audience sees. A hidden
/// skill that holds the query's words (another tenant's, say) moves no score and no place
/// of what the audience is shown, whichever way the index came to hold it.
#[test]
fn a_hidden_skill_moves_no_score_of_a_search() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |root: &str, name: &str, description: &str| {
        skill_with_description(&tmp.path().join(root), name, description);
    };
    for root in ["shown", "all"] {
        write(
            root,
            "invoice-tables",
            "Formats invoice tables. Use for invoices.",
        );
        write(
            root,
            "quarterly-report",
            "Writes the quarterly invoice report with tables and charts.",
        );
    }
    // Hidden: many skills holding one of the query's words, with long descriptions.
    for i in 0..6 {
        write(
            "all",
            &format!("secret-merger-{i}"),
            "Merger invoice merger invoice merger plans, long and wordy, for the other tenant only.",
        );
    }
    let index = |root: &str| {
        SkillIndex::builder()
            .root(Layer::Project, tmp.path().join(root))
            .build()
            .unwrap()
    };
    let scored = |outcome: skills_index::SearchOutcome| {
        outcome
            .hits
            .into_iter()
            .map(|h| (h.record.name.to_string(), h.score))
            .collect::<Vec<_>>()
    };
    let shown = index("shown");
    let all = index("all");
    let not_secret = |r: &skills_model::SkillRecord| !r.name.as_str().starts_with("secret-");
    let memo = skills_index::AudienceMemo::default();
    let audience = skills_index::Audience::seeing(&not_secret).remembered_in(&memo);
    for query in [
        "invoice tables",
        "invoice",
        "merger",
        "quarterly invoice report",
    ] {
        let expected = scored(shown.snapshot().search(query, 10, |_| true));
        // Twice: worked out, then from the memo.
        for _ in 0..2 {
            assert_eq!(
                scored(all.snapshot().search_for(&audience, query, 10, |_| true)),
                expected,
                "{query}"
            );
        }
        // Seen by everyone, the hidden skills do move the scores of the others.
        if !expected.is_empty() {
            let moved = scored(all.snapshot().search(query, 10, not_secret));
            assert_ne!(moved, expected, "{query}");
        }
    }
    // An index that followed a change (a visible skill and a hidden one added: documents
    // the memo does not hold) is worked out again, not read from the memo.
    write("all", "secret-merger-9", "Invoice tables merger.");
    for root in ["shown", "all"] {
        write(
            root,
            "invoice-ledger",
            "Keeps the invoice ledger in tables.",
        );
    }
    all.reload_now();
    shown.reload_now();
    for query in ["invoice tables", "merger", "ledger"] {
        assert_eq!(
            scored(all.snapshot().search_for(&audience, query, 10, |_| true)),
            scored(shown.snapshot().search(query, 10, |_| true)),
            "{query} after a change"
        );
    }
}

/// The snapshot's own search (`skillctl search`, for people) finds each name's winner only,
/// scored over the winners: the search index holds shadowed records too (for sessions to
/// whom a winner is hidden), and they add neither hits nor weight.
#[test]
fn a_snapshot_search_finds_winners_only() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |root: &str, name: &str, description: &str| {
        skill_with_description(&tmp.path().join(root), name, description);
    };
    for root in ["personal", "alone"] {
        write(root, "tables", "Formats tables.");
        write(root, "charts", "Draws charts from tables.");
    }
    write(
        "project",
        "tables",
        "Formats tables, tables and more tables, wordily.",
    );
    let shadowing = SkillIndex::builder()
        .root(Layer::Personal, tmp.path().join("personal"))
        .root(Layer::Project, tmp.path().join("project"))
        .build()
        .unwrap();
    let alone = SkillIndex::builder()
        .root(Layer::Personal, tmp.path().join("alone"))
        .build()
        .unwrap();
    assert_eq!(shadowing.snapshot().shadowed().len(), 1);
    let scored = |index: &SkillIndex| {
        let outcome = index.snapshot().search("tables", 10, |_| true);
        let hits: Vec<(String, Layer, f32)> = outcome
            .hits
            .into_iter()
            .map(|h| (h.record.name.to_string(), h.record.layer, h.score))
            .collect();
        (hits, outcome.total)
    };
    assert_eq!(scored(&shadowing), scored(&alone));
    assert_eq!(scored(&shadowing).1, 2);
}

/// An audience told to see unrestricted skills without asking (`seeing_unrestricted_but`)
/// asks its `sees` only of the others and of those it names, and finds what it finds when
/// it asks of every skill.
#[test]
fn an_audience_sees_unrestricted_skills_without_asking() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Invoice tables for {name}.\n{extra}---\nBody.\n"
            ),
        )
        .unwrap();
    };
    write("open-a", "");
    write("open-b", "tags: [billing]\n");
    write("scoped-x", "scope:\n  tenants: [acme]\n");
    write("needs-y", "requires:\n  env: [INVOICE_TOKEN]\n");
    write("quiet", "disable-model-invocation: true\n");
    write("secret-open", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    let snapshot = index.snapshot();
    let unrestricted: Vec<&str> = snapshot
        .skills()
        .filter(|r| r.unrestricted())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(unrestricted, ["open-a", "open-b", "secret-open"]);
    let asked = std::sync::Mutex::new(Vec::new());
    let sees = |r: &skills_model::SkillRecord| {
        asked.lock().unwrap().push(r.name.to_string());
        !r.name.as_str().starts_with("secret-") && r.name.as_str() != "scoped-x"
    };
    let named = |r: &skills_model::SkillRecord| r.name.as_str().starts_with("secret-");
    let scored = |outcome: skills_index::SearchOutcome| {
        let hits: Vec<(String, f32)> = outcome
            .hits
            .into_iter()
            .map(|h| (h.record.name.to_string(), h.score))
            .collect();
        (hits, outcome.total)
    };
    let asking = skills_index::Audience::seeing(&sees);
    let expected = scored(snapshot.search_for(&asking, "invoice tables", 10, |_| true));
    asked.lock().unwrap().clear();
    let trusting = skills_index::Audience::seeing(&sees).seeing_unrestricted_but(&named);
    let found = scored(snapshot.search_for(&trusting, "invoice tables", 10, |_| true));
    assert_eq!(found, expected);
    assert_eq!(
        expected.1, 4,
        "open-a, open-b, needs-y and quiet: {expected:?}"
    );
    let mut asked = asked.into_inner().unwrap();
    asked.sort();
    assert_eq!(asked, ["needs-y", "quiet", "scoped-x", "secret-open"]);
}
