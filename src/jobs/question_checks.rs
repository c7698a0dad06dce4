//! What the quiz job keeps of a provider's questions (SPEC §6.4, issue 16): each question
//! normalised, validated structurally, verified against the session's files
//! (`analysis::grounding_check`), its checked grounding attached, and held to the precision
//! rules (`analysis::precision`: whole units, steps that run, the session's language,
//! premises that hold, the concept's syntax in the snippet); the rest dropped with the reason
//! and counted per rule (`refused`: issue 40 §5), a second spot-the-bug with one edit too. For an LLM, `RepairJudge` turns the first answer's failures into one
//! repair round-trip (`llm_call::ask_with_repair`) and keeps the better of the two answers.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::analysis::concepts::normalize_name;
use crate::analysis::grounding_check::{CannedCode, verify_grounding};
use crate::analysis::model::SourceFile;
use crate::analysis::questions::{GeneratedQuestion, normalize_question, parse_questions_json, validate_question};

/// A concept questions may be about: its row id and name.
pub struct QuestionTarget<'a> {
    pub id: &'a str,
    pub name: &'a str,
}

/// The questions kept (with their concept's row id) and why the others were dropped.
#[derive(Debug, Default)]
pub struct Checked {
    pub kept: Vec<(String, GeneratedQuestion)>,
    /// "concept: reason" per dropped question.
    pub dropped: Vec<String>,
    /// How many of `dropped` failed the grounding check (structure was fine).
    pub grounding_failures: usize,
    /// Per rule, how many questions it refused (issue 40 §5): a question is counted under
    /// the first check it fails (structure, grounding, precision, a repeat), and under each
    /// precision rule it breaks.
    pub refused: BTreeMap<&'static str, usize>,
}

/// The names of the checks before and after precision, in the job result's `refused`.
pub const REFUSED_STRUCTURE: &str = "structure";
pub const REFUSED_GROUNDING: &str = "grounding";
pub const REFUSED_SAME_PLACE: &str = "a second question of its type on the same lines";
pub const REFUSED_SAME_MUTATION: &str = "a second spot-the-bug with the same mutation";

impl Checked {
    fn refuse(&mut self, rule: &'static str, why: String) {
        self.dropped.push(why);
        *self.refused.entry(rule).or_default() += 1;
    }
}

/// Normalises, validates and grounds each question against `files`.
pub fn keep_valid(
    questions: Vec<GeneratedQuestion>,
    targets: &[QuestionTarget<'_>],
    files: &[SourceFile],
    canned: CannedCode,
) -> Checked {
    let names: Vec<String> = targets.iter().map(|t| t.name.to_string()).collect();
    let mut checked = Checked::default();
    // Two questions of one type on the same lines are one question asked twice (issue 25):
    // the first is kept.
    let mut placed: std::collections::BTreeSet<(String, String, u32, u32)> = Default::default();
    // Two spot-the-bug questions with one edit are one question asked twice (issue 40 §4).
    let mut mutations: std::collections::BTreeSet<(String, String)> = Default::default();
    for mut question in questions {
        normalize_question(&mut question);
        if let Err(e) = validate_question(&question, &names) {
            checked.refuse(REFUSED_STRUCTURE, format!("{}: {e}", question.concept));
            continue;
        }
        match verify_grounding(&question, files, canned) {
            Ok(grounding) => question.grounding = grounding,
            Err(e) => {
                checked.refuse(REFUSED_GROUNDING, format!("{}: grounding: {e}", question.concept));
                checked.grounding_failures += 1;
                continue;
            }
        }
        let problems = crate::analysis::precision::precision_findings(&question, files);
        if !problems.is_empty() {
            let rules: std::collections::BTreeSet<_> = problems.iter().map(|(rule, _)| *rule).collect();
            for rule in rules {
                *checked.refused.entry(rule.as_str()).or_default() += 1;
            }
            let reasons: Vec<&str> = problems.iter().map(|(_, why)| why.as_str()).collect();
            checked.dropped.push(format!("{}: precision: {}", question.concept, reasons.join("; ")));
            continue;
        }
        if let Some(g) = &question.grounding
            && !placed.insert((question.question_type.clone(), g.file.clone(), g.line_start, g.line_end))
        {
            let why = format!(
                "{}: a second {} question on {}:{}-{}",
                question.concept, question.question_type, g.file, g.line_start, g.line_end
            );
            checked.refuse(REFUSED_SAME_PLACE, why);
            continue;
        }
        if let Some(edit) = crate::analysis::lint::mutation_edit(&question)
            && !mutations.insert(edit.clone())
        {
            let why = format!("{}: a second spot-the-bug turning `{}` into `{}`", question.concept, edit.0, edit.1);
            checked.refuse(REFUSED_SAME_MUTATION, why);
            continue;
        }
        let wanted = normalize_name(&question.concept);
        if let Some(target) = targets.iter().find(|t| normalize_name(t.name) == wanted) {
            checked.kept.push((target.id.to_string(), question));
        }
    }
    checked
}

impl Checked {
    /// The job result's figures: counts, drop reasons, and the share of grounded questions.
    pub fn result(&self, provider: &str, repair: Option<&RepairJudge>) -> Value {
        let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
        for grounding in self.kept.iter().filter_map(|(_, q)| q.grounding.as_ref()) {
            *by_kind.entry(grounding.kind.as_str()).or_default() += 1;
        }
        let mut result = json!({
            "provider": provider,
            "questions": self.kept.len(),
            "dropped": self.dropped.len(),
            "drop_reasons": self.dropped,
            "grounding_failures": self.grounding_failures,
            "refused": self.refused,
            "grounded": by_kind.values().sum::<usize>(),
            "grounded_by_kind": by_kind,
        });
        if let Some(judge) = repair {
            result["rejected_before_repair"] = json!(judge.rejected_before_repair());
            result["refused_before_repair"] = json!(*judge.first_refused.borrow());
        }
        result
    }
}

/// Judges an LLM's questions answers for `llm_call::ask_with_repair`: the first answer is
/// accepted only when every question passes, otherwise its failures become the repair
/// prompt; of the repaired answer the valid questions are kept — or the first answer's, if
/// it kept more — and the rest dropped. Only an answer with nothing valid is refused.
pub struct RepairJudge<'a> {
    targets: &'a [QuestionTarget<'a>],
    files: &'a [SourceFile],
    answers_seen: Cell<u32>,
    first: RefCell<Option<Checked>>,
    rejected_first: Cell<usize>,
    /// The first answer's `refused`, per rule: what the repair was asked to fix.
    first_refused: RefCell<BTreeMap<&'static str, usize>>,
}

impl<'a> RepairJudge<'a> {
    pub fn new(targets: &'a [QuestionTarget<'a>], files: &'a [SourceFile]) -> RepairJudge<'a> {
        RepairJudge {
            targets,
            files,
            answers_seen: Cell::new(0),
            first: RefCell::new(None),
            rejected_first: Cell::new(0),
            first_refused: RefCell::new(BTreeMap::new()),
        }
    }

    /// Questions of the first answer that failed and were sent back for repair.
    pub fn rejected_before_repair(&self) -> usize {
        self.rejected_first.get()
    }

    /// One answer's verdict: `Ok` to accept it, `Err` with the reasons a model can act on.
    pub fn judge(&self, text: &str) -> Result<Checked, String> {
        let nth = self.answers_seen.get() + 1;
        self.answers_seen.set(nth);
        let answer = parse_questions_json(text).map_err(|e| e.to_string())?;
        let checked = keep_valid(answer.questions, self.targets, self.files, CannedCode::Refused);
        if nth == 1 {
            if checked.dropped.is_empty() && !checked.kept.is_empty() {
                return Ok(checked);
            }
            let reason = failures(&checked);
            self.rejected_first.set(checked.dropped.len());
            *self.first_refused.borrow_mut() = checked.refused.clone();
            *self.first.borrow_mut() = Some(checked);
            return Err(reason);
        }
        let first = self.first.borrow_mut().take().unwrap_or_default();
        if checked.kept.is_empty() && first.kept.is_empty() {
            return Err(failures(&checked));
        }
        Ok(if checked.kept.len() >= first.kept.len() { checked } else { first })
    }
}

fn failures(checked: &Checked) -> String {
    if checked.kept.is_empty() {
        format!("no question was valid: {}", checked.dropped.join("; "))
    } else {
        format!("these questions failed (fix them, keep the others as they are): {}", checked.dropped.join("; "))
    }
}

#[cfg(test)]
mod tests;
