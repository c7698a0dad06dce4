//! The prompts sent to LLM providers. They ask for the exact JSON of SPEC Appendix A.6 and
//! carry only privacy-stripped inputs (stripping happened at intake).

use crate::analysis::concepts::{Concept, Level, path_matches};
use crate::analysis::model::{FailedCall, Pattern, SourceFile, StackProfile};
use crate::analysis::questions::RUBRIC_DIMENSIONS;
use crate::llm::LlmRequest;

/// Caps on what goes into one prompt, so a long session fits a model's context.
const MAX_FILE_CHARS: usize = 4_000;
/// Most files one prompt shows; which ones is `session_data::story_order`'s choice.
pub const MAX_FILES: usize = 12;
const MAX_PATTERNS: usize = 60;
/// The longest answer asked for, in tokens: the concepts (a summary and up to 8 concepts) and
/// the questions (one per concept).
pub const CONCEPTS_ANSWER_TOKENS: u32 = 4_000;
pub const QUESTIONS_ANSWER_TOKENS: u32 = 6_000;
/// What each of the two prompts holds at most in practice, in bytes: ~61 KB at any session size
/// (measured in issue 43 at 5 to 3,000 files; `tests/large_session.rs` holds a 1,000-file
/// session's prompts to 64 KiB).
pub const PROMPT_BYTES: u32 = 61 * 1024;

pub const SYSTEM: &str = "You are a senior engineer and teacher. You read code a developer wrote with an AI \
assistant and explain the concepts it uses. You answer with one JSON object only, exactly in the requested shape.";

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… (cut)", &text[..end])
}

/// Longest error text quoted per failed call.
const MAX_ERROR_CHARS: usize = 1_500;

pub fn concepts_request(
    stack: &StackProfile,
    patterns: &[Pattern],
    files: &[SourceFile],
    failures: &[FailedCall],
    prompts: &[String],
    last_message: Option<&str>,
) -> LlmRequest {
    let mut prompt = String::new();
    prompt.push_str("Extract the programming concepts this session's code demonstrates.\n\n");
    prompt.push_str(&format!("Stack: {}\n\n", serde_json::to_string(stack).unwrap_or_default()));
    prompt.push_str("Static patterns found (type: name @ file:line):\n");
    for p in patterns.iter().take(MAX_PATTERNS) {
        prompt.push_str(&format!("- {}: {} @ {}:{}\n", p.pattern_type, p.name, p.file, p.line));
    }
    prompt.push_str("\nThe developer's requests:\n");
    for text in prompts.iter().take(10) {
        prompt.push_str(&format!("- {}\n", clip(text, 500)));
    }
    if let Some(message) = last_message {
        prompt.push_str(&format!("\nThe assistant's final message:\n{}\n", clip(message, 2_000)));
    }
    prompt.push_str("\nThe code written (latest version of each file):\n");
    for file in files.iter().take(MAX_FILES) {
        let marker = if file.fragment { " (only the text of its edits: the whole file was not captured)" } else { "" };
        prompt.push_str(&format!("\n=== {}{marker} ===\n{}\n", file.path, clip(&file.content, MAX_FILE_CHARS)));
    }
    if !failures.is_empty() {
        prompt.push_str(
            "\nErrors the developer met (tool calls that failed; the label before the error is its source_file):\n",
        );
        for failure in failures {
            prompt.push_str(&format!("\n=== {} ===\n{}\n", failure.label(), clip(&failure.error, MAX_ERROR_CHARS)));
        }
    }
    prompt.push_str(
        "\nReturn JSON: {\"summary\":{\"what_was_built\":str,\"developer_intent\":str,\"architecture_decisions\":[str]},\
         \"concepts\":[{\"name\":str,\"category\":str,\"difficulty\":\"junior|mid|senior\",\"source_file\":str,\
         \"snippet\":str,\"why_it_matters\":str,\"confidence\":number}]}\n\
         Rules: 3 to 8 concepts. category is one of async_pattern, error_handling, design_pattern, \
         architecture_pattern, oop_pattern, functional_pattern, concurrency, database_pattern, api_design, testing, \
         security, state_management, type_system, react_pattern. source_file must be one of the file paths above and \
         snippet must be copied verbatim (a few lines) from that file. confidence is between 0 and 1.",
    );
    if !failures.is_empty() {
        prompt.push_str(
            " An error the developer met is worth a concept (what it means, its likely cause, how to fix it: a type \
             error, a failing test, a missing package): for such a concept, source_file is the error's label exactly as \
             written above (starting with \"failed \") and snippet is copied verbatim from its error text.",
        );
    }
    if files.iter().any(|f| f.fragment) {
        prompt.push_str(
            " A file marked as edits only is fragments of a file, not the whole file: do not describe its structure.",
        );
    }
    LlmRequest { system: SYSTEM.to_owned(), prompt, max_tokens: CONCEPTS_ANSWER_TOKENS }
}

/// Most lines of one file shown to the questions prompt, and of all files together: enough
/// for the code around every concept of a session, within a model's comfortable context.
const MAX_QUESTION_FILE_LINES: usize = 300;
const MAX_QUESTION_LINES: usize = 1_200;

/// The files questions are asked on: the ones the concepts cite first, then the rest (failed
/// calls' errors are left out: the concepts quote them already), each line numbered so a
/// model can declare the lines it quotes.
fn numbered_files(concepts: &[(Concept, Level)], files: &[SourceFile]) -> String {
    let cited = |f: &SourceFile| concepts.iter().any(|(c, _)| path_matches(&f.path, &c.source_file));
    let mut ordered: Vec<&SourceFile> = files.iter().filter(|f| !FailedCall::is_label(&f.path)).collect();
    ordered.sort_by_key(|f| !cited(f));
    let mut text = String::new();
    let mut budget = MAX_QUESTION_LINES;
    for file in ordered.into_iter().take(MAX_FILES) {
        let marker = if file.fragment { " (only the text of its edits: the whole file was not captured)" } else { "" };
        text.push_str(&format!("\n=== {}{marker} ===\n", file.path));
        let total = file.content.lines().count();
        let shown = total.min(MAX_QUESTION_FILE_LINES).min(budget);
        for (n, line) in file.content.lines().take(shown).enumerate() {
            text.push_str(&format!("{:>4}| {line}\n", n + 1));
        }
        if shown < total {
            text.push_str(&format!("… (cut after line {shown} of {total})\n"));
        }
        budget -= shown;
        if budget == 0 {
            break;
        }
    }
    text
}

/// The questions prompt: the concepts with their levels, and the session's files (numbered
/// lines), asking for questions on that code with each question's grounding declared (the
/// `grounding` field is an extra of Appendix A.6, which allows extra fields).
pub fn questions_request(concepts: &[(Concept, Level)], files: &[SourceFile]) -> LlmRequest {
    let mut prompt = String::from("Write one quiz question per concept, at the level given for it.\n\nConcepts:\n");
    for (concept, level) in concepts {
        prompt.push_str(&format!(
            "\n- name: {}\n  level: {}\n  category: {}\n  why it matters: {}\n  file: {}\n  snippet:\n{}\n",
            concept.name,
            level.as_str(),
            concept.category,
            concept.why_it_matters,
            concept.source_file,
            clip(&concept.snippet, 1_500)
        ));
    }
    if concepts.iter().any(|(c, _)| FailedCall::is_label(&c.source_file)) {
        prompt.push_str(
            "\nA concept whose file starts with \"failed \" comes from an error the developer met; its snippet is the \
             error output. Ask about that error: what it means, what likely caused it in their code, and how to fix it.\n",
        );
    }
    let code = numbered_files(concepts, files);
    if !code.is_empty() {
        prompt.push_str(
            "\nThe developer's code (latest version of each file; each line starts with its number and \"| \", \
             which are not part of the code):\n",
        );
        prompt.push_str(&code);
    }
    prompt.push_str(&format!(
        "\nReturn JSON: {{\"questions\":[{{\"concept\":str (a name above),\"question_type\":str,\"difficulty\":\"junior|mid|senior\",\
         \"snippet\":str|null,\"question\":str,\"options\":[str]|null,\"correct\":str|null,\"explanation\":str,\
         \"follow_up\":str|null,\"tags\":[str],\"grounding\":{{\"file\":str,\"line_start\":int,\"line_end\":int,\
         \"kind\":\"quote|blank|mutation\",\"mutation\":{{\"line\":int,\"original\":str,\"mutated\":str}}|null}}|null}}]}}\n\
         Types and rules: multiple_choice (exactly 4 distinct options, correct is a letter A-D); true_false (no options, \
         correct \"true\" or \"false\"); fill_in_blank (the snippet or question has exactly one ___ and correct is the \
         missing text); ordering (4-6 steps in options, shuffled, correct is the right order as 1-based positions like \
         \"2,4,1,3\"); code_reading and spot_the_bug (a snippet, correct is a model answer); open_ended (senior only, \
         correct is a model answer, tags include {}). Every question has an explanation; junior questions have a \
         mid-level follow_up question about the code their snippet shows.\n\
         Ask about the developer's own code above, not textbook examples. A snippet is whole lines copied from one file \
         above (without the line numbers), and its grounding names that file and the first and last line it covers: \
         kind \"quote\" for lines copied as they are; for fill_in_blank, kind \"blank\": one token of those lines \
         replaced by ___, and correct is exactly that token; for spot_the_bug, kind \"mutation\": the lines with exactly \
         one line changed to introduce a bug, and mutation gives that line's number, the line as the file has it \
         (original) and as the snippet shows it (mutated; an empty string removes the line). A question without a snippet \
         may quote whole lines in its text between backticks, with a quote grounding; grounding is null only for a \
         question that shows no code.",
        RUBRIC_DIMENSIONS.iter().map(|d| format!("\"rubric:{d}\"")).collect::<Vec<_>>().join(", ")
    ));
    LlmRequest { system: SYSTEM.to_owned(), prompt, max_tokens: QUESTIONS_ANSWER_TOKENS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_and_fragments_reach_the_prompts() {
        let files = [
            SourceFile::new("lib/cart.ts", "export const a = 1;"),
            SourceFile { path: "lib/db.ts".into(), content: "b = 2".into(), fragment: true },
        ];
        let failure = FailedCall {
            tool_name: "Bash".into(),
            subject: "npx tsc --noEmit".into(),
            error: "error TS2322: Type 'string' is not assignable to type 'number'.".into(),
        };
        let request =
            concepts_request(&StackProfile::default(), &[], &files, std::slice::from_ref(&failure), &[], None);
        assert!(request.prompt.contains("=== failed Bash: npx tsc --noEmit ===\nerror TS2322"));
        assert!(request.prompt.contains("source_file is the error's label"));
        assert!(request.prompt.contains("=== lib/db.ts (only the text of its edits"));
        let plain = concepts_request(&StackProfile::default(), &[], &files[..1], &[], &[], None);
        assert!(!plain.prompt.contains("Errors the developer met") && !plain.prompt.contains("edits only"));
        let concept = Concept {
            name: "Reading compiler type errors".into(),
            category: "type_system".into(),
            difficulty: "junior".into(),
            source_file: failure.label(),
            snippet: failure.error.clone(),
            why_it_matters: "x".into(),
            confidence: 0.8,
        };
        let questions = questions_request(&[(concept, Level::Junior)], &files);
        assert!(questions.prompt.contains("comes from an error the developer met"));
    }

    #[test]
    fn the_questions_prompt_numbers_the_files_lines_and_asks_for_each_grounding() {
        let long: String = (1..=400).map(|n| format!("let x{n} = {n};\n")).collect();
        let files = [
            SourceFile::new("src/other.rs", long),
            SourceFile::new("src/cart.rs", "fn total() -> u32 {\n    1\n}\n"),
            FailedCall { tool_name: "Bash".into(), subject: "cargo test".into(), error: "boom".into() }.as_source(),
        ];
        let concept = Concept {
            name: "Functions".into(),
            category: "general".into(),
            difficulty: "mid".into(),
            source_file: "cart.rs".into(),
            snippet: "fn total() -> u32 {".into(),
            why_it_matters: "x".into(),
            confidence: 0.9,
        };
        let prompt = questions_request(&[(concept, Level::Mid)], &files).prompt;
        let cart = prompt.find("=== src/cart.rs ===\n   1| fn total() -> u32 {\n   2|     1\n").expect("numbered");
        assert!(cart < prompt.find("=== src/other.rs ===").expect("other file"), "the cited file comes first");
        assert!(prompt.contains(" 300| let x300 = 300;\n… (cut after line 300 of 400)"));
        assert!(!prompt.contains("=== failed Bash"));
        assert!(prompt.contains("\"grounding\":{\"file\":str,\"line_start\":int"));
        assert!(prompt.contains("kind \"mutation\"") && prompt.contains("correct is exactly that token"));
    }
}
