//! How long a message may be: the one rule for cutting text, which the core's reasons and
//! audit events and the wire's answers all use.

/// The longest error message an answer carries (and any one field of an audit event): a
/// message that echoes a model's input (a name of a megabyte, escaped) is cut to it.
pub const MESSAGE_MAX: usize = 4096;

/// `text` whole when it is at most `max` bytes, else its first `max` bytes (on a
/// character boundary) and `...`.
///
/// ```
/// use skills_model::cut_text;
/// assert_eq!(cut_text("short", 8), "short");
/// assert_eq!(cut_text("\u{e9}t\u{e9}", 2), "\u{e9}...");
/// ```
pub fn cut_text(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let end = (0..=max)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}...", &text[..end]).into()
}
