//! Fuzz target: whenever the frontmatter fast path accepts a text, it builds exactly the
//! tree the full YAML parser builds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        assert!(skills_parser::fast_path_agrees(text), "fast path disagrees on {text:?}");
    }
});
