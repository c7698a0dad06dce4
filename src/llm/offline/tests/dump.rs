//! A dump of every question a learner would be shown, for grading by hand (issue 40's graded
//! sample): the same sessions and the same quiz path as the lint (`super::lint::{load, quiz}`),
//! written as markdown to the file named by `QUESTION_DUMP`. Ignored by default; run with
//! `QUESTION_DUMP=/tmp/questions.md cargo test --lib llm::offline::tests::dump -- --ignored`.
//! The questions of the hand-graded sample (`docs/QUESTIONS.md`, by [`sampled`]'s fixed rule)
//! are marked `[sample]` and listed first, so a later round grades the same positions.

use std::fmt::Write as _;

use super::lint::{DIRS, Recorded, load, quiz, session_names};
use crate::analysis::lint::LintSession;
use crate::analysis::questions::GeneratedQuestion;

/// The hand-graded sample's rule (round 3, `docs/QUESTIONS.md`): every question of the corpus
/// sessions; in the recorded sessions, taken in name order, every question of the first
/// [`RECORDED_SESSIONS_SAMPLED`], the sessions that bring the sample to at least 50 on def6d4f
/// (35 corpus + 3 + 8 + 4). Round 2 took the fifth question of every third recorded session
/// and of the last; round 1 every third corpus question. `position` is the session's 0-based
/// place in its directory (in name order).
fn sampled(dir: &str, position: usize) -> bool {
    dir.ends_with("corpus") || position < RECORDED_SESSIONS_SAMPLED
}

/// How many recorded sessions, in name order, the sample takes whole (round 3).
const RECORDED_SESSIONS_SAMPLED: usize = 3;

/// One question as markdown: its number in the session, what it is about, the code with its
/// file and lines, and everything the learner sees or is graded against.
fn render(out: &mut String, s: &Recorded, lang: &str, (index, sample): (usize, bool), q: &GeneratedQuestion) {
    let mark = if sample { " [sample]" } else { "" };
    let _ = writeln!(out, "#### {} #{index} — {lang} — {} — {}{mark}\n", s.name, q.question_type, q.concept);
    let _ = writeln!(out, "- difficulty: {}", q.difficulty);
    match &q.grounding {
        Some(g) => {
            let _ =
                writeln!(out, "- grounding: {} lines {}–{} ({})", g.file, g.line_start, g.line_end, g.kind.as_str());
            if let Some(m) = &g.mutation {
                let _ =
                    writeln!(out, "- mutation at line {}: `{}` → `{}`", m.line, m.original.trim(), m.mutated.trim());
            }
        }
        None => {
            let _ = writeln!(out, "- grounding: none");
        }
    }
    if let Some(snippet) = q.snippet.as_deref().filter(|t| !t.trim().is_empty()) {
        let _ = writeln!(out, "\n```\n{}\n```", snippet.trim_end());
    }
    let _ = writeln!(out, "\n**Prompt:** {}\n", q.question);
    for (i, o) in q.options.iter().flatten().enumerate() {
        let _ = writeln!(out, "{}. {o}", i + 1);
    }
    let _ = writeln!(out, "\n**Keyed answer:** {}\n", q.correct.as_deref().unwrap_or("(none: free answer)"));
    let _ = writeln!(out, "**Explanation / rubric:** {}\n", q.explanation);
    if let Some(f) = &q.follow_up {
        let _ = writeln!(out, "**Follow-up:** {f}\n");
    }
}

#[test]
#[ignore = "writes the questions to $QUESTION_DUMP for grading by hand"]
fn dump_every_question_a_learner_would_be_shown() {
    let Ok(path) = std::env::var("QUESTION_DUMP") else { panic!("set QUESTION_DUMP to the markdown file to write") };
    let (mut body, mut sample) = (String::new(), Vec::new());
    let mut total = 0;
    for dir in DIRS {
        let _ = writeln!(body, "## {dir}\n");
        for (position, name) in session_names(dir).into_iter().enumerate() {
            let s = load(dir, &name);
            let questions = quiz(&s);
            let session = LintSession { files: &s.files, failures: &s.failures, fix: s.fix.as_ref() };
            let lang = session.language().map_or("other", |l| l.as_str());
            let _ = writeln!(body, "### {name} ({lang}, {} questions)\n", questions.len());
            for (i, q) in questions.iter().enumerate() {
                let in_sample = sampled(dir, position);
                if in_sample {
                    sample.push(format!("{name} #{} ({lang}, {}, {})", i + 1, q.question_type, q.concept));
                }
                render(&mut body, &s, lang, (i + 1, in_sample), q);
            }
            total += questions.len();
        }
    }
    let mut out = String::from("# Every question a learner would be shown (offline, first level)\n\n");
    let _ = writeln!(out, "{total} questions; the {} of the hand-graded sample:\n", sample.len());
    for s in &sample {
        let _ = writeln!(out, "- {s}");
    }
    out.push('\n');
    out.push_str(&body);
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{path}: {e}"));
    println!("{total} questions ({} in the sample) written to {path}", sample.len());
}
