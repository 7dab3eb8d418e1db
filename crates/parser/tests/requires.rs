//! Each convention a skill may say its needs in, read into one `Requires` (a table: the
//! frontmatter lines and the needs they must give, as JSON), and skillscraft's
//! `security.capabilities` in both its forms.

use serde_json::{json, Value};
use skills_model::Requires;
use skills_parser::{ParseInput, SkillParser};

fn parse(extra: &str) -> skills_parser::ParsedSkill {
    let source = format!("---\nname: demo\ndescription: A demo skill for the requirement tests.\n{extra}---\nBody.\n");
    SkillParser::default().parse(&ParseInput::new(source.as_bytes(), "demo"))
}

fn needs(extra: &str) -> Value {
    let parsed = parse(extra);
    serde_json::to_value(Requires::of(&parsed.frontmatter).map(|r| r.into_owned())).unwrap()
}

#[test]
fn each_convention_is_read_into_one_model() {
    let table: &[(&str, &str, Value)] = &[
        (
            "ours",
            "requires:\n  bins: [jq, git]\n  env: [GITHUB_TOKEN]\n  os: [linux, macos]\n  secrets: [API_TOKEN]\n",
            json!({"bins": ["jq", "git"], "env": ["GITHUB_TOKEN"], "os": ["linux", "macos"], "secrets": ["API_TOKEN"]}),
        ),
        (
            "ours, comma-separated",
            "requires:\n  bins: jq, git\n",
            json!({"bins": ["jq", "git"]}),
        ),
        (
            "OpenClaw, nested in metadata (JSON as it writes it)",
            "metadata: {\"openclaw\": {\"requires\": {\"bins\": [\"uv\"], \"anyBins\": [\"rg\", \"grep\"], \"env\": [\"GEMINI_API_KEY\"], \"config\": [\"browser.enabled\"]}, \"os\": [\"darwin\", \"win32\"]}}\n",
            json!({"bins": ["uv"], "anyBins": [["rg", "grep"]], "env": ["GEMINI_API_KEY"], "os": ["macos", "windows"], "config": ["browser.enabled"]}),
        ),
        (
            "OpenClaw, nested in metadata (block YAML)",
            "metadata:\n  openclaw:\n    os: [linux]\n    requires:\n      bins: [ffmpeg]\n",
            json!({"bins": ["ffmpeg"], "os": ["linux"]}),
        ),
        (
            "Hermes, at the top level",
            "requires_toolsets: [terminal]\nfallback_for_tools: [web_search]\n",
            json!({"tools": ["terminal"], "fallbackForTools": ["web_search"]}),
        ),
        (
            "Hermes, single tools and fallback toolsets",
            "requires_tools: [terminal]\nfallback_for_toolsets: [browser]\n",
            json!({"tools": ["terminal"], "fallbackForTools": ["browser"]}),
        ),
        (
            "Hermes, in metadata.hermes",
            "metadata:\n  hermes:\n    requires_toolsets: [memory, skills]\n",
            json!({"tools": ["memory", "skills"]}),
        ),
        (
            "skillscraft, required tools only",
            "tool-binding:\n  dependencies:\n    - tool: docker\n      required: true\n      purpose: build images\n      minVersion: \"24\"\n    - tool: jq\n      required: false\n",
            json!({"tools": ["docker"]}),
        ),
        (
            "all at once, each name once",
            "requires:\n  bins: [git]\nmetadata:\n  openclaw:\n    requires:\n      bins: [git, gh]\n",
            json!({"bins": ["git", "gh"]}),
        ),
        ("nothing", "license: MIT\n", Value::Null),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(what, extra, want)| {
            let got = needs(extra);
            (got != *want).then(|| format!("{what}: got {got}, want {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `validate` shows a `requires:` of the wrong form, each problem at its place.
#[test]
fn the_form_of_requires_is_checked() {
    let table: &[(&str, &str)] = &[
        ("requires: [jq]\n", "`requires` should be a mapping"),
        ("requires:\n  bins: [a/b]\n", "should be a program's name"),
        (
            "requires:\n  secrets: [\"MY-TOKEN\"]\n",
            "should be a variable's name",
        ),
        (
            "requires:\n  os: [beos]\n",
            "`linux`, `macos` or `windows`, not \"beos\"",
        ),
        (
            "requires:\n  programs: [jq]\n",
            "only `bins`, `env`, `os` and `secrets`",
        ),
    ];
    for (extra, message) in table {
        let parsed = parse(extra);
        let found = parsed
            .diagnostics
            .iter()
            .find(|d| d.message.contains(message))
            .unwrap_or_else(|| panic!("{extra:?}: no {message:?} in {:?}", parsed.diagnostics));
        assert!(found.line.is_some(), "{found:?} has no place");
    }
}

/// skillscraft's capabilities as names and as `{capability, reason, optional}` objects are
/// both kept, and serialised as written (what `show` and `read-properties` print).
#[test]
fn capability_objects_and_names_are_both_read() {
    let parsed = parse(
        "security:\n  capabilities:\n    - network\n    - capability: filesystem\n      reason: writes reports\n      optional: true\n",
    );
    let fm = serde_json::to_value(&parsed.frontmatter).unwrap();
    assert_eq!(
        fm["security"]["capabilities"],
        json!(["network", {"capability": "filesystem", "reason": "writes reports", "optional": true}])
    );
    assert!(
        !parsed
            .diagnostics
            .iter()
            .any(|d| d.message.contains("capabilities")),
        "{:?}",
        parsed.diagnostics
    );
}
