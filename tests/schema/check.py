"""Checks schema/skill-frontmatter.schema.json against the conformance suite with an
off-the-shelf JSON Schema validator (the Python `jsonschema` package), as a CI job of a
skill repository would: every valid case must pass, and every invalid case whose rule a
schema can express must fail. Run by `cargo xtask schema-check`.

Usage: check.py SCHEMA CONFORMANCE_DIR
"""
import csv
import json
import sys
from pathlib import Path

import jsonschema
import yaml

# Rules a JSON Schema of the frontmatter can express (the others need the folder, the file
# or a YAML parse that succeeded: name.matchesDirectory, frontmatter.*, file.*, lints).
EXPRESSIBLE = {
    "name.required", "name.type", "name.maxLength", "name.format",
    "description.required", "description.type", "description.maxLength",
    "compatibility.type", "compatibility.minLength", "compatibility.maxLength",
    "license.type", "metadata.type", "metadata.valueType", "allowed-tools.type",
    "frontmatter.notMapping",
}


def frontmatter(skill_md):
    text = skill_md.read_text(encoding="utf-8").lstrip("\ufeff")
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r") == "---":
            return "\n".join(lines[1:i])
    return None


def main():
    schema = json.loads(Path(sys.argv[1]).read_text())
    root = Path(sys.argv[2])
    validator = jsonschema.Draft202012Validator(schema)
    valid_total = valid_pass = 0
    invalid_expressible = invalid_caught = 0
    not_expressible = {}
    failures = []
    with open(root / "expected.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            skill_md = root / row["skill_dir"] / "SKILL.md"
            if not skill_md.is_file():
                continue
            try:
                fm = frontmatter(skill_md)
                data = yaml.safe_load(fm) if fm is not None else None
                parsed = fm is not None
            except (yaml.YAMLError, UnicodeDecodeError):
                data, parsed = None, False
            errors = list(validator.iter_errors(data)) if parsed else None
            if row["expected"] == "valid":
                valid_total += 1
                if errors == []:
                    valid_pass += 1
                else:
                    failures.append(f"valid case {row['case']} fails the schema: {errors}")
            elif row["rule"] in EXPRESSIBLE and parsed:
                invalid_expressible += 1
                if errors:
                    invalid_caught += 1
                else:
                    failures.append(f"invalid case {row['case']} ({row['rule']}) passes the schema")
            else:
                not_expressible[row["rule"]] = not_expressible.get(row["rule"], 0) + 1
    print(f"schema-check: valid cases passing: {valid_pass}/{valid_total}")
    print(f"schema-check: invalid cases the schema can express, failing it: {invalid_caught}/{invalid_expressible}")
    print("schema-check: rules a schema cannot express (cases): "
          + ", ".join(f"{r}={n}" for r, n in sorted(not_expressible.items())))
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
