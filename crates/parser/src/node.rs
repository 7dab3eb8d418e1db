//! The tree a frontmatter's YAML becomes: positioned nodes whose scalars keep their source
//! text, style and tag, and the YAML 1.2 core schema that types them. Both parsers build it
//! (the fast path and the full one); the fields are read from it.

use std::borrow::Cow;

/// A node of the tree, with its 1-based line and column in the YAML text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) line: u32,
    pub(crate) col: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind<'a> {
    Scalar(Scalar<'a>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) plain: bool,
    /// The core-schema type a tag asks for (`!!str` gives `Some(Str)`), if any.
    pub(crate) tagged: Option<ScalarType>,
}

/// What a scalar is under the YAML 1.2 core schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarType {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

impl ScalarType {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ScalarType::Null => "null",
            ScalarType::Bool => "a boolean",
            ScalarType::Int => "an integer",
            ScalarType::Float => "a number",
            ScalarType::Str => "a string",
        }
    }
}

impl Scalar<'_> {
    /// The scalar's type: quoted and block scalars are strings, a tag decides for itself,
    /// and a plain scalar is resolved by the core schema.
    pub(crate) fn resolve(&self) -> ScalarType {
        if let Some(t) = self.tagged {
            return t;
        }
        if !self.plain {
            return ScalarType::Str;
        }
        resolve_plain(&self.text)
    }
}

fn resolve_plain(text: &str) -> ScalarType {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return ScalarType::Bool,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return ScalarType::Float,
        _ => {}
    }
    let b = text.as_bytes();
    // Every number of the core schema starts with a digit, a sign or a dot (`.inf` and
    // `.nan` are matched above): most text is known to be a string at its first byte.
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.'))
    {
        return ScalarType::Str;
    }
    let digits =
        |s: &[u8], radix: u32| !s.is_empty() && s.iter().all(|c| (*c as char).is_digit(radix));
    if let Some(rest) = text.strip_prefix("0o") {
        if digits(rest.as_bytes(), 8) {
            return ScalarType::Int;
        }
    }
    if let Some(rest) = text.strip_prefix("0x") {
        if digits(rest.as_bytes(), 16) {
            return ScalarType::Int;
        }
    }
    let unsigned = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    if digits(unsigned, 10) {
        return ScalarType::Int;
    }
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let (mantissa, exponent) = match unsigned.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.iter().position(|c| *c == b'.') {
        Some(dot) => {
            let (int, frac) = (&mantissa[..dot], &mantissa[dot + 1..]);
            (int.is_empty() && digits(frac, 10))
                || (digits(int, 10) && (frac.is_empty() || digits(frac, 10)))
        }
        None => false,
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = match e.first() {
                Some(b'-' | b'+') => &e[1..],
                _ => e,
            };
            digits(e, 10)
        }
    };
    // An exponent without a dot (`1e5`) is a float in the 1.2 core schema too.
    let int_with_exponent = exponent.is_some() && digits(mantissa, 10);
    if (mantissa_ok || int_with_exponent) && exponent_ok {
        return ScalarType::Float;
    }
    ScalarType::Str
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_plain_scalars_by_the_core_schema() {
        for (text, t) in [
            ("", ScalarType::Null),
            ("~", ScalarType::Null),
            ("true", ScalarType::Bool),
            ("no", ScalarType::Str),
            ("yes", ScalarType::Str),
            ("123", ScalarType::Int),
            ("-7", ScalarType::Int),
            ("0x1F", ScalarType::Int),
            ("0o17", ScalarType::Int),
            ("1.0", ScalarType::Float),
            ("1.10", ScalarType::Float),
            (".5", ScalarType::Float),
            ("1e5", ScalarType::Float),
            ("-.inf", ScalarType::Float),
            ("1.2.3", ScalarType::Str),
            ("v1", ScalarType::Str),
            ("1.", ScalarType::Float),
            (".", ScalarType::Str),
            ("-", ScalarType::Str),
            ("e5", ScalarType::Str),
            ("x1F", ScalarType::Str),
            ("inf", ScalarType::Str),
        ] {
            assert_eq!(resolve_plain(text), t, "{text:?}");
        }
    }
}
