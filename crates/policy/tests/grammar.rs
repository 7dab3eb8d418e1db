//! Bash allow rules by grammar: a table of lines under `Bash(git:*) Bash(head:*)
//! Bash(echo:*)`, each allowed, or denied with the construct its reason names; lines too
//! long or too deep for a table; and properties of the grammar's readings. No session: each
//! line is decided against one skill's compiled rules.

mod support;

use support::bash;

/// `None`: allowed. `Some(text)`: denied, the reason containing `text`.
const TABLE: &[(&str, Option<&str>)] = &[
    // Admitted: simple commands of plain words, joined by the four operators.
    ("git status", None),
    ("git status && git diff", None),
    ("git log --oneline | head -5", None),
    ("git status; git diff || echo failed", None),
    ("git status\ngit diff", None),
    ("git commit -m 'fix: the parser'", None),
    ("git commit -m \"fix the parser\"", None),
    ("git log '$HOME'", None),
    ("git a'b'\"c\"", None),
    ("git 'status; rm -rf /'", None),
    ("git status;", None),
    ("git log user@host", None),
    // Found by the check_tool fuzz target: tree-sitter paired these quotes otherwise than
    // the shell, reading an unquoted `&` (a background job) as part of a word.
    ("git\"\"\"\"&\"\"\"\"\"x", Some("")),
    ("gi't\t\tg\t.\t\t'\"\"\"+\"\"\"\"\"\"f+i\"\"\"\"\"\"\"\"&\"\"\"\"\"==\"\"\"\"\"\"\"\"\"\"\"\"\"+\"\"\"\"\"\"f+i\"\"\"\"\"\"\"\"&\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"''", Some("not plain commands")),
    // Found by the check_tool fuzz target: lines on which tree-sitter's error recovery takes
    // time exponential in their pipes (seconds for these, minutes at 956 bytes), refused
    // before the grammar reads them.
    ("|2|2\n1=.|.|b|.|.|b|b|.|_|b|.|.|.|.|.|.|b|.|.|b|.|_|.|s|.|.|b|.|_0@", Some("with no command before it")),
    ("1|1|2\nA=b|.|.|b|.|b|.|_|b|.|.|.|s|.|.|b|.|.|b|.|.|.|s|.|.|b|.|_0@", Some("not plain commands")),
    ("git status\n| git log", Some("with no command before it")),
    ("git status ; ; git log", Some("with no command before it")),
    ("git status |\n git log", None),
    ("git log 'héllo'", None),
    // Found by the check_tool fuzz target: an unquoted non-ASCII word.
    ("git log héllo", Some("a non-ASCII character")),
    ("git\u{a0}status", Some("a non-ASCII character")),
    // A command no rule names.
    ("rm -rf /", Some("not in the allowed-tools")),
    ("git status && rm -rf /", Some("not in the allowed-tools")),
    ("git log | sh", Some("not in the allowed-tools")),
    // Regression: a function definition passed a `git` prefix rule.
    (
        "git () ( touch /tmp/x ); git",
        Some("a function definition"),
    ),
    (
        "function git { touch /tmp/x; }; git",
        Some("a function definition"),
    ),
    ("(git status)", Some("a subshell")),
    ("{ git status; }", Some("a command group")),
    ("git $(rm -rf /)", Some("a command substitution")),
    ("git `rm -rf /`", Some("a command substitution")),
    ("git diff <(rm -rf /)", Some("a process substitution")),
    ("git log > /etc/passwd", Some("a redirection")),
    ("git log 2>&1", Some("a redirection")),
    ("git log >> out", Some("a redirection")),
    ("git apply < patch", Some("a redirection")),
    ("A=1 git status", Some("a variable assignment")),
    (
        "GIT_SSH_COMMAND=evil git fetch",
        Some("a variable assignment"),
    ),
    ("git log $HOME", Some("a parameter expansion")),
    ("git log ${x}", Some("a parameter expansion")),
    ("git log \"$x\"", Some("a parameter expansion")),
    ("git log $((1+1))", Some("an arithmetic expansion")),
    ("git log *.rs", Some("a glob")),
    ("git log ~/x", Some("a glob")),
    ("git log {a,b}", Some("glob")),
    ("git log \"a\\\"b\"", Some("a backslash escape")),
    ("git log a\\ b", Some("a backslash escape")),
    // Regression (found by the property test): a line continuation joins `git` and `hub`
    // into one word the tree read as two.
    ("git\\\ngit", Some("a backslash escape")),
    ("git status\r", Some("a control character")),
    ("if true; then git status; fi", Some("control flow")),
    ("for x in a; do git log; done", Some("control flow")),
    ("while git status; do git log; done", Some("control flow")),
    ("case x in x) git log;; esac", Some("control flow")),
    ("git log <<EOF\nhi\nEOF", Some("heredoc")),
    ("git log <<< hi", Some("heredoc")),
    ("git status &", Some("a background job")),
    ("git status & rm -rf /", Some("a background job")),
    ("! git status", Some("a negated command")),
    ("git log |& head", Some("|&")),
    ("git status # comment", Some("a comment")),
    ("export X=1; git status", Some("a declaration")),
    ("git status 'unterminated", Some("grammar cannot read")),
    ("", Some("")),
    ("   ", Some("")),
];

#[test]
fn bash_lines_are_judged_by_the_grammar() {
    let mut wrong = Vec::new();
    for (line, expected) in TABLE {
        let d = bash("Bash(git:*) Bash(head:*) Bash(echo:*)", line);
        let ok = match expected {
            None => d.allowed,
            Some(text) => !d.allowed && d.reason.contains(text),
        };
        if !ok {
            wrong.push(format!("{line:?}: allowed {} ({})", d.allowed, d.reason));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// Regression (attack): a long line ending in an operator (`git status | ` repeated) passed
// the quoting rules' reading, which dropped the empty command at its end, so the grammar
// read it whole, in time quadratic in its pipes (56 s for a 325 KB line, hours at the
// 4 MiB cap) while the session waited. It is now refused before the grammar, as the
// quoting rules cannot read it.
#[test]
fn a_long_line_ending_in_an_operator_never_reaches_the_grammar() {
    for piece in [
        "git status | ",
        "git status |\n",
        "git status && ",
        "git status ||\n\n",
    ] {
        let line = piece.repeat(2_000);
        let d = bash("Bash(git:*)", &line);
        assert!(!d.allowed, "{piece:?}");
        assert!(
            d.reason.contains("not plain commands"),
            "{piece:?}: {}",
            d.reason
        );
    }
    // A pipeline continued on the next line is still one the shell runs.
    let d = bash("Bash(git:*)", "git log |\ngit status");
    assert!(d.allowed, "{}", d.reason);
}

// Regression (a parallel review): words were joined with plain spaces, so a quoted blank
// vanished and `git -C '/srv log' push` matched a rule meant for `git -C /srv log`.
#[test]
fn rules_see_words_as_the_shell_reads_them_back() {
    let allowed = |line: &str| bash("Bash(git -C /srv log:*)", line).allowed;
    assert!(allowed("git -C /srv log --oneline"));
    assert!(allowed("git -C '/srv' log"));
    assert!(!allowed("git -C '/srv log' push"));
    assert!(!allowed("git -C \"/srv log\" push"));
}

// Regression: `a && b && ...` is a list inside a list in the grammar's tree, walked by
// recursion; a line of ten thousand `&&` (about 140 KB, far under the line limit)
// overflowed the stack and aborted the process, session and batch with it. `'git'`
// sends the line past the fast path to the grammar.
#[test]
fn a_line_of_ten_thousand_lists_is_judged_not_a_crash() {
    for (operator, last, allowed_whole) in [
        ("&&", "git status", true),
        ("||", "git status", true),
        ("&&", "rm -rf /", false),
    ] {
        let mut line = "'git' status".to_owned();
        for _ in 0..10_000 {
            line.push_str(&format!(" {operator} git status"));
        }
        line.push_str(&format!(" {operator} {last}"));
        let decision = bash("Bash(git status:*)", &line);
        assert_eq!(decision.allowed, allowed_whole, "{operator} then {last}");
    }
}

// Regression: `Bash(git diff:*)` admitted `git diff --output=.git/config --line-prefix=...`,
// which writes a git configuration whose `core.fsmonitor` the next allowed `git status`
// runs: a rule for a command that reads became any program at all.
#[test]
fn a_wildcard_does_not_admit_an_option_that_writes_or_runs() {
    let rules = "Bash(git status:*) Bash(git diff:*) Bash(git diff --output=review.patch)";
    let planted = r#"git diff --no-index --output=.git/config --line-prefix='[core] fsmonitor = "touch /tmp/owned" #' /dev/null /etc/hostname ; git status"#;
    let decision = bash(rules, planted);
    assert!(!decision.allowed, "{decision:?}");
    assert!(
        decision.reason.contains("--output of git"),
        "{}",
        decision.reason
    );
    for (command, allowed) in [
        ("git diff --ext-diff HEAD", false),
        ("git status && git diff --output=elsewhere.txt", false),
        ("git diff --stat HEAD", true),
        ("git status --short && git diff --no-ext-diff", true),
        // The option the rules name is the authors' choice.
        ("git diff --output=review.patch", true),
    ] {
        let decision = bash(rules, command);
        assert_eq!(decision.allowed, allowed, "{command}: {}", decision.reason);
    }
}

mod properties {
    use proptest::prelude::*;
    use skills_model::ToolRules;
    use skills_policy::__fuzz::{admitted_commands, bash_fast_path, bash_parse};

    use super::support::bash;

    const RULES: &str = "Bash(git:*) Bash(head -5) Bash(echo ok:*)";

    /// Pieces of shell a line is built from: words, keywords, quotes, operators and every
    /// metacharacter the grammar must refuse.
    const TOKENS: &[&str] = &[
        "git", "status", "head", "-5", "echo", "ok", "rm", "-rf", "/", "if", "then", "fi", "do",
        "done", "export", "A=1", "x=y", " ", " ", " ", "&&", "||", ";", "|", "&", "\n", "'", "\"",
        "$", "$(", "`", "(", ")", "{", "}", "<", ">", "2>&1", "<<", "*", "?", "[", "~", "\\",
        "\\\n", "\r", "#", "!", "|&", "'a b'", "\"c d\"", "$x", "'$x'", "=", ",", ":", ".", "@",
        "+", "%", "time5",
    ];

    fn line() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(TOKENS), 0..12).prop_map(|t| t.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The fast path reads every line it accepts exactly as the parser does.
        #[test]
        fn the_fast_path_agrees_with_the_parser(line in line()) {
            if let Some(fast) = bash_fast_path(&line) {
                prop_assert_eq!(Ok(fast), bash_parse(&line), "{:?}", line);
            }
        }

        /// Every allowed line is provably inside the rules: an independent reading finds
        /// only admitted constructs, and each of its commands matches a rule.
        #[test]
        fn every_allowed_line_is_inside_the_rules(line in line()) {
            let d = bash(RULES, &line);
            if d.allowed {
                let rules = ToolRules::parse_lenient(RULES).0;
                let commands = admitted_commands(&line);
                prop_assert!(commands.is_some(), "allowed but not admitted: {:?}", line);
                for words in commands.unwrap_or_default() {
                    let command = words.join(" ");
                    prop_assert!(
                        rules.any_matches("Bash", Some(&command)),
                        "allowed {:?} holds {:?}, which no rule matches",
                        line,
                        command
                    );
                }
            }
        }
    }
}
