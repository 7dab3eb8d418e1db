//! Options that turn a reading command into one that writes files or runs programs, held
//! back from the words a wildcard rule admits without naming them.
//!
//! `Bash(git diff:*)` admits `git diff` and any words after it, and `git diff
//! --output=.git/config --line-prefix=...` writes a git configuration whose
//! `core.fsmonitor` the next allowed `git status` runs. A skill author who writes such a
//! rule means a command that reads. So a word that a rule's `*` admits (not a word the
//! rule spells out) is held back when [`GUARDED`] lists it for that program: the rule
//! does not admit the command, and another rule must (one that names the option, such as
//! `Bash(git diff --output=patch.diff)`).
//!
//! This narrows allow rules and never widens one. It is a list of known options, not a
//! boundary: a command that interprets a program of its own (`sed`, `awk`, `xargs`,
//! `python`, ...) admits anything under a wildcard, and SECURITY.md says so.

use skills_model::{Specifier, ToolRule};

/// How an option is spelled on a command line.
#[derive(Debug, Clone, Copy)]
enum Opt {
    /// A word starting with the first text (the option alone, with `=value`, a shorter
    /// abbreviation git's option parser takes for it, or a longer option sharing the
    /// start: held too, as the safe side); the second is the option the reason names.
    Long(&'static str, &'static str),
    /// A single-dash word holding this letter (`-o`, `-ofile`, a cluster such as `-bo`).
    Short(char),
}

/// Where in the command the options count.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// Before the subcommand: the words between the program and its first word that does
    /// not start with `-` (git's own options).
    Global,
    /// Anywhere after the program.
    Any,
    /// Anywhere after the program, when its subcommand is one of these.
    Sub(&'static [&'static str]),
}

/// One row of [`GUARDED`].
#[derive(Debug)]
struct Guard {
    /// The program, as the first word names it (or a path ending in it).
    program: &'static str,
    scope: Scope,
    options: &'static [Opt],
}

/// The options held back, by program. Each writes files, runs a program, or points the
/// program at a repository or configuration of the caller's choosing (which then runs
/// one: git's `core.fsmonitor`, `core.pager`, hooks).
const GUARDED: &[Guard] = &[
    Guard {
        program: "git",
        scope: Scope::Global,
        options: &[
            Opt::Short('c'),
            Opt::Short('C'),
            Opt::Long("--config-env", "--config-env"),
            Opt::Long("--exec-path", "--exec-path"),
            Opt::Long("--git-dir", "--git-dir"),
            Opt::Long("--work-tree", "--work-tree"),
            // Not harmful themselves, but their value is a word of its own, which would
            // be taken for the subcommand: held, so every global option that takes a
            // separate value is.
            Opt::Long("--namespace", "--namespace"),
            Opt::Long("--attr-source", "--attr-source"),
            Opt::Long("--super-prefix", "--super-prefix"),
        ],
    },
    Guard {
        program: "git",
        scope: Scope::Any,
        options: &[
            // Commands on git's option parser take a long option by any unambiguous start
            // (`git archive --outp=x`), so each is held from a start short enough.
            // diff, log, show, format-patch, archive: a file written where it says.
            Opt::Long("--ou", "--output"),
            // diff --ext-diff, difftool --extcmd; rebase --exec; grep
            // --open-files-in-pager; clone, fetch, ls-remote --upload-pack; push
            // --receive-pack.
            Opt::Long("--exe", "--exec"),
            Opt::Long("--ext", "--ext-diff"),
            Opt::Long("--op", "--open-files-in-pager"),
            Opt::Long("--up", "--upload-pack"),
            Opt::Long("--receive", "--receive-pack"),
        ],
    },
    Guard {
        program: "git",
        scope: Scope::Sub(&["grep"]),
        options: &[Opt::Short('O')],
    },
    Guard {
        program: "git",
        scope: Scope::Sub(&["archive", "format-patch"]),
        options: &[Opt::Short('o')],
    },
    Guard {
        program: "git",
        scope: Scope::Sub(&["rebase", "difftool"]),
        options: &[Opt::Short('x')],
    },
    Guard {
        program: "git",
        scope: Scope::Sub(&["clone", "ls-remote"]),
        options: &[Opt::Short('u')],
    },
    Guard {
        program: "find",
        scope: Scope::Any,
        options: &[
            Opt::Long("-exec", "-exec"),
            Opt::Long("-ok", "-ok"),
            Opt::Long("-delete", "-delete"),
            Opt::Long("-fprint", "-fprint"),
            Opt::Long("-fls", "-fls"),
        ],
    },
    Guard {
        program: "sort",
        scope: Scope::Any,
        options: &[
            // GNU getopt takes a long option by any unambiguous start too.
            Opt::Long("--o", "--output"),
            Opt::Long("--com", "--compress-program"),
            Opt::Short('o'),
        ],
    },
    Guard {
        program: "rg",
        scope: Scope::Any,
        options: &[
            Opt::Long("--pre", "--pre"),
            Opt::Long("--hostname-bin", "--hostname-bin"),
        ],
    },
    Guard {
        program: "tree",
        scope: Scope::Any,
        // -o writes the listing; -R with -H writes a page in every folder.
        options: &[Opt::Short('o'), Opt::Short('R')],
    },
];

impl Opt {
    fn holds(self, word: &str) -> bool {
        match self {
            Opt::Long(start, name) => {
                // Also any shorter start of the option's name that the program's parser
                // may take for it (`--ex=...` for `--exec`), from `--` and one letter.
                let head = word.split_once('=').map_or(word, |(head, _)| head);
                word.starts_with(start)
                    || (head.len() >= 3 && head.starts_with("--") && name.starts_with(head))
            }
            Opt::Short(letter) => {
                word.len() > 1
                    && word.starts_with('-')
                    && !word.starts_with("--")
                    && word[1..].contains(letter)
            }
        }
    }

    /// The option as the reason names it.
    fn spelled(self) -> String {
        match self {
            Opt::Long(_, name) => name.to_owned(),
            Opt::Short(letter) => format!("-{letter}"),
        }
    }
}

/// An option of `words` that `rule` admits only through its wildcard, spelled as the
/// reason names it (`--output of git`); `None` when the rule admits the command whole (it
/// names every word, or it is the whole tool, as `Bash`, which the author gave in full).
/// `words` is the command `rule` was matched against, and `spelled` the text it was
/// matched as (`shell::spelling` of the words).
pub(crate) fn held_back(rule: &ToolRule, spelled: &str, words: &[String]) -> Option<String> {
    let covered = match rule.specifier()? {
        Specifier::Exact(_) => return None,
        Specifier::Prefix(text) | Specifier::WordPrefix(text) => text.len(),
    };
    if spelled.len() <= covered {
        // The rule's text spells every word: nothing is admitted by the wildcard.
        return None;
    }
    let (first, rest) = words.split_first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if !GUARDED.iter().any(|g| g.program == program) {
        return None;
    }
    // The words the rule's text spells out whole: the first `named`.
    let mut end = 0;
    let mut named = 0;
    for word in words {
        end += crate::shell::spelled_len(word);
        if end > covered {
            break;
        }
        named += 1;
        end += 1;
    }
    let sub_at = rest.iter().position(|w| !w.starts_with('-')).map(|i| i + 1);
    let subcommand = sub_at.map(|i| words[i].as_str());
    for guard in GUARDED.iter().filter(|g| g.program == program) {
        let (from, to) = match guard.scope {
            Scope::Global => (1, sub_at.unwrap_or(words.len())),
            Scope::Any => (1, words.len()),
            Scope::Sub(subs) if subcommand.is_some_and(|s| subs.contains(&s)) => (1, words.len()),
            Scope::Sub(_) => continue,
        };
        for word in &words[from.max(named)..to.max(from.max(named))] {
            if let Some(option) = guard.options.iter().find(|o| o.holds(word)) {
                return Some(format!("{} of {program}", option.spelled()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (rule, command, the option held back)
    #[test]
    fn spelled_lengths_are_the_spellings_lengths() {
        for word in ["git", "a b", "it's", "''", "", "--output=x", "ünï"] {
            let words = [word.to_owned()];
            assert_eq!(
                crate::shell::spelled_len(word),
                crate::shell::spelling(&words).len(),
                "{word:?}"
            );
        }
    }

    #[test]
    fn a_wildcard_admits_no_option_that_writes_or_runs() {
        let table: &[(&str, &str, Option<&str>)] = &[
            ("Bash(git diff:*)", "git diff --stat", None),
            (
                "Bash(git diff:*)",
                "git diff --output=.git/config",
                Some("--output of git"),
            ),
            (
                "Bash(git diff:*)",
                "git diff --output x",
                Some("--output of git"),
            ),
            (
                "Bash(git diff:*)",
                "git diff --ext-diff",
                Some("--ext-diff of git"),
            ),
            ("Bash(git diff:*)", "git diff --no-ext-diff", None),
            (
                "Bash(git diff *)",
                "git diff --output=x",
                Some("--output of git"),
            ),
            // Named by the rule, it is the author's choice.
            (
                "Bash(git diff --output=patch.diff:*)",
                "git diff --output=patch.diff",
                None,
            ),
            (
                "Bash(git diff --output=patch.diff)",
                "git diff --output=patch.diff",
                None,
            ),
            ("Bash(git log:*)", "git log --oneline -5", None),
            ("Bash(git diff:*)", "git diff --exit-code", None),
            (
                "Bash(git archive:*)",
                "git archive --outp=x.zip HEAD",
                Some("--output of git"),
            ),
            (
                "Bash(git difftool:*)",
                "git difftool --extc=sh",
                Some("--ext-diff of git"),
            ),
            ("Bash(git:*)", "git -c core.pager=sh log", Some("-c of git")),
            ("Bash(git:*)", "git -C /elsewhere status", Some("-C of git")),
            (
                "Bash(git:*)",
                "git --git-dir=/tmp/x status",
                Some("--git-dir of git"),
            ),
            ("Bash(git:*)", "git grep -c needle", None),
            ("Bash(git:*)", "git commit -c HEAD", None),
            (
                "Bash(git grep:*)",
                "git grep -Ovim needle",
                Some("-O of git"),
            ),
            ("Bash(git grep:*)", "git grep -iO needle", Some("-O of git")),
            ("Bash(git ls-files:*)", "git ls-files -o", None),
            (
                "Bash(git archive:*)",
                "git archive -o out.zip HEAD",
                Some("-o of git"),
            ),
            (
                "Bash(git rebase:*)",
                "git rebase -x make main",
                Some("-x of git"),
            ),
            (
                "Bash(/usr/bin/git diff:*)",
                "/usr/bin/git diff --output=x",
                Some("--output of git"),
            ),
            ("Bash(find:*)", "find . -name x", None),
            (
                "Bash(find:*)",
                "find . -exec rm {} ;",
                Some("-exec of find"),
            ),
            ("Bash(find:*)", "find . -execdir sh", Some("-exec of find")),
            ("Bash(find:*)", "find . -delete", Some("-delete of find")),
            (
                "Bash(find:*)",
                "find . -fprint0 out",
                Some("-fprint of find"),
            ),
            ("Bash(sort:*)", "sort -u data", None),
            (
                "Bash(sort:*)",
                "sort --co=sh data",
                Some("--compress-program of sort"),
            ),
            (
                "Bash(git rebase:*)",
                "git rebase --ex=sh main",
                Some("--exec of git"),
            ),
            (
                "Bash(git ls-remote:*)",
                "git ls-remote --u=sh .",
                Some("--upload-pack of git"),
            ),
            (
                "Bash(git push:*)",
                "git push --rec=sh dst",
                Some("--receive-pack of git"),
            ),
            (
                "Bash(git push:*)",
                "git push --recurse-submodules=check dst",
                None,
            ),
            (
                "Bash(git:*)",
                "git --namespace n -c core.fsmonitor=sh status",
                Some("--namespace of git"),
            ),
            (
                "Bash(git:*)",
                "git --attr-source HEAD -C /elsewhere status",
                Some("--attr-source of git"),
            ),
            (
                "Bash(rg:*)",
                "rg --hostname-bin=./run x",
                Some("--hostname-bin of rg"),
            ),
            ("Bash(tree:*)", "tree -R -H . .", Some("-R of tree")),
            (
                "Bash(sort:*)",
                "sort --outp=x data",
                Some("--output of sort"),
            ),
            ("Bash(sort:*)", "sort -bo out data", Some("-o of sort")),
            (
                "Bash(sort:*)",
                "sort --compress-program=sh data",
                Some("--compress-program of sort"),
            ),
            ("Bash(rg:*)", "rg --pre ./run x", Some("--pre of rg")),
            ("Bash(tree:*)", "tree -o out", Some("-o of tree")),
            // The whole tool, or a rule naming every word, is the author's to give.
            ("Bash", "git diff --output=x", None),
            ("Bash(git diff --output=x)", "git diff --output=x", None),
            ("Bash(ls:*)", "ls -o", None),
        ];
        for (rule, command, held) in table {
            let rule: ToolRule = rule.parse().expect("a rule");
            let words: Vec<String> = command.split(' ').map(str::to_owned).collect();
            let spelled = crate::shell::spelling(&words);
            assert_eq!(
                held_back(&rule, &spelled, &words).as_deref(),
                *held,
                "{rule} on {command:?}"
            );
        }
    }
}
