//! Support for the fuzz targets and property tests of enforcement (not part of the API):
//! the grammar's two readings of a Bash line, and an oracle written independently of both
//! that says whether a line could be allowed at all.

/// The fast path's reading of a line (`None` when it declines).
pub fn bash_fast_path(line: &str) -> Option<Vec<Vec<String>>> {
    crate::shell::fast_path(line)
}

/// The parser's reading of a line, or the construct it refuses.
pub fn bash_parse(line: &str) -> Result<Vec<Vec<String>>, String> {
    crate::shell::parse(line).map_err(|r| r.to_string())
}

/// An independent lexical reading of an admitted line: its commands' words, quotes
/// removed, when nothing outside the admitted subset appears (outside quotes: only plain
/// word characters, blanks, newlines and the operators `&&`, `||`, `;`, `|`; inside double
/// quotes: no `$`, backtick or backslash; a command's first word is no assignment).
/// `None` when the line holds anything else: an allowed line must never be `None`.
pub fn admitted_commands(line: &str) -> Option<Vec<Vec<String>>> {
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut word: Option<String> = None;
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
            }
            c if c.is_ascii_alphanumeric() || "_./:@+,=-%^".contains(c) => {
                word.get_or_insert_with(String::new).push(c);
            }
            _ => return None,
        }
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
