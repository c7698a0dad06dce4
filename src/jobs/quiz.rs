//! The `analyze_quiz` job (SPEC §6.4): questions on each concept of the session not yet
//! mastered, at the developer's current level for it, from the LLM provider (one per concept,
//! one repair round-trip) or offline from the session's own files (two per concept, README). Every question is validated before it is stored;
//! invalid ones are dropped and counted. Questions are upserted by (concept, type, text hash).

use rusqlite::{Connection, params};
use serde_json::json;

use super::concepts::ProviderChoice;
use super::question_checks::{QuestionTarget, RepairJudge, keep_valid};
use super::session_data::{self, hash_of};
use super::{llm_call, prompts};
use super::{missing_session, session_id_of};
use crate::analysis::concepts::{Concept, Level};
use crate::analysis::grounding::{Grounding, GroundingKind};
use crate::analysis::grounding_check::{CannedCode, verify_grounding};
use crate::analysis::model::SourceFile;
use crate::analysis::questions::{GeneratedQuestion, normalized_text_hash};
use crate::llm::Selected;
use crate::llm::offline::{offline_questions, reteach_question};
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};

/// A concept whose mastery is above this gets no new question (SPEC §6.4).
pub const MASTERED: f64 = 0.85;

pub struct QuizHandler {
    pub queue: Queue,
    pub provider: ProviderChoice,
    /// The time one LLM call may take and the day's token budget.
    pub llm: super::llm_call::Limits,
}

/// A concept of the session that needs a question: its row id, content and target level.
#[derive(Debug, Clone, serde::Serialize)]
struct Target {
    id: String,
    concept: Concept,
    #[serde(serialize_with = "level_name")]
    level: Level,
}

fn level_name<S: serde::Serializer>(level: &Level, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(level.as_str())
}

/// `keep`: concepts never skipped as mastered (leeches to re-teach).
fn targets(conn: &Connection, session_id: &str, keep: &[super::reteach::Reteach]) -> rusqlite::Result<Vec<Target>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.name, c.category, c.difficulty, c.source_file, c.snippet, c.why_it_matters, c.confidence, \
                p.level, p.mastery_score, p.correct_answers + p.incorrect_answers \
         FROM concepts c LEFT JOIN concept_profiles p ON p.normalized_name = c.normalized_name \
         WHERE c.session_id = ?1 ORDER BY c.confidence DESC, c.id",
    )?;
    let rows = stmt.query_map([session_id], |r| {
        let difficulty: String = r.get(3)?;
        let profile_level: Option<String> = r.get(8)?;
        let mastery: Option<f64> = r.get(9)?;
        let answered: Option<i64> = r.get(10)?;
        Ok((
            Target {
                id: r.get(0)?,
                concept: Concept {
                    name: r.get(1)?,
                    category: r.get(2)?,
                    difficulty: difficulty.clone(),
                    source_file: r.get(4)?,
                    snippet: r.get(5)?,
                    why_it_matters: r.get(6)?,
                    confidence: r.get(7)?,
                },
                // The developer's level for the concept once they answered; before that, the
                // concept's own difficulty capped at mid.
                level: profile_level
                    .as_deref()
                    .filter(|_| answered.unwrap_or(0) > 0)
                    .and_then(Level::parse)
                    .unwrap_or(if difficulty == "junior" { Level::Junior } else { Level::Mid }),
            },
            mastery.unwrap_or(0.0) > MASTERED && answered.unwrap_or(0) > 0,
        ))
    })?;
    rows.filter_map(|row| match row {
        Ok((target, mastered)) if mastered && !keep.iter().any(|r| r.concept_id == target.id) => None,
        Ok((target, _)) => Some(Ok(target)),
        Err(e) => Some(Err(e)),
    })
    .collect()
}

/// A stored question that quotes the session's code, as the verifier reads it back: its row id,
/// whether the developer answered it, and the question.
struct StoredQuestion {
    id: String,
    answered: bool,
    question: GeneratedQuestion,
}

fn grounded_questions(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<StoredQuestion>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.id, EXISTS (SELECT 1 FROM quiz_attempts a WHERE a.question_id = q.id), q.question_type, \
                q.difficulty, q.snippet, q.question, q.options, q.correct, q.explanation, q.grounding_kind, \
                q.grounding_file, q.grounding_line_start, q.grounding_line_end, q.grounding_mutation \
         FROM questions q WHERE q.session_id = ?1 AND q.grounding_kind IS NOT NULL ORDER BY q.id",
    )?;
    let rows = stmt.query_map([session_id], |r| {
        let options: Option<String> = r.get(6)?;
        let kind: String = r.get(9)?;
        let mutation: Option<String> = r.get(13)?;
        // A row this binary wrote always parses; one that does not (a hand edit) reads as
        // ungrounded and is left alone.
        let grounding = serde_json::from_value::<GroundingKind>(json!(kind)).ok().map(|kind| Grounding {
            file: r.get(10).unwrap_or_default(),
            line_start: r.get(11).unwrap_or_default(),
            line_end: r.get(12).unwrap_or_default(),
            kind,
            mutation: mutation.as_deref().and_then(|m| serde_json::from_str(m).ok()),
        });
        Ok(StoredQuestion {
            id: r.get(0)?,
            answered: r.get(1)?,
            question: GeneratedQuestion {
                concept: String::new(),
                question_type: r.get(2)?,
                difficulty: r.get(3)?,
                snippet: r.get(4)?,
                question: r.get(5)?,
                options: options.as_deref().and_then(|o| serde_json::from_str(o).ok()),
                correct: r.get(7)?,
                explanation: r.get(8)?,
                follow_up: None,
                tags: Vec::new(),
                grounding,
            },
        })
    })?;
    rows.collect()
}

/// The stored questions whose code no longer checks out against the session's files (an edit
/// changed the lines they quote), left out those the developer already answered: their
/// attempts, schedule and unsynced history are the developer's and go only with the question
/// (the attempts reference it), so an answered question is kept as it is.
fn stale_questions(stored: Vec<StoredQuestion>, sources: &[SourceFile]) -> Vec<String> {
    stored
        .into_iter()
        .filter(|q| !q.answered && q.question.grounding.is_some())
        .filter(|q| verify_grounding(&q.question, sources, CannedCode::Refused).is_err())
        .map(|q| q.id)
        .collect()
}

impl Handler for QuizHandler {
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome {
        let selected = match llm_call::provider_of(&self.provider) {
            Ok(selected) => selected,
            Err(outcome) => return outcome,
        };
        // A `claude` CLI that `auto` found but that failed its one try: offline instead.
        let selected = selected.usable();
        let session_id = match session_id_of(job) {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let inputs = self.queue.read().and_then(|conn| {
            let reteach = super::reteach::needs(&conn, &session_id)?;
            Ok((
                session_data::session(&conn, &session_id)?.is_some(),
                targets(&conn, &session_id, &reteach)?,
                session_data::last_input_hash(&conn, &session_id, super::ANALYZE_QUIZ)?,
                session_data::captured_files(&conn, &session_id)?,
                session_data::failures(&conn, &session_id)?,
                session_data::patterns(&conn, &session_id)?,
                grounded_questions(&conn, &session_id)?,
                reteach,
            ))
        });
        let (exists, targets, last_hash, files, failures, patterns, stored, reteach) = match inputs {
            Ok(inputs) => inputs,
            Err(e) => return Outcome::retry(e.to_string()),
        };
        if !exists {
            return missing_session(&session_id);
        }
        // Everything the questions are built from: the concepts, the files, failures and
        // patterns they quote (with the concepts alone, an edit to a quoted line left every
        // question quoting a line the file no longer has), and a leech to re-teach.
        let hash = if reteach.is_empty() {
            hash_of(&(selected.name(), &targets, &files, &failures, &patterns))
        } else {
            hash_of(&(selected.name(), &targets, &files, &failures, &patterns, &reteach))
        };
        let mark_analyzed = |session_id: String| -> Effects {
            Box::new(move |conn, now| {
                conn.prepare_cached(
                    "UPDATE sessions SET state = 'analyzed' WHERE id = ?1 AND state IN ('initialized','observing')",
                )?
                .execute([&session_id])?;
                // The weekly re-fit of the learner's scheduler, when one is due (also when this
                // session's questions are unchanged: the reviews since the last fit are not).
                super::optimize::schedule(conn, now)?;
                Ok(())
            })
        };
        if targets.is_empty() || last_hash.as_deref() == Some(hash.as_str()) {
            // No new question either way: what sync would send has not changed.
            let reason = if targets.is_empty() { "no_concepts" } else { "unchanged" };
            return Outcome::Unchanged {
                result: Some(json!({ "skipped": reason })),
                effects: Some(mark_analyzed(session_id)),
            };
        }
        let sources = session_data::citable(&files, &failures);
        let stale = stale_questions(stored, &sources);
        let pairs: Vec<(Concept, Level)> = targets.iter().map(|t| (t.concept.clone(), t.level)).collect();
        let question_targets: Vec<QuestionTarget<'_>> =
            targets.iter().map(|t| QuestionTarget { id: &t.id, name: &t.concept.name }).collect();
        // Every question, the offline catalogue's too, is verified against the session's
        // files, so a generator bug shows as a drop rather than a wrong answer key.
        let (checked, result) = match selected {
            Selected::Offline => {
                // Built from the session's own files (issue 16), where the static step's stored
                // patterns show each concept.
                // Re-teach questions first: where one shares type and lines with a regular
                // question, the first is kept (`keep_valid`), and the regular one is already stored.
                let mut questions = Vec::new();
                for r in &reteach {
                    let Some(t) = targets.iter().find(|t| t.id == r.concept_id) else { continue };
                    let avoid: Vec<String> = r.leech_types.iter().chain(&r.known_types).cloned().collect();
                    let found =
                        reteach_question(&t.concept, t.level, &files, &patterns, &avoid, r.leech_file.as_deref())
                            .or_else(|| {
                                reteach_question(
                                    &t.concept,
                                    t.level,
                                    &files,
                                    &patterns,
                                    &r.leech_types,
                                    r.leech_file.as_deref(),
                                )
                            });
                    questions.extend(found);
                }
                questions.extend(offline_questions(&pairs, &files, &patterns).questions);
                let checked = keep_valid(questions, &question_targets, &sources, CannedCode::Allowed);
                let result = checked.result(selected.name(), None);
                (checked, result)
            }
            Selected::Remote(provider) => {
                let mut request = prompts::questions_request(&pairs, &sources);
                let names: Vec<(String, String)> =
                    targets.iter().map(|t| (t.id.clone(), t.concept.name.clone())).collect();
                request.prompt.push_str(&super::reteach::prompt_note(&reteach, &names));
                let judge = RepairJudge::new(&question_targets, &sources);
                let accept = |text: &str| judge.judge(text);
                match llm_call::ask_with_repair(provider.as_ref(), &request, &self.llm, cancel, accept) {
                    Ok(checked) => {
                        let result = checked.result(selected.name(), Some(&judge));
                        (checked, result)
                    }
                    Err(outcome) => return outcome,
                }
            }
        };
        if checked.kept.is_empty() {
            return Outcome::dead(format!("no valid question could be generated: {}", checked.dropped.join("; ")));
        }
        let mut kept = checked.kept;
        kept.retain_mut(|(concept_id, question)| super::reteach::keep(&reteach, concept_id, question));
        let mut result = result;
        result["replaced_stale"] = json!(stale.len());
        let finish = mark_analyzed(session_id.clone());
        let effects: Effects = Box::new(move |conn, now| {
            // The questions quoting what an edit replaced go first: a new one on the new line
            // often has the same text, so the same id, and is then stored afresh.
            let mut delete = conn.prepare_cached("DELETE FROM questions WHERE id = ?1 AND session_id = ?2")?;
            for id in &stale {
                delete.execute(params![id, session_id])?;
            }
            for (concept_id, question) in &kept {
                store_question(conn, &session_id, concept_id, question, now)?;
            }
            session_data::record_input_hash(conn, &session_id, super::ANALYZE_QUIZ, &hash, now)?;
            finish(conn, now)
        });
        Outcome::Succeeded { result: Some(result), effects: Some(effects) }
    }
}

/// Inserts a question unless the same (concept, type, text) exists already; an existing one
/// gets the code, answer key and grounding this run verified (rows stored before grounding was
/// recorded have none; an answered question whose lines an edit changed shows the new ones),
/// and keeps its schedule and attempts.
fn store_question(
    conn: &Connection,
    session_id: &str,
    concept_id: &str,
    q: &GeneratedQuestion,
    now: i64,
) -> rusqlite::Result<()> {
    let text_hash = normalized_text_hash(&q.question);
    let id = session_data::stable_id("q", &format!("{concept_id}\n{}\n{text_hash}", q.question_type));
    let grounding = q.grounding.as_ref();
    conn.prepare_cached(
        "INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, snippet, question, options, correct, \
         explanation, follow_up, tags, text_hash, created_at, grounding_kind, grounding_file, grounding_line_start, \
         grounding_line_end, grounding_mutation) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) \
         ON CONFLICT (concept_id, question_type, text_hash) DO UPDATE SET snippet = excluded.snippet, \
         options = excluded.options, correct = excluded.correct, explanation = excluded.explanation, \
         grounding_kind = excluded.grounding_kind, \
         grounding_file = excluded.grounding_file, grounding_line_start = excluded.grounding_line_start, \
         grounding_line_end = excluded.grounding_line_end, grounding_mutation = excluded.grounding_mutation",
    )?
    .execute(params![
        id,
        concept_id,
        session_id,
        q.question_type,
        q.difficulty,
        q.snippet,
        q.question,
        q.options.as_ref().map(|o| serde_json::to_string(o).unwrap_or_default()),
        q.correct,
        q.explanation,
        q.follow_up,
        serde_json::to_string(&q.tags).unwrap_or_else(|_| "[]".into()),
        text_hash,
        now,
        grounding.map(|g| g.kind.as_str()),
        grounding.map(|g| g.file.as_str()),
        grounding.map(|g| g.line_start),
        grounding.map(|g| g.line_end),
        grounding.and_then(|g| g.mutation.as_ref()).map(|m| serde_json::to_string(m).unwrap_or_default()),
    ])?;
    Ok(())
}
