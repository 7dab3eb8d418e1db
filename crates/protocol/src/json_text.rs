//! JSON strings written by hand, byte for byte as serde_json writes them, for the hot paths
//! that write their text without a tree or serde's escaping a byte at a time
//! (`check_tool`'s answer here, `skillctl list`'s records).

/// Where JSON text is written: a `String`, or a byte buffer.
pub trait JsonOut {
    /// Appends `text`.
    fn put(&mut self, text: &str);
}

impl JsonOut for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

impl JsonOut for Vec<u8> {
    fn put(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
}

/// `text` as a JSON string, quoted, as serde_json writes it.
pub fn json_str<O: JsonOut + ?Sized>(out: &mut O, text: &str) {
    out.put("\"");
    json_str_contents(out, text);
    out.put("\"");
}

/// `text` escaped as serde_json escapes a string's contents: the runs of plain bytes
/// between escapes copied whole, found sixteen or eight bytes at a time (`next_special`).
pub fn json_str_contents<O: JsonOut + ?Sized>(out: &mut O, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(at) = next_special(bytes, start) {
        // `at` holds an ASCII byte: both ends of the run are character boundaries.
        out.put(text.get(start..at).unwrap_or_default());
        start = at + 1;
        // serde_json's escapes: the short ones where JSON has them, `\u00XX` for the
        // other control characters.
        let b = bytes.get(at).copied().unwrap_or_default();
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => {
                let code = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ];
                out.put(std::str::from_utf8(&code).unwrap_or_default());
                continue;
            }
        };
        out.put(short);
    }
    out.put(text.get(start..).unwrap_or_default());
}

/// Whether byte `b` needs an escape in a JSON string.
fn special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The first byte of `bytes` from `from` on that needs an escape: sixteen bytes at a time
/// with SSE2 (which every x86-64 processor has), the rest as [`next_special_in_words`]
/// finds it. A record's description is most of `skillctl list`'s output, and this scan was
/// most of the time spent writing it.
#[cfg(target_arch = "x86_64")]
fn next_special(bytes: &[u8], from: usize) -> Option<usize> {
    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };
    let (control, quote, backslash) = (
        set_splat_i8_m128i(0x1f),
        set_splat_i8_m128i(0x22), // '"'
        set_splat_i8_m128i(0x5c), // '\\'
    );
    let mut at = from;
    let rest = bytes.get(from..).unwrap_or_default();
    for chunk in rest.chunks_exact(16) {
        let x = load_unaligned_m128i(<&[u8; 16]>::try_from(chunk).unwrap_or(&[0; 16]));
        // Below 0x20 where the unsigned minimum with 0x1f is the byte itself.
        let flags = bitor_m128i(
            cmp_eq_mask_i8_m128i(min_u8_m128i(x, control), x),
            bitor_m128i(
                cmp_eq_mask_i8_m128i(x, quote),
                cmp_eq_mask_i8_m128i(x, backslash),
            ),
        );
        let mask = move_mask_i8_m128i(flags);
        if mask != 0 {
            return Some(at + mask.trailing_zeros() as usize);
        }
        at += 16;
    }
    next_special_in_words(bytes, at)
}

/// [`next_special`] where SSE2 is not there: the words scan alone.
#[cfg(not(target_arch = "x86_64"))]
fn next_special(bytes: &[u8], from: usize) -> Option<usize> {
    next_special_in_words(bytes, from)
}

/// The first byte of `bytes` from `from` on that needs an escape, looked for eight bytes at
/// a time: a word's bytes below 0x20, or equal to `"` or `\`, each found by the borrow
/// of a subtraction, whose lowest flag marks exactly the first such byte.
fn next_special_in_words(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_le_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_le_bytes([b'\\'; 8]);
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v;
    let mut at = from;
    let rest = bytes.get(from..).unwrap_or_default();
    let mut words = rest.chunks_exact(8);
    for chunk in words.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        let flags = (below(v, 0x20) | below(v ^ QUOTES, 1) | below(v ^ BACKSLASHES, 1)) & HIGHS;
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| special(b))
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::{json_str, next_special, next_special_in_words};

    /// Every byte a string may hold, alone and in runs longer than a chunk, written as
    /// serde_json writes it.
    #[test]
    fn strings_are_written_as_serde_writes_them() {
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        cases.extend(
            [
                "",
                "plain text longer than sixteen bytes, with nothing to escape",
                "a \"quote\" and a \\ backslash past the first chunk of sixteen",
                "tab\there, line\nthere, \u{1}\u{1f}\u{7f}",
                "non-ASCII: é, 中文, 🎉, \u{2028}\u{2029}",
                "exactly sixteen!",
                "exactly sixteen\"",
                "\u{7f}\u{80}\u{ff}\u{100}: bytes at and above 0x80 are never escaped",
            ]
            .map(String::from),
        );
        // Each case also at every offset within a word, after plain bytes.
        let shifted: Vec<String> = cases
            .iter()
            .flat_map(|c| (1..17).map(move |n| format!("{}{c}{}", "x".repeat(n), "y".repeat(n))))
            .collect();
        for text in cases.iter().chain(&shifted) {
            let mut bytes = Vec::new();
            json_str(&mut bytes, text);
            let mut string = String::new();
            json_str(&mut string, text);
            let serde = serde_json::to_string(text).unwrap();
            assert_eq!(String::from_utf8(bytes).unwrap(), serde, "{text:?}");
            assert_eq!(string, serde, "{text:?}");
        }
    }

    /// Each byte that needs an escape, and its neighbours that do not, at every place of a
    /// text longer than two chunks of sixteen: both scans find the first one where it is.
    #[test]
    fn the_first_special_byte_is_found_wherever_it_is() {
        let specials = [0u8, 0x08, 0x1f, b'"', b'\\'];
        let plain = [0x20u8, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff];
        for len in [0usize, 1, 7, 8, 15, 16, 17, 31, 32, 33, 47] {
            let mut text = vec![b'a'; len];
            assert_eq!(next_special(&text, 0), None, "{len} plain bytes");
            for at in 0..len {
                for b in plain {
                    text[at] = b;
                    assert_eq!(next_special(&text, 0), None, "{b:#x} at {at} of {len}");
                }
                for b in specials {
                    text[at] = b;
                    for from in [0, at / 2, at] {
                        let found = next_special(&text, from);
                        assert_eq!(found, Some(at), "{b:#x} at {at} of {len}, from {from}");
                        assert_eq!(found, next_special_in_words(&text, from));
                    }
                    assert_eq!(next_special(&text, at + 1), None);
                }
                text[at] = b'a';
            }
        }
    }
}
