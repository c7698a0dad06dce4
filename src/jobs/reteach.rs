//! Leeches re-taught (SPEC §7): the next `analyze_quiz` of a concept that has a leech (a card
//! suspended after `VIBELEARN_LEECH_THRESHOLD` lapses, in any session) writes a new question
//! about the same code of a different type, tagged `reteach`: another angle on what the
//! learner keeps failing, rather than the same drill again. Once a re-teach question exists
//! (and is not itself a leech) the concept waits for the next leech.

use rusqlite::Connection;

use crate::analysis::questions::GeneratedQuestion;
use crate::llm::offline::RETEACH_TAG;

/// A concept of the session to re-teach.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reteach {
    pub concept_id: String,
    /// The leech cards' types: never the re-teach question's.
    pub leech_types: Vec<String>,
    /// Types this session's concept already has questions of (avoided first, so it is new).
    pub known_types: Vec<String>,
    /// The file the (first) leech quotes, so the new question quotes the same code.
    pub leech_file: Option<String>,
}

/// The concepts of `session_id` that need a re-teach question.
pub fn needs(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<Reteach>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, \
           (SELECT json_group_array(DISTINCT l.question_type) FROM questions l JOIN concepts lc ON lc.id = l.concept_id \
            WHERE lc.normalized_name = c.normalized_name AND l.suspended = 1 \
              AND EXISTS (SELECT 1 FROM json_each(l.tags) t WHERE t.value = 'leech')), \
           (SELECT json_group_array(DISTINCT k.question_type) FROM questions k WHERE k.concept_id = c.id), \
           (SELECT l.grounding_file FROM questions l JOIN concepts lc ON lc.id = l.concept_id \
            WHERE lc.normalized_name = c.normalized_name AND l.suspended = 1 \
              AND EXISTS (SELECT 1 FROM json_each(l.tags) t WHERE t.value = 'leech') ORDER BY l.lapses DESC LIMIT 1) \
         FROM concepts c WHERE c.session_id = ?1 \
           AND EXISTS (SELECT 1 FROM questions l JOIN concepts lc ON lc.id = l.concept_id \
                       WHERE lc.normalized_name = c.normalized_name AND l.suspended = 1 \
                         AND EXISTS (SELECT 1 FROM json_each(l.tags) t WHERE t.value = 'leech')) \
           AND NOT EXISTS (SELECT 1 FROM questions r JOIN concepts rc ON rc.id = r.concept_id \
                           WHERE rc.normalized_name = c.normalized_name AND r.suspended = 0 \
                             AND EXISTS (SELECT 1 FROM json_each(r.tags) t WHERE t.value = ?2)) \
         ORDER BY c.id",
    )?;
    let list =
        |text: Option<String>| -> Vec<String> { text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default() };
    stmt.query_map(rusqlite::params![session_id, RETEACH_TAG], |r| {
        Ok(Reteach {
            concept_id: r.get(0)?,
            leech_types: list(r.get(1)?),
            known_types: list(r.get(2)?),
            leech_file: r.get(3)?,
        })
    })?
    .collect()
}

/// Keeps a question of a re-taught concept only when its type differs from the leech's, and
/// tags it `reteach`; questions of other concepts pass unchanged.
pub fn keep(reteach: &[Reteach], concept_id: &str, question: &mut GeneratedQuestion) -> bool {
    let Some(r) = reteach.iter().find(|r| r.concept_id == concept_id) else { return true };
    if r.leech_types.contains(&question.question_type) {
        return false;
    }
    if !question.tags.iter().any(|t| t == RETEACH_TAG) {
        question.tags.push(RETEACH_TAG.to_owned());
    }
    true
}

/// The sentence added to an LLM's question request for the concepts to re-teach.
pub fn prompt_note(reteach: &[Reteach], names: &[(String, String)]) -> String {
    let lines: Vec<String> = reteach
        .iter()
        .filter_map(|r| {
            let name = names.iter().find(|(id, _)| *id == r.concept_id).map(|(_, n)| n)?;
            Some(format!(
                "- {name}: the learner keeps failing a {} question on it; write one question of another type about \
                 the same code{}.",
                r.leech_types.join("/"),
                r.leech_file.as_deref().map(|f| format!(" (in {f})")).unwrap_or_default()
            ))
        })
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n\nRe-teach from another angle, not the same drill:\n{}", lines.join("\n"))
    }
}
