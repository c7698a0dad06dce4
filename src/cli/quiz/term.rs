//! The quiz's terminal side: ANSI styling (only when stdout is a terminal) and reading one
//! answer per line from any `BufRead`, so a pipe works exactly like a keyboard.

use std::io::{self, BufRead};

/// ANSI styles, or plain text when `color` is off (stdout is a pipe or a file).
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }
    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
}

/// Reads one line without its line ending; `None` at end of input. A line that is not UTF-8
/// (a stray byte from a pipe) is read lossily rather than ending the quiz.
pub fn read_line(input: &mut dyn BufRead) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    if input.read_until(b'\n', &mut buf)? == 0 {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&buf);
    Ok(Some(text.trim_end_matches(['\n', '\r']).to_owned()))
}

/// A self-grade: one number 0–5 (a trailing `/5` is allowed).
pub fn parse_grade(text: &str) -> Option<u8> {
    let t = text.trim();
    let t = t.strip_suffix("/5").unwrap_or(t).trim();
    t.parse::<u8>().ok().filter(|g| *g <= 5)
}

/// `1 day`, `6 days`.
pub fn days(n: u32) -> String {
    if n == 1 { "1 day".to_owned() } else { format!("{n} days") }
}

/// The letter of option `i` (0 = A).
pub fn letter(i: usize) -> char {
    char::from(b'A' + (i % 26) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_lose_their_endings_and_eof_is_none() {
        let mut input: &[u8] = b"b\r\n  two words \nlast";
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("b"));
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("  two words "));
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("last"));
        assert_eq!(read_line(&mut input).unwrap(), None);
    }

    #[test]
    fn grades_are_0_to_5() {
        assert_eq!(parse_grade(" 4 "), Some(4));
        assert_eq!(parse_grade("5/5"), Some(5));
        assert_eq!(parse_grade("0"), Some(0));
        for bad in ["6", "-1", "four", "", "3.5"] {
            assert_eq!(parse_grade(bad), None, "{bad}");
        }
    }

    #[test]
    fn plain_style_adds_no_escapes() {
        let plain = Style { color: false };
        assert_eq!(plain.bold("x"), "x");
        assert_eq!(Style { color: true }.green("ok"), "\x1b[32mok\x1b[0m");
    }
}
