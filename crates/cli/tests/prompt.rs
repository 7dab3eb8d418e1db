//! `skillctl prompt` end to end: the agentskills form, the budget's closing line, the tool
//! description, the active form and an unknown skill.

mod common;

fn skillctl(args: &[&str]) -> (i32, String, String) {
    let run = common::run(common::skillctl().args(args));
    (run.code.unwrap_or(-1), run.stdout, run.stderr)
}

fn roots() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, description) in [
        (
            "alpha",
            "Does alpha things & more. Use when alpha is asked.",
        ),
        ("beta", "Does <beta> things. Use when beta is asked."),
    ] {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n"),
        )
        .unwrap();
    }
    tmp
}

#[test]
fn prints_available_skills_in_the_agentskills_form() {
    let tmp = roots();
    let root = format!("personal={}", tmp.path().display());
    let (code, out, _) = skillctl(&["prompt", "--no-defaults", "--root", &root]);
    assert_eq!(code, 0);
    let alpha = tmp.path().join("alpha/SKILL.md");
    let beta = tmp.path().join("beta/SKILL.md");
    let expected = format!(
        "<available_skills>\n<skill>\n<name>\nalpha\n</name>\n<description>\nDoes alpha things &amp; more. Use when alpha is asked.\n</description>\n<location>\n{}\n</location>\n</skill>\n<skill>\n<name>\nbeta\n</name>\n<description>\nDoes &lt;beta&gt; things. Use when beta is asked.\n</description>\n<location>\n{}\n</location>\n</skill>\n</available_skills>\n",
        alpha.display(),
        beta.display()
    );
    assert_eq!(out, expected);
}

#[test]
fn a_budget_leaves_skills_out_and_says_so() {
    let tmp = roots();
    let root = format!("personal={}", tmp.path().display());
    let run = |budget: &str| {
        skillctl(&[
            "prompt",
            "--no-defaults",
            "--root",
            &root,
            "--budget",
            budget,
        ])
    };
    // Room for one of the two skills: the block holds it, the closing line says one more
    // exists and where to find it.
    let (code, one, _) = run("330");
    assert_eq!(code, 0, "{one}");
    assert!(one.chars().count() <= 330, "{one}");
    assert_eq!(one.matches("<skill>").count(), 1, "{one}");
    assert!(
        one.contains("(1 more skill not shown: the prompt budget is 330 characters; find them with skills_search)"),
        "{one}"
    );
    // Too small for any skill: refused, with the smallest budget that shows one (was: the
    // closing line alone, or an empty block).
    for budget in ["100", "200"] {
        let (code, out, err) = run(budget);
        assert_eq!(code, 2, "{out}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("too small to show any skill: at least"),
            "{err}"
        );
    }
}

#[test]
fn active_without_a_skill_is_a_usage_error() {
    let tmp = roots();
    let root = format!("personal={}", tmp.path().display());
    let (code, out, err) = skillctl(&[
        "prompt",
        "--no-defaults",
        "--root",
        &root,
        "--format",
        "active",
    ]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("--skill"), "{err}");
}

#[test]
fn tool_and_active_forms() {
    let tmp = roots();
    let root = format!("personal={}", tmp.path().display());
    let (code, out, _) = skillctl(&[
        "prompt",
        "--no-defaults",
        "--root",
        &root,
        "--format",
        "tool",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("<name>\nalpha\n</name>") && !out.contains("<location>"),
        "{out}"
    );
    let (code, out, _) = skillctl(&[
        "prompt",
        "--no-defaults",
        "--root",
        &root,
        "--format",
        "active",
        "--skill",
        "beta",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("<active_skills>\n<skill name=\"beta\""),
        "{out}"
    );
    assert!(out.contains("Steps for beta."), "{out}");
    let (code, _, err) = skillctl(&[
        "prompt",
        "--no-defaults",
        "--root",
        &root,
        "--format",
        "active",
        "--skill",
        "betta",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("did you mean \"beta\""), "{err}");
}
