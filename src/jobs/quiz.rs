//! The `analyze_quiz` job (SPEC §6.4): questions on each concept of the session not yet
//! mastered (mastered as `learning::mastery` judges it from the live review state, so a
//! mastered concept costs no LLM tokens and one missed on first sight keeps getting questions),
//! at the developer's current level for it, from the LLM provider (one per concept,
//! one repair round-trip) or offline from the session's own files (two per concept, README). Every question is validated before it is stored;
//! invalid ones are dropped and counted. Questions are upserted by (concept, type, text hash).

use std::collections::HashSet;

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::concepts::ProviderChoice;
use super::missing_session;
use super::question_checks::{QuestionTarget, RepairJudge, keep_valid};
use super::session_data::{self, hash_of};
use super::{llm_call, prompts};
use crate::analysis::concepts::{Concept, Level};
use crate::analysis::grounding::{Grounding, GroundingKind};
use crate::analysis::grounding_check::{CannedCode, verify_grounding};
use crate::analysis::model::SourceFile;
use crate::analysis::questions::{GeneratedQuestion, normalized_text_hash};
use crate::clock::Millis;
use crate::learn::schedule::Scheduler;
use crate::llm::Selected;
use crate::llm::offline::{reteach_question, session_questions};
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};

pub struct QuizHandler {
    pub queue: Queue,
    pub provider: ProviderChoice,
    /// The time one LLM call may take and the day's token budget.
    pub llm: super::llm_call::Limits,
    /// How the learner's scheduler is built, to judge mastery as the quiz does.
    pub scheduling: crate::learning::cards::SchedulerSettings,
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

/// The session's concepts that need a question: all but those mastered at `now` (the live
/// standing, `learning::mastery`); `keep`: concepts never skipped (leeches to re-teach).
fn targets(
    conn: &Connection,
    scheduler: &Scheduler,
    now: Millis,
    session_id: &str,
    keep: &[super::reteach::Reteach],
) -> rusqlite::Result<Vec<Target>> {
    let mastered: HashSet<String> = crate::learning::mastery::concept_mastery(conn, scheduler, now)?
        .into_iter()
        .filter(|c| c.is_mastered())
        .map(|c| c.key)
        .collect();
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.name, c.category, c.difficulty, c.source_file, c.snippet, c.why_it_matters, c.confidence, \
                p.level, p.correct_answers + p.incorrect_answers, c.normalized_name \
         FROM concepts c LEFT JOIN concept_profiles p ON p.normalized_name = c.normalized_name \
         WHERE c.session_id = ?1 ORDER BY c.confidence DESC, c.id",
    )?;
    let rows = stmt.query_map([session_id], |r| {
        let difficulty: String = r.get(3)?;
        let profile_level: Option<String> = r.get(8)?;
        let answered: Option<i64> = r.get(9)?;
        let key: String = r.get(10)?;
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
            mastered.contains(&key),
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

/// Everything the job reads before it generates.
struct Inputs {
    exists: bool,
    targets: Vec<Target>,
    last_hash: Option<String>,
    /// The captured files, then the failures as sources: what questions may cite, held once
    /// (not the files and a copy of them: issue 43 §4). [`Inputs::files`] is the first part.
    sources: Vec<SourceFile>,
    /// How many of `sources` are captured files.
    captured: usize,
    failures: Vec<crate::analysis::model::FailedCall>,
    /// The edit that fixed the session's first failure: the story questions' change.
    fix: Option<crate::analysis::story::Fix>,
    patterns: Vec<crate::analysis::model::Pattern>,
    stored: Vec<StoredQuestion>,
    reteach: Vec<super::reteach::Reteach>,
    /// What the session did to each file: which files the prompt shows first.
    activity: Vec<session_data::FileActivity>,
}

impl Inputs {
    /// Everything the questions are built from: the concepts, the files, failures and
    /// patterns they quote (with the concepts alone, an edit to a quoted line left every
    /// question quoting a line the file no longer has), a leech to re-teach, and the story's
    /// fix. Each optional part is hashed only when present, so a session without one keeps
    /// the hash it had before that part existed (no re-generation after an upgrade).
    fn hash(&self, provider: &str) -> String {
        let files = self.files();
        let Inputs { targets, failures, patterns, reteach, fix, .. } = self;
        match (reteach.is_empty(), fix) {
            (true, None) => hash_of(&(provider, targets, files, failures, patterns)),
            (false, None) => hash_of(&(provider, targets, files, failures, patterns, reteach)),
            (_, Some(fix)) => hash_of(&(provider, targets, files, failures, patterns, reteach, fix)),
        }
    }
}

impl Inputs {
    /// The session's captured files.
    fn files(&self) -> &[SourceFile] {
        &self.sources[..self.captured]
    }
}

impl QuizHandler {
    fn read_inputs(&self, session_id: &str) -> Result<Inputs, crate::queue::QueueError> {
        let conn = self.queue.read()?;
        let scheduler = self.scheduling.load(&conn)?;
        let reteach = super::reteach::needs(&conn, session_id)?;
        let files = session_data::captured_files(&conn, session_id)?;
        let failures = session_data::failures(&conn, session_id)?;
        Ok(Inputs {
            exists: session_data::session(&conn, session_id)?.is_some(),
            targets: targets(&conn, &scheduler, self.queue.now(), session_id, &reteach)?,
            last_hash: session_data::last_input_hash(&conn, session_id, super::ANALYZE_QUIZ)?,
            captured: files.len(),
            sources: session_data::into_citable(files, &failures),
            failures,
            fix: session_data::story_fix(&conn, session_id)?,
            patterns: session_data::patterns(&conn, session_id)?,
            stored: grounded_questions(&conn, session_id)?,
            reteach,
            activity: session_data::file_activity(&conn, session_id)?,
        })
    }

    /// The questions from the offline catalogue or the LLM, each verified against the
    /// session's files, so a generator bug shows as a drop rather than a wrong answer key.
    fn generate(
        &self,
        selected: &Selected,
        inputs: &Inputs,
        cancel: &CancelToken,
    ) -> Result<(super::question_checks::Checked, Value), Outcome> {
        let (sources, files) = (inputs.sources.as_slice(), inputs.files());
        let targets = &inputs.targets;
        let pairs: Vec<(Concept, Level)> = targets.iter().map(|t| (t.concept.clone(), t.level)).collect();
        let question_targets: Vec<QuestionTarget<'_>> =
            targets.iter().map(|t| QuestionTarget { id: &t.id, name: &t.concept.name }).collect();
        match selected {
            Selected::Offline => {
                // Re-teach questions first: where one shares type and lines with a regular
                // question, the first is kept (`keep_valid`), and the regular one is already stored.
                let mut questions = reteach_questions(inputs);
                // The session's own story next (issue 40): where it shares type and lines with
                // a catalogue question, it is the one kept.
                let (failures, fix) = (&inputs.failures, inputs.fix.as_ref());
                let offline = session_questions(&pairs, files, &inputs.patterns, failures, fix);
                questions.extend(offline.questions);
                let checked = keep_valid(questions, &question_targets, sources, CannedCode::Allowed);
                let mut result = checked.result(selected.name(), None);
                // What the builder did not write, by the rule that refused it (issue 40 §5).
                result["not_written"] = serde_json::json!(offline.not_written);
                Ok((checked, result))
            }
            Selected::Remote(provider) => {
                // The concepts' files first, then the session's story, within the bound.
                let sites: Vec<&str> = targets.iter().map(|t| t.concept.source_file.as_str()).collect();
                let story =
                    session_data::Story { activity: &inputs.activity, failures: &inputs.failures, sites: &sites };
                let shown = session_data::prompt_files(files, &story);
                let mut request = prompts::questions_request(&pairs, &session_data::citable(&shown, &inputs.failures));
                let names: Vec<(String, String)> =
                    targets.iter().map(|t| (t.id.clone(), t.concept.name.clone())).collect();
                request.prompt.push_str(&super::reteach::prompt_note(&inputs.reteach, &names));
                let judge = RepairJudge::new(&question_targets, sources);
                let accept = |text: &str| judge.judge(text);
                let checked = llm_call::ask_with_repair(provider.as_ref(), &request, &self.llm, cancel, accept)?;
                let result = checked.result(selected.name(), Some(&judge));
                Ok((checked, result))
            }
        }
    }
}

/// The offline re-teach questions (built from the session's own files, where the static
/// step's stored patterns show each concept): a type the leech is not, and new to the concept
/// when there is one.
fn reteach_questions(inputs: &Inputs) -> Vec<GeneratedQuestion> {
    let mut questions = Vec::new();
    for r in &inputs.reteach {
        let Some(t) = inputs.targets.iter().find(|t| t.id == r.concept_id) else { continue };
        let (files, patterns, file) = (inputs.files(), &inputs.patterns, r.leech_file.as_deref());
        let avoid: Vec<String> = r.leech_types.iter().chain(&r.known_types).cloned().collect();
        let found = reteach_question(&t.concept, t.level, files, patterns, &avoid, file)
            .or_else(|| reteach_question(&t.concept, t.level, files, patterns, &r.leech_types, file));
        questions.extend(found);
    }
    questions
}

/// The session is analysed; and the weekly re-fit of the learner's scheduler is asked for
/// when one is due (also when this session's questions are unchanged: the reviews since the
/// last fit are not).
fn mark_analyzed(session_id: String) -> Effects {
    Box::new(move |conn, now| {
        conn.prepare_cached(
            "UPDATE sessions SET state = 'analyzed' WHERE id = ?1 AND state IN ('initialized','observing')",
        )?
        .execute([&session_id])?;
        super::optimize::schedule(conn, now)?;
        Ok(())
    })
}

/// Deletes the stale questions that are *still* unanswered, checked again here inside the
/// writer's transaction: the job chose them before an LLM call of up to minutes, and an answer
/// given meanwhile must not go with its question (`ON DELETE CASCADE` would take the
/// attempts and the review log). Returns how many went.
fn delete_stale(conn: &Connection, session_id: &str, stale: &[String]) -> rusqlite::Result<usize> {
    let mut delete = conn.prepare_cached(
        "DELETE FROM questions WHERE id = ?1 AND session_id = ?2 \
         AND NOT EXISTS (SELECT 1 FROM quiz_attempts a WHERE a.question_id = questions.id) \
         AND NOT EXISTS (SELECT 1 FROM review_log l WHERE l.question_id = questions.id)",
    )?;
    let mut deleted = 0;
    for id in stale {
        deleted += delete.execute(params![id, session_id])?;
    }
    Ok(deleted)
}

impl Handler for QuizHandler {
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome {
        let (selected, session_id) = match llm_call::provider_and_session(&self.provider, job) {
            Ok(both) => both,
            Err(outcome) => return outcome,
        };
        let inputs = match self.read_inputs(&session_id) {
            Ok(inputs) => inputs,
            Err(e) => return Outcome::retry(e.to_string()),
        };
        if !inputs.exists {
            return missing_session(&session_id);
        }
        let hash = inputs.hash(selected.name());
        if inputs.targets.is_empty() || inputs.last_hash.as_deref() == Some(hash.as_str()) {
            // No new question either way: what sync would send has not changed.
            let reason = if inputs.targets.is_empty() { "no_concepts" } else { "unchanged" };
            return Outcome::Unchanged {
                result: Some(json!({ "skipped": reason })),
                effects: Some(mark_analyzed(session_id)),
            };
        }
        let (checked, mut result) = match self.generate(selected, &inputs, cancel) {
            Ok(generated) => generated,
            Err(outcome) => return outcome,
        };
        // Nothing kept because something was written and refused is a generator's failure;
        // nothing written at all is the offline builder declining questions that would teach
        // nothing about this code (`not_written` in the result says which rules): the session
        // is analysed, with no question (issue 40 §5).
        if checked.kept.is_empty() && !checked.dropped.is_empty() {
            return Outcome::dead(format!("no valid question could be generated: {}", checked.dropped.join("; ")));
        }
        let stale = stale_questions(inputs.stored, &inputs.sources);
        let mut kept = checked.kept;
        kept.retain_mut(|(concept_id, question)| super::reteach::keep(&inputs.reteach, concept_id, question));
        result["replaced_stale"] = json!(stale.len());
        let finish = mark_analyzed(session_id.clone());
        let effects: Effects = Box::new(move |conn, now| {
            // The questions quoting what an edit replaced go first: a new one on the new line
            // often has the same text, so the same id, and is then stored afresh.
            delete_stale(conn, &session_id, &stale)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::{DAY_MS, Rating};
    use crate::learning::record::{Answer, record_answer};

    const NOW: Millis = 1_780_000_000_000;

    fn db() -> (tempfile::TempDir, Connection) {
        crate::db::testing::with(
            "INSERT INTO sessions (id, project, started_at, updated_at) VALUES ('s1', 'p', 1, 1), ('s2', 'p', 2, 2);
             INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet,
               why_it_matters, confidence, created_at, updated_at) VALUES
               ('c1', 's1', 'Closures', 'closures', 'x', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1),
               ('c2', 's2', 'Closures', 'closures', 'x', 'mid', 'a.ts', 'x', 'y', 0.9, 1, 1);
             INSERT INTO questions (id, concept_id, session_id, question_type, difficulty, question, explanation, tags,
               text_hash, created_at) VALUES
               ('q1', 'c1', 's1', 'true_false', 'mid', 'q1', 'e', '[]', 'h1', 1),
               ('q2', 'c1', 's1', 'true_false', 'mid', 'q2', 'e', '[]', 'h2', 1);",
        )
    }

    fn answer(conn: &mut Connection, id: &str, rating: Rating, at: Millis) {
        let given = Answer { question_id: id, text: "x", correct: rating.passed(), rating, duration_ms: None };
        record_answer(conn, &given, &Scheduler::default(), at).unwrap().unwrap();
    }

    fn target_names(conn: &Connection, now: Millis) -> Vec<String> {
        targets(conn, &Scheduler::default(), now, "s2", &[]).unwrap().into_iter().map(|t| t.id).collect()
    }

    #[test]
    fn a_concept_missed_on_first_sight_keeps_getting_questions_and_a_mastered_one_does_not() {
        let (_dir, mut conn) = db();
        // Both cards answered wrong right now: recall-now is ~100 %, which the old stored score
        // took for mastery and skipped the concept in every later session.
        answer(&mut conn, "q1", Rating::Again, NOW);
        answer(&mut conn, "q2", Rating::Again, NOW);
        assert_eq!(target_names(&conn, NOW + 1000), ["c2"], "missed: asked again in the next session");
        // Both cards mature (stability of 21 days or more): mastered, no LLM call spent on it.
        conn.execute("UPDATE questions SET card_state = 'review', stability = 40 WHERE id IN ('q1', 'q2')", [])
            .unwrap();
        assert!(target_names(&conn, NOW + DAY_MS).is_empty(), "mastered: no question");
    }

    #[test]
    fn a_stale_question_answered_while_the_job_ran_is_kept_with_its_history() {
        let (_dir, mut conn) = db();
        // The job found both unanswered and stale; q1 is answered before its effects commit.
        let stale = vec!["q1".to_owned(), "q2".to_owned()];
        answer(&mut conn, "q1", Rating::Good, NOW);
        assert_eq!(delete_stale(&conn, "s1", &stale).unwrap(), 1);
        let left: Vec<String> = conn
            .prepare("SELECT id FROM questions ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(left, ["q1"], "the answered one stays");
        let attempts: i64 = conn.query_row("SELECT COUNT(*) FROM quiz_attempts", [], |r| r.get(0)).unwrap();
        assert_eq!(attempts, 1);
    }
}
