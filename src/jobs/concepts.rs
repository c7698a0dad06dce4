//! The `analyze_concepts` job (SPEC §6.3): a session summary and 3–8 grounded concepts, from
//! the configured LLM provider (with one repair round-trip) or the offline catalogue. Concepts
//! are upserted by (session, normalised name); a run whose inputs hash as at the last success
//! makes no call at all (`unchanged`). Failed tool calls are input too: a concept may be
//! grounded in an error the developer met, citing the failed call as its file.

use std::sync::Arc;

use rusqlite::{Connection, params};
use serde_json::json;

use super::missing_session;
use super::session_data::{self, hash_of};
use super::{llm_call, prompts};
use crate::analysis::concepts::{ValidatedConcepts, normalize_name, parse_concepts_json, validate_concepts};
use crate::llm::Selected;
use crate::llm::offline::offline_concepts;
use crate::queue::{CancelToken, ClaimedJob, Effects, Handler, Outcome, Queue};

/// The provider a job uses, or why none could be set up (a configuration mistake).
pub type ProviderChoice = Arc<Result<Selected, crate::llm::SelectError>>;

pub struct ConceptsHandler {
    pub queue: Queue,
    pub provider: ProviderChoice,
    /// The time one LLM call may take and the day's token budget.
    pub llm: super::llm_call::Limits,
}

/// Stable id of a session's concept.
pub fn concept_id(session_id: &str, normalized: &str) -> String {
    session_data::stable_id("c", &format!("{session_id}\n{normalized}"))
}

/// What one run reads: the session, its files, findings, stack, prompts and failed calls,
/// and the input hash of its last success.
struct Inputs {
    session: session_data::SessionInfo,
    /// The captured files, then the failures as sources: what a concept may cite, held once
    /// (not the files and a copy of them: issue 43 §4). [`Inputs::files`] is the first part.
    sources: Vec<crate::analysis::model::SourceFile>,
    /// How many of `sources` are captured files.
    captured: usize,
    patterns: Vec<crate::analysis::model::Pattern>,
    stack: crate::analysis::model::StackProfile,
    prompts: Vec<String>,
    last_hash: Option<String>,
    failures: Vec<crate::analysis::model::FailedCall>,
    /// What the session did to each file: which files the prompt shows first.
    activity: Vec<session_data::FileActivity>,
}

impl Inputs {
    /// The session's captured files.
    fn files(&self) -> &[crate::analysis::model::SourceFile] {
        &self.sources[..self.captured]
    }
}

impl Handler for ConceptsHandler {
    fn run(&self, job: &ClaimedJob, cancel: &CancelToken) -> Outcome {
        let (selected, session_id) = match llm_call::provider_and_session(&self.provider, job) {
            Ok(both) => both,
            Err(outcome) => return outcome,
        };
        let inputs = match self.inputs(&session_id) {
            Ok(inputs) => inputs,
            Err(outcome) => return outcome,
        };
        if inputs.files().is_empty() {
            // No code was written: there is nothing to ground a concept in. Not a failure,
            // and not a fake success either: the result says so.
            return Outcome::done(json!({ "skipped": "no_code" }));
        }
        let hash = input_hash(selected, &inputs);
        if inputs.last_hash.as_deref() == Some(hash.as_str()) {
            return Outcome::unchanged(json!({ "skipped": "unchanged" }));
        }
        let last_message = job.payload.get("last_assistant_message").and_then(|m| m.as_str());
        let validated = match self.concepts(selected, &inputs, last_message, cancel) {
            Ok(validated) => validated,
            Err(outcome) => return outcome,
        };
        self.stored(selected, session_id, &inputs.session, validated, hash)
    }
}

impl ConceptsHandler {
    /// Everything the run reads, or the outcome when the session is gone or the read failed.
    fn inputs(&self, session_id: &str) -> Result<Inputs, Outcome> {
        let read = self.queue.read().and_then(|conn| {
            let Some(session) = session_data::session(&conn, session_id)? else { return Ok(None) };
            let files = session_data::captured_files(&conn, session_id)?;
            let failures = session_data::failures(&conn, session_id)?;
            Ok(Some(Inputs {
                session,
                captured: files.len(),
                sources: session_data::into_citable(files, &failures),
                patterns: session_data::patterns(&conn, session_id)?,
                stack: session_data::stack_profile(&conn, session_id)?.unwrap_or_default(),
                prompts: session_data::prompts(&conn, session_id)?,
                last_hash: session_data::last_input_hash(&conn, session_id, super::ANALYZE_CONCEPTS)?,
                failures,
                activity: session_data::file_activity(&conn, session_id)?,
            }))
        });
        match read {
            Ok(Some(inputs)) => Ok(inputs),
            Ok(None) => Err(missing_session(session_id)),
            Err(e) => Err(Outcome::retry(e.to_string())),
        }
    }

    /// The validated concepts from the offline catalogue or the provider (with its one repair).
    fn concepts(
        &self,
        selected: &Selected,
        inputs: &Inputs,
        last_message: Option<&str>,
        cancel: &CancelToken,
    ) -> Result<ValidatedConcepts, Outcome> {
        let (files, citable) = (inputs.files(), inputs.sources.as_slice());
        let Inputs { patterns, stack, prompts, failures, activity, .. } = inputs;
        match selected {
            Selected::Offline => {
                let answer = offline_concepts(stack, patterns, files, failures, prompts);
                validate_concepts(answer, citable)
                    .map_err(|e| Outcome::dead(format!("the offline provider found no usable concepts: {e}")))
            }
            Selected::Remote(provider) => {
                // The session's story first (its failures, its last and most edited files),
                // within the prompt's bound: what the model sees of a large session.
                let story = session_data::Story { activity, failures, sites: &[] };
                let shown = session_data::prompt_files(files, &story);
                let patterns = session_data::patterns_in_shown_first(patterns, &shown);
                let request = prompts::concepts_request(stack, &patterns, &shown, failures, prompts, last_message);
                let accept = |text: &str| {
                    let answer = parse_concepts_json(text).map_err(|e| e.to_string())?;
                    validate_concepts(answer, citable).map_err(|e| e.to_string())
                };
                llm_call::ask_with_repair(provider.as_ref(), &request, &self.llm, cancel, accept)
            }
        }
    }

    /// The success: the result's figures, and the effects that store the concepts and the hash.
    fn stored(
        &self,
        selected: &Selected,
        session_id: String,
        session: &session_data::SessionInfo,
        validated: ValidatedConcepts,
        hash: String,
    ) -> Outcome {
        let counts = self.queue.read().and_then(|conn| Ok(session_data::file_counts(&conn, &session_id)?));
        let (files_created, files_edited) = counts.unwrap_or((0, 0));
        let duration_minutes = (session.ended_at.unwrap_or(session.updated_at) - session.started_at).max(0) / 60_000;
        let result = json!({
            "provider": selected.name(),
            "concepts": validated.concepts.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            "dropped": validated.dropped.len(),
        });
        let effects: Effects = Box::new(move |conn, now| {
            store(conn, &session_id, &validated, (duration_minutes, files_created, files_edited), now)?;
            session_data::record_input_hash(conn, &session_id, super::ANALYZE_CONCEPTS, &hash, now)?;
            Ok(())
        });
        Outcome::Succeeded { result: Some(result), effects: Some(effects) }
    }
}

/// The code decides whether to run again, not the conversation: the Stop hook fires after
/// every turn with a new last message, and a turn that wrote nothing must cost nothing.
/// Failures join the hash only when there are some, so sessions without any keep the hash they
/// had before failures were recorded (no re-analysis after an upgrade).
fn input_hash(selected: &Selected, inputs: &Inputs) -> String {
    let files = inputs.files();
    let Inputs { stack, patterns, failures, .. } = inputs;
    if failures.is_empty() {
        hash_of(&(selected.name(), stack, patterns, files))
    } else {
        hash_of(&(selected.name(), stack, patterns, files, failures))
    }
}

/// Stores the summary, upserts the concepts and refreshes their learner profiles.
fn store(
    conn: &Connection,
    session_id: &str,
    validated: &ValidatedConcepts,
    stats: (i64, i64, i64),
    now: i64,
) -> rusqlite::Result<()> {
    let summary = &validated.summary;
    conn.prepare_cached(
        "INSERT INTO session_summaries (session_id, what_was_built, developer_intent, architecture_decisions, \
         duration_minutes, files_created, files_edited, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT (session_id) DO UPDATE SET what_was_built = excluded.what_was_built, \
         developer_intent = excluded.developer_intent, architecture_decisions = excluded.architecture_decisions, \
         duration_minutes = excluded.duration_minutes, files_created = excluded.files_created, \
         files_edited = excluded.files_edited, updated_at = excluded.updated_at",
    )?
    .execute(params![
        session_id,
        summary.what_was_built,
        summary.developer_intent,
        serde_json::to_string(&summary.architecture_decisions).unwrap_or_else(|_| "[]".into()),
        stats.0,
        stats.1,
        stats.2,
        now
    ])?;
    for concept in &validated.concepts {
        let normalized = normalize_name(&concept.name);
        conn.prepare_cached(
            "INSERT INTO concepts (id, session_id, name, normalized_name, category, difficulty, source_file, snippet, \
             why_it_matters, confidence, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11) \
             ON CONFLICT (session_id, normalized_name) DO UPDATE SET name = excluded.name, category = excluded.category, \
             difficulty = excluded.difficulty, source_file = excluded.source_file, snippet = excluded.snippet, \
             why_it_matters = excluded.why_it_matters, confidence = excluded.confidence, updated_at = excluded.updated_at",
        )?
        .execute(params![
            concept_id(session_id, &normalized),
            session_id,
            concept.name,
            normalized,
            concept.category,
            concept.difficulty,
            concept.source_file,
            concept.snippet,
            concept.why_it_matters,
            concept.confidence,
            now
        ])?;
        // A new concept starts at its own difficulty, but never above mid (SPEC §7).
        let start_level = if concept.difficulty == "junior" { "junior" } else { "mid" };
        conn.prepare_cached(
            "INSERT INTO concept_profiles (normalized_name, concept_name, category, level, last_seen_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (normalized_name) DO UPDATE SET last_seen_at = excluded.last_seen_at",
        )?
        .execute(params![normalized, concept.name, concept.category, start_level, now])?;
        // Recomputed, not incremented: a re-run of the job must not count twice.
        conn.prepare_cached(
            "UPDATE concept_profiles SET encounter_count = \
             (SELECT COUNT(DISTINCT session_id) FROM concepts WHERE normalized_name = ?1) WHERE normalized_name = ?1",
        )?
        .execute([&normalized])?;
    }
    Ok(())
}
