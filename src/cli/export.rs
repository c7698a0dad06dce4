//! `vl export anki` and `vl export markdown` (SPEC §7): reads every question (read-only) and
//! writes the file(s) `learn::export` formats. Reflection prompts (follow-ups without their
//! own answer) are exported too (the back says there is no model answer), suspended leeches
//! as well, with their `leech` tag, so Anki shows what VibeLearn found hard. What was written
//! is counted as `vl status` and the dashboard count it: "16 questions (13 cards, 3 reflection
//! prompts)".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rusqlite::Connection;

use crate::cli::args::ExportTarget;
use crate::cli::quiz::NO_SESSIONS;
use crate::config::Config;
use crate::learn::export::{self, ExportCard};
use crate::learning::counts::Questions;

pub fn run(target: ExportTarget, config: &Config) -> ExitCode {
    let path = config.db_path();
    if !path.exists() {
        println!("{NO_SESSIONS}");
        return ExitCode::SUCCESS;
    }
    let conn = match crate::cli::quiz::open(config) {
        Ok(conn) => conn,
        Err(e) => {
            eprintln!("vl export: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match target {
        ExportTarget::Anki { out, deck, project } => {
            let out = out.unwrap_or_else(|| PathBuf::from("vibelearn-anki.txt"));
            read(&conn, project.as_deref()).and_then(|(cards, counted)| {
                std::fs::write(&out, export::anki(&cards, &deck))
                    .map(|()| format!("Wrote {} to {} — in Anki: File › Import.", counted.words(), out.display()))
                    .map_err(|e| format!("cannot write {}: {e}", out.display()))
            })
        }
        ExportTarget::Markdown { out } => {
            let dir = out.unwrap_or_else(|| PathBuf::from("vibelearn-markdown"));
            read(&conn, None).and_then(|(cards, counted)| write_markdown(&dir, &cards, counted))
        }
    };
    match result {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("vl export: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The questions to export, and their count in the words `vl status` and the dashboard use
/// (`learning::counts::Questions`: cards and reflection prompts; the same rows).
fn read(conn: &Connection, project: Option<&str>) -> Result<(Vec<ExportCard>, Questions), String> {
    let listed = cards(conn, project).map_err(|e| e.to_string())?;
    let counted = crate::learning::counts::questions(conn, project).map_err(|e| e.to_string())?;
    Ok((listed, counted))
}

fn write_markdown(dir: &Path, cards: &[ExportCard], counted: Questions) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut by_project: BTreeMap<&str, Vec<ExportCard>> = BTreeMap::new();
    for card in cards {
        by_project.entry(card.project.as_str()).or_default().push(card.clone());
    }
    for (project, list) in &by_project {
        let file = dir.join(format!("{}.md", export::file_name(project)));
        std::fs::write(&file, export::markdown(project, list))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    Ok(format!("Wrote {} in {} file(s) to {}.", counted.words(), by_project.len(), dir.display()))
}

/// Every question, by project, concept and creation.
pub fn cards(conn: &Connection, project: Option<&str>) -> rusqlite::Result<Vec<ExportCard>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.id, s.project, c.name, c.category, q.question_type, q.question, q.snippet, q.options, q.correct, \
         q.explanation, q.parent_question_id, q.grounding_file, q.grounding_line_start, q.grounding_line_end, \
         c.source_file, q.tags \
         FROM questions q JOIN concepts c ON c.id = q.concept_id JOIN sessions s ON s.id = q.session_id \
         WHERE (?1 IS NULL OR s.project = ?1) ORDER BY s.project, c.name, q.created_at, q.id",
    )?;
    let rows = stmt.query_map([project], |r| {
        let options: Vec<String> =
            r.get::<_, Option<String>>(7)?.and_then(|o| serde_json::from_str(&o).ok()).unwrap_or_default();
        let question_type: String = r.get(4)?;
        let correct: Option<String> = r.get(8)?;
        let follow_up = r.get::<_, Option<String>>(10)?.is_some();
        let explanation: String = r.get(9)?;
        let file: Option<String> = r.get(11)?;
        let (start, end): (Option<i64>, Option<i64>) = (r.get(12)?, r.get(13)?);
        let source: String = r.get(14)?;
        let tags: Vec<String> =
            r.get::<_, String>(15).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        let location = match (&file, start, end) {
            (Some(f), Some(a), Some(b)) => Some(format!("{f}:{a}-{b}")),
            (Some(f), _, _) => Some(f.clone()),
            _ => None,
        };
        let answer = correct.as_deref().map(|c| answer_in_words(&question_type, c, &options));
        Ok(ExportCard {
            id: r.get(0)?,
            project: r.get(1)?,
            concept: r.get(2)?,
            category: r.get(3)?,
            language: export::language_of(file.as_deref().unwrap_or(&source)).map(str::to_owned),
            question_type,
            question: r.get(5)?,
            snippet: r.get(6)?,
            options,
            answer: answer.or_else(|| follow_up.then(|| "(no model answer)".to_owned())),
            // A follow-up without its own answer shows none of its parent's explanation.
            explanation: (!(follow_up && correct.is_none())).then_some(explanation),
            location,
            tags,
        })
    })?;
    rows.collect()
}

/// The answer as a reader wants it: the option's letter and text, the steps in order.
fn answer_in_words(question_type: &str, correct: &str, options: &[String]) -> String {
    match question_type {
        "multiple_choice" => {
            let c = correct.trim();
            let index = (c.len() == 1).then(|| c.chars().next()).flatten().filter(char::is_ascii_alphabetic);
            match index
                .map(|l| usize::from(l.to_ascii_uppercase() as u8 - b'A'))
                .and_then(|i| options.get(i).map(|o| (i, o)))
            {
                Some((i, option)) => format!("{}) {option}", char::from(b'A' + i as u8)),
                None => c.to_owned(),
            }
        }
        "ordering" => {
            let steps: Vec<String> = correct
                .split(|ch: char| ch == ',' || ch.is_whitespace())
                .filter_map(|n| n.trim().parse::<usize>().ok())
                .filter_map(|n| options.get(n.wrapping_sub(1)).cloned())
                .collect();
            if steps.is_empty() { correct.to_owned() } else { format!("{correct}: {}", steps.join(" → ")) }
        }
        _ => correct.to_owned(),
    }
}
