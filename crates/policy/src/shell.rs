//! Bash lines judged by the shell's grammar. An allow rule admits a line only when its
//! parse contains nothing but admitted constructs: simple commands of plain words, joined by
//! `&&`, `||`, `;`, `|` (or newlines). Anything else is refused, with the construct named.
//!
//! # What is admitted
//!
//! A word is unquoted, single-quoted, or double-quoted without `$`, backticks or backslash
//! escapes (and words made of such pieces, as `a'b'"c"`). An unquoted word must not expand:
//! no glob (`*`, `?`, `[`), no brace expansion (`{`), no `~`, no backslash (nor a line
//! continuation), no control character. The first
//! word of a command must not be an assignment. Everything else is refused: redirections
//! (`2>&1` included), assignments, command and process substitution, parameter and
//! arithmetic expansion, groups, subshells, function definitions, heredocs and here-strings,
//! control flow, `!`, background jobs (`&`), `|&`, comments, and any syntax error.
//!
//! # What a rule sees
//!
//! Each command's words, quotes removed, joined by single spaces: `git 'log' --oneline` is
//! seen as `git log --oneline`. Quoting cannot smuggle an operator into another command: a
//! quoted `;` is part of one word of one command, and the rule judges that command (a prefix
//! rule `Bash(git:*)` rightly allows `git 'a; b'`: it is `git` with one odd argument).
//!
//! # The parser, and the fast path
//!
//! The grammar is tree-sitter-bash (as Codex judges commands), one parser per thread. Lines
//! made only of plain characters (`[A-Za-z0-9_./:@+,=-]`), blanks and the four operators,
//! the most common by far, are split without it; a property test holds the fast path equal
//! to the parser on every line it accepts.

use std::cell::RefCell;
use std::fmt;

use tree_sitter::{Node, Parser};

/// Why a line is not admitted under an allow rule: the construct it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Syntax,
    Empty,
    Background,
    PipeStderr,
    Redirection,
    Heredoc,
    Assignment,
    CommandSubstitution,
    ProcessSubstitution,
    Expansion,
    Arithmetic,
    Glob,
    Escape,
    Group,
    Subshell,
    Function,
    ControlFlow,
    Negation,
    Comment,
    Control,
    NonAscii,
    Divergent,
    Unreadable,
    BareOperator,
    TestCommand,
    Declaration,
    Other,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Syntax => "a line the shell grammar cannot read",
            Refusal::Empty => "an empty command",
            Refusal::Background => "a background job (&)",
            Refusal::PipeStderr => "a pipe of standard error (|&)",
            Refusal::Redirection => "a redirection",
            Refusal::Heredoc => "a heredoc or here-string",
            Refusal::Assignment => "a variable assignment",
            Refusal::CommandSubstitution => "a command substitution",
            Refusal::ProcessSubstitution => "a process substitution",
            Refusal::Expansion => "a parameter expansion",
            Refusal::Arithmetic => "an arithmetic expansion",
            Refusal::Glob => "a glob, brace or tilde expansion",
            Refusal::Escape => "a backslash escape",
            Refusal::Group => "a command group ({ ... })",
            Refusal::Subshell => "a subshell",
            Refusal::Function => "a function definition",
            Refusal::ControlFlow => "control flow (if, for, while, until, case, select)",
            Refusal::Negation => "a negated command (!)",
            Refusal::Comment => "a comment",
            Refusal::Control => "a control character",
            Refusal::NonAscii => "a non-ASCII character outside quotes",
            Refusal::Divergent => {
                "a line the grammar and the shell's quoting rules read differently"
            }
            Refusal::BareOperator => "an operator (|, &, ;) with no command before it",
            Refusal::Unreadable => {
                "a line that is not plain commands (words, quotes, &&, ||, ;, |) by the shell's quoting rules"
            }
            Refusal::TestCommand => "a test command ([[ ... ]])",
            Refusal::Declaration => "a declaration (export, local, declare, unset)",
            Refusal::Other => "a construct the grammar check does not admit",
        })
    }
}

impl Refusal {
    /// Whether the construct lies inside a word (an expansion, a substitution, an escape):
    /// the line's commands can still be told apart, so a denial may name one no rule
    /// admits ([`command_names`]).
    pub(crate) fn inside_a_word(self) -> bool {
        matches!(
            self,
            Refusal::Glob
                | Refusal::Expansion
                | Refusal::Arithmetic
                | Refusal::Escape
                | Refusal::NonAscii
                | Refusal::CommandSubstitution
                | Refusal::ProcessSubstitution
        )
    }
}

/// The simple commands of `line`, each as its words with quotes removed, when the line holds
/// only admitted constructs (see the module documentation).
pub(crate) fn simple_commands(line: &str) -> Result<Vec<Vec<String>>, Refusal> {
    if let Some(commands) = fast_path(line) {
        return Ok(commands);
    }
    parse(line)
}

/// What a rule is matched against: a command's words joined by single spaces, each word
/// that holds anything but `[A-Za-z0-9_./:=@%+,^-]` (or is empty) single-quoted, so the
/// text reads back as the same argv. A plain join would let `git -C '/srv log' push` match
/// a rule for `git -C /srv log`; quoted, it cannot. A rule naming a word with a blank
/// must quote it the same way.
pub(crate) fn spelling(words: &[String]) -> String {
    // The size of the spelling when no word needs quotes (most lines): made once.
    let mut out = String::with_capacity(words.iter().map(|w| w.len() + 1).sum());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if plain(w) {
            out.push_str(w);
        } else {
            out.push('\'');
            out.push_str(&w.replace('\'', "'\\''"));
            out.push('\'');
        }
    }
    out
}

/// Whether [`spelling`] writes `word` as it is, unquoted.
fn plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,^-".contains(&b))
}

/// The length of `word` as [`spelling`] writes it, without writing it.
pub(crate) fn spelled_len(word: &str) -> usize {
    if plain(word) {
        word.len()
    } else {
        // Quoted, each `'` written as four characters.
        2 + word.len() + 3 * word.bytes().filter(|b| *b == b'\'').count()
    }
}

/// The longest line, in bytes, the quoting rules cannot read whose construct the grammar
/// still names; a longer one is refused as [`Refusal::Unreadable`]. The slowest line of
/// this length found takes the grammar about 8 ms.
const GRAMMAR_NAMES_UP_TO: usize = 48;

/// The full parser: tree-sitter-bash, then a walk that admits only what it knows.
pub(crate) fn parse(line: &str) -> Result<Vec<Vec<String>>, Refusal> {
    lexical_check(line)?;
    no_operator_without_command(line)?;
    // The quoting rules' reading, which the grammar's must equal. A line they cannot read
    // is refused whatever the grammar says, which then only names the construct; its
    // recovery from an error can take time exponential in the line (65 bytes the fuzzer
    // found took a second, 956 bytes minutes), so it names the construct of a short line
    // only (`tests/grammar.rs`, the rows found by the fuzzer).
    let lexical = lexical_commands(line);
    if lexical.is_none() && line.len() > GRAMMAR_NAMES_UP_TO {
        return Err(Refusal::Unreadable);
    }
    thread_local! {
        static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|_| Refusal::Syntax)?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut().ok_or(Refusal::Syntax)?;
        let tree = parser.parse(line, None).ok_or(Refusal::Syntax)?;
        let root = tree.root_node();
        if root.has_error() {
            return Err(Refusal::Syntax);
        }
        let mut commands = Vec::new();
        statements(root, line, &mut commands)?;
        if commands.is_empty() {
            return Err(Refusal::Empty);
        }
        // Two readings, one by the grammar and one by the shell's quoting rules, must agree.
        if lexical.as_ref() != Some(&commands) {
            return Err(Refusal::Divergent);
        }
        Ok(commands)
    })
}

/// What the tree does not show: a backslash outside single quotes (a line continuation,
/// `git\<newline>hub`, joins two words into one the tree reads as two) and control
/// characters other than tab and newline.
fn lexical_check(line: &str) -> Result<(), Refusal> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    for c in line.chars() {
        match (&quote, c) {
            (_, c) if c.is_control() && c != '\n' && c != '\t' => return Err(Refusal::Control),
            (Quote::Single, '\'') => quote = Quote::None,
            (Quote::Single, _) => {}
            (_, '\\') => return Err(Refusal::Escape),
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Double, '"') => quote = Quote::None,
            _ => {}
        }
    }
    Ok(())
}

/// A `|`, `&` or lone `;` with no command before it in its statement (at the start of the
/// line or of a line, or right after another operator) is a syntax error to the shell,
/// refused here before the grammar reads the line: tree-sitter's recovery from that error
/// can take time exponential in the pipes that follow (66 bytes the fuzzer found took
/// seconds, 956 bytes minutes), and the grammar would refuse the line anyway.
/// (`tests/grammar.rs`, the rows found by the fuzzer.)
fn no_operator_without_command(line: &str) -> Result<(), Refusal> {
    let mut at_start = true;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => {
                quote = Some(c);
                at_start = false;
            }
            (None, ' ' | '\t') => {}
            // A newline after a command ends its statement; after an operator it waits
            // for the operator's command.
            (None, '\n') => at_start = true,
            (None, ';') if chars.peek() == Some(&';') => {
                // `;;` ends a case branch: the grammar's to judge.
                chars.next();
                at_start = true;
            }
            (None, '|' | '&' | ';') => {
                if at_start {
                    return Err(Refusal::BareOperator);
                }
                // `||`, `&&`, `|&`: one operator.
                if matches!(chars.peek(), Some('|' | '&')) {
                    chars.next();
                }
                at_start = true;
            }
            (None, _) => at_start = false,
        }
    }
    Ok(())
}

/// A node's children, named and anonymous, in order.
fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// The refusal for a node kind that is not admitted where it stands.
fn refusal(kind: &str) -> Refusal {
    match kind {
        "file_redirect" | "redirected_statement" | "file_descriptor" => Refusal::Redirection,
        "heredoc_redirect" | "herestring_redirect" | "heredoc_body" => Refusal::Heredoc,
        "variable_assignment" | "variable_assignments" => Refusal::Assignment,
        "command_substitution" | "`" | "$(" => Refusal::CommandSubstitution,
        "process_substitution" => Refusal::ProcessSubstitution,
        "simple_expansion" | "expansion" | "special_variable_name" | "variable_name" => {
            Refusal::Expansion
        }
        "arithmetic_expansion" => Refusal::Arithmetic,
        "ansi_c_string" | "translated_string" => Refusal::Expansion,
        "brace_expression" | "extglob_pattern" => Refusal::Glob,
        "compound_statement" => Refusal::Group,
        "subshell" => Refusal::Subshell,
        "function_definition" => Refusal::Function,
        "if_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "while_statement"
        | "case_statement" => Refusal::ControlFlow,
        "negated_command" => Refusal::Negation,
        "comment" => Refusal::Comment,
        "test_command" => Refusal::TestCommand,
        "declaration_command" | "unset_command" => Refusal::Declaration,
        "&" => Refusal::Background,
        "|&" => Refusal::PipeStderr,
        _ => Refusal::Other,
    }
}

/// A sequence of statements (the program): separated by `;` or newlines.
fn statements(node: Node<'_>, line: &str, out: &mut Vec<Vec<String>>) -> Result<(), Refusal> {
    for child in children(node) {
        match child.kind() {
            ";" => {}
            _ if child.is_named() => statement(child, line, out)?,
            other => return Err(refusal(other)),
        }
    }
    Ok(())
}

/// One statement: a command, a pipeline, or a list joined by `&&` / `||`.
///
/// Walked with a stack of its own, in the order a recursive walk takes (each part in
/// turn, and a part's own parts before the next), not by recursion: `a && b && ...` is a
/// list inside a list inside a list, and a line of ten thousand `&&` overflowed the
/// thread's stack and took the session down with it
/// (`tests/grammar.rs::a_line_of_ten_thousand_lists_is_judged_not_a_crash`).
fn statement(node: Node<'_>, line: &str, out: &mut Vec<Vec<String>>) -> Result<(), Refusal> {
    /// What is left to judge: a statement, or a part of a pipeline or list, which is
    /// one of its separators or a statement.
    enum Work<'t> {
        Statement(Node<'t>),
        Part(Node<'t>, &'static [&'static str]),
    }
    let mut work = vec![Work::Statement(node)];
    while let Some(next) = work.pop() {
        let node = match next {
            Work::Statement(node) => node,
            Work::Part(child, separators) => {
                match child.kind() {
                    kind if separators.contains(&kind) => {}
                    _ if child.is_named() => work.push(Work::Statement(child)),
                    other => return Err(refusal(other)),
                }
                continue;
            }
        };
        match node.kind() {
            "command" => out.push(command(node, line)?),
            kind @ ("pipeline" | "list") => {
                let separators: &'static [&'static str] = if kind == "pipeline" {
                    &["|"]
                } else {
                    &["&&", "||"]
                };
                let parts = children(node);
                work.extend(parts.into_iter().rev().map(|c| Work::Part(c, separators)));
            }
            "redirected_statement" => {
                // Name what redirects: a heredoc or here-string, or a file redirection.
                let heredoc = children(node)
                    .iter()
                    .any(|c| matches!(c.kind(), "heredoc_redirect" | "herestring_redirect"));
                return Err(if heredoc {
                    Refusal::Heredoc
                } else {
                    Refusal::Redirection
                });
            }
            other => return Err(refusal(other)),
        }
    }
    Ok(())
}

/// A simple command's words: a command name and arguments, each an admitted word.
fn command(node: Node<'_>, line: &str) -> Result<Vec<String>, Refusal> {
    let mut words = Vec::new();
    for child in children(node) {
        match child.kind() {
            "command_name" => {
                let inner = children(child);
                let [name] = inner.as_slice() else {
                    return Err(Refusal::Other);
                };
                words.push(word(*name, line)?);
            }
            _ if child.is_named() => {
                if words.is_empty() {
                    // Something before the command name: an assignment or a redirection.
                    return Err(refusal(child.kind()));
                }
                words.push(word(child, line)?);
            }
            other => return Err(refusal(other)),
        }
    }
    if words.is_empty() {
        return Err(Refusal::Empty);
    }
    Ok(words)
}

/// One word, quotes removed, if it is admitted.
fn word(node: Node<'_>, line: &str) -> Result<String, Refusal> {
    let text = &line[node.byte_range()];
    match node.kind() {
        "word" | "number" => plain_word(text).map(str::to_owned),
        "raw_string" => Ok(text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .ok_or(Refusal::Syntax)?
            .to_owned()),
        "string" => {
            for child in children(node) {
                match child.kind() {
                    "\"" => {}
                    "string_content" => {
                        let content = &line[child.byte_range()];
                        if content.contains(['\\', '$', '`']) {
                            return Err(Refusal::Escape);
                        }
                    }
                    other => return Err(refusal(other)),
                }
            }
            Ok(text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .ok_or(Refusal::Syntax)?
                .to_owned())
        }
        "concatenation" => {
            let mut out = String::new();
            for child in children(node) {
                out.push_str(&word(child, line)?);
            }
            Ok(out)
        }
        other => Err(refusal(other)),
    }
}

/// An unquoted word, if nothing in it expands or escapes.
fn plain_word(text: &str) -> Result<&str, Refusal> {
    // Unicode blanks and lookalikes are read differently by shells and by the grammar:
    // outside quotes, only ASCII is admitted.
    if !text.is_ascii() {
        return Err(Refusal::NonAscii);
    }
    if text.contains('\\') {
        return Err(Refusal::Escape);
    }
    // A tilde expands at a word's start, and after `=` or `:` in words that look like
    // assignments (`--dir=~/x`): refused anywhere unquoted.
    if text.contains(['*', '?', '[', ']', '{', '}', '~']) {
        return Err(Refusal::Glob);
    }
    if text.contains(['$', '`']) {
        return Err(Refusal::Expansion);
    }
    if text.contains(['<', '>', '(', ')', '&', '|', ';', '#', '!', '"', '\'', '\n']) {
        return Err(Refusal::Other);
    }
    Ok(text)
}

/// The names of the commands of a line the grammar refuses, as far as they can be told:
/// the line split at `;`, `&`, `|` and newlines outside quotes, parentheses, braces and
/// backticks, and of each part its first word when that is a plain name (ASCII letters,
/// digits, `_`, `.`, `/`, `-`) ended by a blank, an operator or the line's end. Only to
/// name in a denial what no rule admits: nothing is allowed by it.
pub(crate) fn command_names(line: &str) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut quote, mut depth, mut start) = (None::<u8>, 0usize, 0usize);
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().copied().enumerate() {
        // `>&`, `<&`, `>|` and `&>` redirect: they start no command.
        let redirects = (b == b'&' && matches!(bytes.get(i + 1), Some(b'>')))
            || (i > 0 && matches!(bytes[i - 1], b'>' | b'<'));
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'') | (None, b'"') | (None, b'`') => quote = Some(b),
            (None, b'(') | (None, b'{') => depth += 1,
            (None, b')') | (None, b'}') => depth = depth.saturating_sub(1),
            (None, b';' | b'&' | b'|' | b'\n') if depth == 0 && !redirects => {
                parts.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&line[start..]);
    parts.into_iter().filter_map(|part| {
        let part = part.trim_start_matches([' ', '\t']);
        let end = part
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
            .unwrap_or(part.len());
        let (name, after) = part.split_at(end);
        let ended = after.is_empty() || after.starts_with([' ', '\t']);
        (!name.is_empty() && ended && !name.starts_with('-') && !RESERVED.contains(&name))
            .then_some(name)
    })
}

/// Words the shell reads as syntax, or as declarations, at the start of a command.
const RESERVED: [&str; 24] = [
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "export", "local", "declare", "readonly",
    "typeset", "unset", "unsetenv",
];

/// Lines of plain words and the four operators only, split without the parser. `None` when
/// the line holds anything else: the parser then decides.
pub(crate) fn fast_path(line: &str) -> Option<Vec<Vec<String>>> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"_./:@+,=-".contains(&b);
    let bytes = line.as_bytes();
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b' ' || b == b'\t' {
            i += 1;
        } else if plain(b) {
            let start = i;
            while i < bytes.len() && plain(bytes[i]) {
                i += 1;
            }
            let current = commands.last_mut()?;
            let word = &line[start..i];
            // A command's first word that assigns (`A=1`) or is a reserved word or a
            // declaration the grammar reads as something else: the parser decides.
            if current.is_empty()
                && (RESERVED.contains(&word)
                    || word.starts_with('-')
                    || !word
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b)))
            {
                // An assignment, a reserved word, or a command name with characters the
                // grammar reads specially there (`a@b`): the parser decides.
                return None;
            }
            // `=` leading a word or doubled is read specially by the grammar: it decides.
            if word.starts_with('=') || word.contains("==") {
                return None;
            }
            current.push(word.to_owned());
        } else {
            let op_len = match (b, bytes.get(i + 1)) {
                (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
                (b'|', _) | (b';', _) => 1,
                _ => return None,
            };
            // An operator needs a command before it and one after it.
            if commands.last()?.is_empty() {
                return None;
            }
            if op_len == 1 && b == b'|' && bytes.get(i + 1) == Some(&b'&') {
                return None;
            }
            commands.push(Vec::new());
            i += op_len;
        }
    }
    if commands.iter().any(Vec::is_empty) {
        return None;
    }
    Some(commands)
}

/// A second reading of a line, by the shell's own quoting rules and independent of the
/// grammar: its commands' words, quotes removed, when nothing outside the admitted subset
/// appears (outside quotes: only plain
/// word characters, blanks, newlines and the operators `&&`, `||`, `;`, `|`; inside double
/// quotes: no `$`, backtick or backslash; a command's first word is no assignment).
/// `None` when the line holds anything else. The grammar's reading must equal it: where
/// tree-sitter pairs quotes or splits words otherwise than the shell would, the line is
/// refused.
pub(crate) fn lexical_commands(line: &str) -> Option<Vec<Vec<String>>> {
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut word: Option<String> = None;
    // After `&&`, `||` or `|`, a command must follow (newlines may come first); a line
    // that ends waiting for one is not a command the shell would run.
    let mut awaiting = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Option<String>, commands: &mut Vec<Vec<String>>| {
        if let Some(w) = word.take() {
            if let Some(c) = commands.last_mut() {
                c.push(w);
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => w.push(other),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        other => w.push(other),
                    }
                }
            }
            ' ' | '\t' => end_word(&mut word, &mut commands),
            '\n' | ';' => {
                end_word(&mut word, &mut commands);
                commands.push(Vec::new());
            }
            '&' | '|' => {
                end_word(&mut word, &mut commands);
                match (c, chars.peek()) {
                    ('&', Some('&')) | ('|', Some('|')) => {
                        chars.next();
                    }
                    ('|', _) => {}
                    _ => return None,
                }
                if chars.peek() == Some(&'&') {
                    return None;
                }
                commands.push(Vec::new());
                awaiting = true;
                continue;
            }
            c if c.is_ascii_alphanumeric() || "_./:@+,=-%^".contains(c) => {
                word.get_or_insert_with(String::new).push(c);
            }
            _ => return None,
        }
        if word.is_some() {
            awaiting = false;
        }
    }
    if awaiting && word.is_none() {
        return None;
    }
    end_word(&mut word, &mut commands);
    commands.retain(|c| !c.is_empty());
    for c in &commands {
        if c.first().is_some_and(|w| w.contains('=')) {
            return None;
        }
    }
    (!commands.is_empty()).then_some(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_path_agrees_with_the_parser_on_common_lines() {
        for line in [
            "git status",
            "git status && git diff",
            "git log --oneline | head -5",
            "a; b || c",
            "cargo test -p skills-executor --test attacks",
            "ls -la /tmp/x,y:z@host+1",
        ] {
            let fast = fast_path(line).unwrap_or_else(|| panic!("{line}: not fast"));
            assert_eq!(Ok(fast), parse(line), "{line}");
        }
        for line in [
            "A=1 git",
            "git status;",
            "|| git",
            "git |& cat",
            "git && && x",
            "",
        ] {
            assert_eq!(fast_path(line), None, "{line}");
        }
    }
}
