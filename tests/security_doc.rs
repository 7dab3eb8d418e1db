//! SECURITY.md tells the truth: every test it names as holding a promise exists, in the
//! file it names.

use std::path::Path;

#[test]
fn every_test_named_in_security_md_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("SECURITY.md")).expect("SECURITY.md");
    let mut named = 0;
    for quoted in text.split('`').skip(1).step_by(2) {
        let Some((file, test)) = quoted.split_once("::") else {
            continue;
        };
        if !file.ends_with(".rs") {
            continue;
        }
        let source = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("SECURITY.md names {file}, which cannot be read: {e}"));
        assert!(
            source.contains(&format!("fn {test}(")),
            "SECURITY.md names {file}::{test}, which does not exist"
        );
        named += 1;
    }
    assert!(named >= 30, "only {named} tests named");
}
