//! Cards out of VibeLearn (SPEC §7): Anki's text-import format and readable Markdown. Pure:
//! the cards in, the file's text out; `cli::export` reads the database and writes the files.
//!
//! # Anki
//! Anki's "Import File" reads a header of `#key:value` lines, then one note per record, with
//! its CSV rules: a field holding the separator, a double quote or a line break is enclosed
//! in double quotes, and a double quote inside is doubled. `#html:true` makes every field
//! HTML, so text is escaped (`&`, `<`, `>`) and code sits in `<pre><code>`. The guid column
//! lets a re-import update the same notes instead of adding copies: it is derived from the
//! question's id alone ([`guid`]), so it is the same in every export, on every machine.

use sha2::{Digest, Sha256};

/// One card to export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportCard {
    pub id: String,
    pub project: String,
    pub concept: String,
    pub category: String,
    pub question_type: String,
    pub question: String,
    pub snippet: Option<String>,
    pub options: Vec<String>,
    /// The answer in words (the option, the order, the missing text, the model answer).
    pub answer: Option<String>,
    pub explanation: Option<String>,
    /// `file:start-end` of the code the question quotes.
    pub location: Option<String>,
    pub language: Option<String>,
    pub tags: Vec<String>,
}

/// The header lines Anki reads (SPEC §7).
pub const ANKI_HEADER: &str =
    "#separator:tab\n#html:true\n#notetype:Basic\n#guid column:1\n#deck column:2\n#tags column:5\n";

/// A stable Anki guid for a question id: `vl` and 20 hex digits of its SHA-256 (no character
/// that needs quoting; collisions are out of reach for a person's cards).
pub fn guid(question_id: &str) -> String {
    let digest = Sha256::digest(question_id.as_bytes());
    let hex = hex::encode(&digest[..10]);
    format!("vl{hex}")
}

/// The whole import file.
pub fn anki(cards: &[ExportCard], deck: &str) -> String {
    let mut out = String::from(ANKI_HEADER);
    for card in cards {
        let fields = [
            guid(&card.id),
            format!("{deck}::{}", deck_part(&card.project)),
            front(card),
            back(card),
            tags(card).join(" "),
        ];
        let line: Vec<String> = fields.iter().map(|f| quote(f)).collect();
        out.push_str(&line.join("\t"));
        out.push('\n');
    }
    out
}

/// A field as Anki's CSV reader wants it.
pub fn quote(field: &str) -> String {
    if field.contains(['\t', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// `::` separates Anki subdecks; a project name may not smuggle one in.
fn deck_part(project: &str) -> String {
    let p = project.replace("::", ":").trim().to_owned();
    if p.is_empty() { "unknown".to_owned() } else { p }
}

pub fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn prose(text: &str) -> String {
    html_escape(text.trim()).replace('\n', "<br>")
}

fn front(card: &ExportCard) -> String {
    let mut html = prose(&card.question);
    if let Some(code) = card.snippet.as_deref().filter(|c| !c.trim().is_empty()) {
        html.push_str(&format!("<pre><code>{}</code></pre>", html_escape(code)));
    }
    match card.question_type.as_str() {
        "multiple_choice" if !card.options.is_empty() => {
            let items: String = card.options.iter().map(|o| format!("<li>{}</li>", prose(o))).collect();
            html.push_str(&format!("<ol type=\"A\">{items}</ol>"));
        }
        "ordering" if !card.options.is_empty() => {
            let items: String = card.options.iter().map(|o| format!("<li>{}</li>", prose(o))).collect();
            html.push_str(&format!("<p>Put in order:</p><ol>{items}</ol>"));
        }
        _ => {}
    }
    html
}

fn back(card: &ExportCard) -> String {
    let mut parts = Vec::new();
    if let Some(answer) = card.answer.as_deref().filter(|a| !a.trim().is_empty()) {
        parts.push(format!("<b>{}</b>", prose(answer)));
    }
    if let Some(explanation) = card.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
        parts.push(prose(explanation));
    }
    if let Some(location) = &card.location {
        parts.push(format!("<small>{}</small>", html_escape(location)));
    }
    parts.join("<br><br>")
}

/// Anki tags: no spaces inside one.
fn tags(card: &ExportCard) -> Vec<String> {
    let tag = |s: &str| s.split_whitespace().collect::<Vec<_>>().join("_").replace('"', "");
    let mut list: Vec<String> = [Some(card.concept.as_str()), Some(card.category.as_str()), card.language.as_deref()]
        .into_iter()
        .flatten()
        .map(tag)
        .filter(|t| !t.is_empty())
        .collect();
    list.push("vibelearn".to_owned());
    list.extend(card.tags.iter().map(|t| tag(t)).filter(|t| !t.is_empty()));
    let mut seen = std::collections::HashSet::new();
    list.retain(|t| seen.insert(t.to_lowercase()));
    list
}

/// The language of a file, by its extension, for the tags and the Markdown fences.
pub fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "py" => "python",
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "go" => "go",
        "java" => "java",
        "kt" => "kotlin",
        "rb" => "ruby",
        "php" => "php",
        "cs" => "csharp",
        "swift" => "swift",
        "c" | "h" => "c",
        "cpp" | "cc" | "hpp" => "cpp",
        "sql" => "sql",
        "sh" | "bash" => "bash",
        _ => return None,
    })
}

/// One project's Markdown: concepts in order, each question with its code, options, answer,
/// explanation and source location.
pub fn markdown(project: &str, cards: &[ExportCard]) -> String {
    let mut out = format!("# {project} — VibeLearn cards\n\n{} questions.\n", cards.len());
    let mut concept = None;
    for card in cards {
        if concept != Some(&card.concept) {
            out.push_str(&format!("\n## {} ({})\n", card.concept, card.category));
            concept = Some(&card.concept);
        }
        out.push_str(&format!("\n### {}\n\n", card.question.lines().next().unwrap_or("").trim()));
        let rest: Vec<&str> = card.question.lines().skip(1).collect();
        if !rest.is_empty() {
            out.push_str(&format!("{}\n\n", rest.join("\n").trim()));
        }
        if let Some(code) = card.snippet.as_deref().filter(|c| !c.trim().is_empty()) {
            let fence = "`".repeat(longest_backtick_run(code).max(2) + 1);
            out.push_str(&format!(
                "{fence}{}\n{}\n{fence}\n\n",
                card.language.as_deref().unwrap_or(""),
                code.trim_end()
            ));
        }
        for (i, option) in card.options.iter().enumerate() {
            let mark = if card.question_type == "ordering" { format!("{}.", i + 1) } else { format!("{})", letter(i)) };
            out.push_str(&format!("- {mark} {option}\n"));
        }
        if !card.options.is_empty() {
            out.push('\n');
        }
        if let Some(answer) = &card.answer {
            out.push_str(&format!("**Answer:** {}\n\n", answer.trim()));
        }
        if let Some(explanation) = card.explanation.as_deref().filter(|e| !e.trim().is_empty()) {
            out.push_str(&format!("{}\n\n", explanation.trim()));
        }
        if let Some(location) = &card.location {
            out.push_str(&format!("*{location}*\n"));
        }
    }
    out
}

fn letter(i: usize) -> char {
    char::from(b'A' + (i % 26) as u8)
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A file name for a project: letters, digits, `-`, `_` and `.` kept, the rest `_`.
pub fn file_name(project: &str) -> String {
    let name: String =
        project.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    let name = name.trim_matches('.').to_owned();
    if name.is_empty() { "unknown".to_owned() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_anki_needs_it() {
        assert_eq!(quote("plain text"), "plain text");
        assert_eq!(quote("a\tb"), "\"a\tb\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn guids_are_stable_and_need_no_quoting() {
        assert_eq!(guid("q-1"), guid("q-1"));
        assert_ne!(guid("q-1"), guid("q-2"));
        assert_eq!(guid("q-1").len(), 22);
        assert_eq!(quote(&guid("q\t\"1")), guid("q\t\"1"));
    }

    #[test]
    fn markdown_fences_outlast_backticks_in_the_code() {
        let card = ExportCard {
            id: "q".into(),
            project: "p".into(),
            concept: "Fences".into(),
            category: "docs".into(),
            question_type: "code_reading".into(),
            question: "What prints?".into(),
            snippet: Some("let s = ```x```;".into()),
            options: vec![],
            answer: Some("x".into()),
            explanation: None,
            location: Some("a.rs:1-1".into()),
            language: language_of("a.rs").map(str::to_owned),
            tags: vec![],
        };
        let md = markdown("p", &[card]);
        assert!(md.contains("````rust\nlet s = ```x```;\n````"), "{md}");
        assert_eq!(file_name("my app/../x"), "my_app_.._x");
    }
}
