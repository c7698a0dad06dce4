//! Getting the JSON object out of a model's answer. Models are asked for bare JSON but often
//! wrap it in a Markdown fence or put a sentence before or after it (Appendix A.6 accepts
//! that); both the concepts and the questions answers go through `parse_json_answer`, the one
//! copy of this leniency.
//!
//! Approach: every `{` is a possible start of the answer; from each, a string-aware brace
//! scanner finds the matching `}`, and the first balanced slice that deserialises into the
//! wanted type wins. Fences need no special case (the fence text contains no braces), prose
//! with stray braces is skipped, and an answer wrapped one level deep (`{"result": {...}}`)
//! is still found. The alternative, stripping a fence and parsing the rest, fails on prose
//! around the fence and on fences inside snippets.

use serde::de::DeserializeOwned;
use std::fmt;

/// Starts tried at most: bounds the quadratic worst case on a long answer full of braces.
const MAX_CANDIDATES: usize = 256;

/// Why an answer could not be read; the message is short enough for a job's `last_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Nothing but whitespace.
    Empty,
    /// No `{` at all.
    NoObject,
    /// A `{` whose object never closes: the answer was cut off (e.g. a max-tokens stop).
    Truncated,
    /// Balanced braces, but not valid JSON (the serde message says where).
    Malformed(String),
    /// Valid JSON, but not the expected shape (e.g. a missing field).
    Shape(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "the answer is empty"),
            ParseError::NoObject => write!(f, "the answer contains no JSON object"),
            ParseError::Truncated => {
                write!(f, "the JSON object in the answer is cut off (unbalanced braces)")
            }
            ParseError::Malformed(m) => write!(f, "the answer's JSON is malformed: {m}"),
            ParseError::Shape(m) => write!(f, "the answer's JSON has the wrong shape: {m}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses the first JSON object in `text` that has the shape `T`.
///
/// When none fits, the error describes the outermost candidate, the one starting at the
/// first `{`: `Truncated` if it never closes (even when objects nested in it are complete),
/// else its shape error if it is valid JSON, else its syntax error.
pub fn parse_json_answer<T: DeserializeOwned>(text: &str) -> Result<T, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let mut outermost = None;
    let starts = text.char_indices().filter(|&(_, c)| c == '{').map(|(i, _)| i);
    for (n, start) in starts.take(MAX_CANDIDATES).enumerate() {
        let end = matching_brace(text, start);
        let attempt = end.map(|end| serde_json::from_str::<T>(&text[start..=end]));
        let error = match attempt {
            Some(Ok(value)) => return Ok(value),
            Some(Err(e)) if e.is_data() => ParseError::Shape(e.to_string()),
            Some(Err(e)) => ParseError::Malformed(e.to_string()),
            None => ParseError::Truncated,
        };
        if n == 0 {
            outermost = Some(error);
        }
    }
    Err(outermost.unwrap_or(ParseError::NoObject))
}

/// Byte index of the `}` closing the `{` at `start`, ignoring braces inside JSON strings.
fn matching_brace(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Answer {
        items: Vec<String>,
    }

    #[test]
    fn bare_object() {
        let a: Answer = parse_json_answer(r#"{"items":["a"]}"#).unwrap();
        assert_eq!(a.items, ["a"]);
    }

    #[test]
    fn fenced_object_with_prose_around() {
        let text = "Here you go:\n```json\n{\"items\": [\"a\", \"b\"]}\n```\nHope it helps!";
        let a: Answer = parse_json_answer(text).unwrap();
        assert_eq!(a.items, ["a", "b"]);
    }

    #[test]
    fn braces_inside_strings_and_stray_prose_braces() {
        let text = "Format {like this: {\"items\": [\"fn x() { }\", \"}\"]}";
        let a: Answer = parse_json_answer(text).unwrap();
        assert_eq!(a.items, ["fn x() { }", "}"]);
    }

    #[test]
    fn answer_nested_one_level_deep_is_found() {
        let a: Answer = parse_json_answer(r#"{"result": {"items": []}}"#).unwrap();
        assert!(a.items.is_empty());
    }

    #[test]
    fn errors_are_typed() {
        assert_eq!(parse_json_answer::<Answer>("  \n"), Err(ParseError::Empty));
        assert_eq!(parse_json_answer::<Answer>("no json here"), Err(ParseError::NoObject));
        assert_eq!(parse_json_answer::<Answer>("```json\n{\"items\": [\"a\", \"b"), Err(ParseError::Truncated));
        assert!(matches!(parse_json_answer::<Answer>(r#"{"items": ["a",]}"#), Err(ParseError::Malformed(_))));
        assert!(matches!(
            parse_json_answer::<Answer>(r#"{"things": []}"#),
            Err(ParseError::Shape(m)) if m.contains("items")
        ));
    }

    #[test]
    fn messages_are_short() {
        let e = parse_json_answer::<Answer>("{\"items\": [").unwrap_err();
        assert!(e.to_string().len() < 100, "{e}");
    }
}
