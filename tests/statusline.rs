//! Inside the IDE (issue 18, point 4): `vl statusline` for Claude Code's `statusLine`, the
//! SessionStart hook's one-line message when questions are due, and `vl install claude-code
//! --statusline` / `vl uninstall claude-code|cursor` giving the user their settings back.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::hooks::hook;
use crate::pipeline::{request_steps, seed_session, wait_step};
use crate::util::{TempDir, WorkerProcess, free_port, vl};

/// Runs `vl statusline` with `stdin`; asserts exit 0, one line, empty stderr; returns the line.
fn statusline(dir: &Path, stdin: &[u8], env: &[(&str, &str)]) -> String {
    let mut child = vl(dir, free_port())
        .arg("statusline")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert!(output.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    stdout.trim_end().to_owned()
}

fn status_json(project: &Path) -> Vec<u8> {
    json!({"hook_event_name": "Status", "session_id": "x", "cwd": project.join("src"), "model": {"id": "m", "display_name": "M"},
        "workspace": {"current_dir": project.join("src"), "project_dir": project}, "version": "2.1.0"})
    .to_string()
    .into_bytes()
}

#[test]
fn the_statusline_shows_what_is_due_for_the_project_and_never_fails() {
    let dir = TempDir::new();
    let project = TempDir::new();
    assert_eq!(statusline(dir.path(), &status_json(project.path()), &[]), "📚 VibeLearn: no sessions yet");
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let session = seed_session(&http, "sl1", project.path());
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let questions = crate::hooks::db_rows(dir.path(), "SELECT COUNT(*) FROM questions")[0][0].as_i64().unwrap();
    let concepts = crate::hooks::db_rows(dir.path(), "SELECT COUNT(DISTINCT normalized_name) FROM concepts")[0][0]
        .as_i64()
        .unwrap();
    assert!(questions > 1);
    // Due is what `vl quiz` asks now: the new cards within the day's cap (20).
    let due = questions.min(20);
    let here = statusline(dir.path(), &status_json(project.path()), &[]);
    assert_eq!(
        here,
        format!("📚 {due} questions due · vl quiz · {concepts} concepts here (0 mastered, {concepts} learning)")
    );
    // Another project with nothing yet: the totals of all projects.
    let elsewhere = TempDir::new();
    assert_eq!(
        statusline(dir.path(), &status_json(elsewhere.path()), &[]),
        format!("📚 {due} questions due · vl quiz · {concepts} concepts (0 mastered, {concepts} learning)")
    );
    // Mastered as `vl status` judges it (`learning::mastery`): a concept whose two cards are
    // answered and mature (FSRS stability of 21 days or more).
    let conn = rusqlite::Connection::open(dir.path().join("vibelearn.db")).unwrap();
    let mastered: String = conn
        .query_row("SELECT concept_id FROM questions GROUP BY concept_id ORDER BY COUNT(*) DESC LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    // Mastery needs two answered cards; fewer, truer questions may leave every concept one, so
    // a second card (a copy under another id, as a later session's question would be) is added.
    let columns = crate::util::question_columns(&conn);
    let copied: Vec<String> = columns
        .iter()
        .map(|c| match c.as_str() {
            "id" | "text_hash" => format!("{c} || '-second'"),
            other => other.to_owned(),
        })
        .collect();
    conn.execute(
        &format!(
            "INSERT INTO questions ({}) SELECT {} FROM questions WHERE concept_id = ?1 AND \
             (SELECT COUNT(*) FROM questions WHERE concept_id = ?1) < 2",
            columns.join(", "),
            copied.join(", ")
        ),
        [&mastered],
    )
    .unwrap();
    conn.execute(
        "UPDATE questions SET card_state = 'review', stability = 40, fsrs_difficulty = 5, reps = 1, \
         last_review_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000, due_at = 4000000000000 WHERE concept_id = ?1",
        [&mastered],
    )
    .unwrap();
    let cap_five = [("VIBELEARN_NEW_PER_DAY", "5")];
    let line = statusline(dir.path(), &status_json(project.path()), &cap_five);
    let learning = concepts - 1;
    // The new cards left, at most the day's five (the deck's size follows what the builder writes).
    let left: i64 =
        conn.query_row("SELECT COUNT(*) FROM questions WHERE concept_id != ?1", [&mastered], |r| r.get(0)).unwrap();
    let due = left.min(5);
    assert_eq!(
        line,
        format!(
            "📚 {due} question{} due · vl quiz · {concepts} concepts here (1 mastered, {learning} learning)",
            if due == 1 { "" } else { "s" }
        )
    );
    let status = String::from_utf8(vl(dir.path(), worker.port).arg("status").output().unwrap().stdout).unwrap();
    assert!(status.contains(&format!("{concepts} (1 mastered, {learning} learning)")), "{status}");
    // A prefix of the project's name is another project.
    let sibling = format!("{}-other", project.path().display());
    let sibling_line = statusline(dir.path(), json!({"cwd": sibling}).to_string().as_bytes(), &[]);
    assert!(!sibling_line.ends_with("here"), "{sibling_line}");
    // Garbage or no stdin: still one line.
    assert!(statusline(dir.path(), b"not json", &[]).starts_with("📚"));
    assert!(statusline(dir.path(), b"", &[]).starts_with("📚"));
    // A database it cannot read: still one line, nothing on stderr.
    let broken = TempDir::new();
    std::fs::write(broken.path().join("vibelearn.db"), b"this is not a database").unwrap();
    assert!(statusline(broken.path(), &status_json(project.path()), &[]).starts_with("📚 VibeLearn"));
    // Fast: straight from SQLite, never waiting on the worker. Timed against what five bare
    // starts of `vl` cost here, since that is most of it: a few ms natively (bench), a few
    // hundred under wine. Generous, for a loaded CI machine.
    let five = |run: &dyn Fn()| {
        let started = Instant::now();
        (0..5).for_each(|_| run());
        started.elapsed()
    };
    let starts = five(&|| assert!(vl(dir.path(), worker.port).arg("--version").output().unwrap().status.success()));
    let lines = five(&|| {
        statusline(dir.path(), &status_json(project.path()), &[]);
    });
    assert!(lines < starts * 3 + Duration::from_secs(1), "{lines:?} for 5 runs, where 5 starts of vl took {starts:?}");
}

#[test]
fn session_start_says_when_questions_are_due_unless_turned_off() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let start =
        json!({"session_id": "ss1", "cwd": project.path(), "hook_event_name": "SessionStart", "source": "startup"});
    let line = hook(dir.path(), worker.port, "claude-code", "session-start", start.to_string().as_bytes(), &[]);
    assert_eq!(line, json!({"continue": true, "suppressOutput": true}), "nothing due, no message; known keys only");
    let http = worker.http();
    let session = seed_session(&http, "ss0", project.path());
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let line = hook(dir.path(), worker.port, "claude-code", "session-start", start.to_string().as_bytes(), &[]);
    let message = line["systemMessage"].as_str().unwrap_or_else(|| panic!("{line}"));
    assert!(
        message.starts_with("VibeLearn: ") && message.contains("due from this project") && message.contains("vl quiz")
    );
    assert!(!message.contains('\n'), "one line");
    let off = [("VIBELEARN_SESSION_START_MESSAGE", "false")];
    let line = hook(dir.path(), worker.port, "claude-code", "session-start", start.to_string().as_bytes(), &off);
    assert!(line.get("systemMessage").is_none(), "{line}");
}

fn run(home: &Path, args: &[&str]) -> String {
    let output = vl(home, free_port()).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn install_with_statusline_then_uninstall_gives_the_settings_back() {
    let home = TempDir::new();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = json!({"model": "opus", "statusLine": {"type": "command", "command": "~/bin/my-status"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}});
    std::fs::write(&settings, original.to_string()).unwrap();
    let out = run(home.path(), &["install", "claude-code", "--statusline"]);
    assert!(out.contains("installed 6 Claude Code hooks") && out.contains("previous status line is kept"), "{out}");
    let installed = read(&settings);
    let command = installed["statusLine"]["command"].as_str().unwrap();
    assert!(command.ends_with(&format!("vl{} statusline", std::env::consts::EXE_SUFFIX)), "{installed}");
    assert_eq!(installed["hooks"]["Stop"].as_array().unwrap().len(), 2);
    // The installed status line works as Claude Code would run it.
    let command = installed["statusLine"]["command"].as_str().unwrap().to_owned();
    let output = vibelearn::platform::shell_command(&command)
        .env("VIBELEARN_DATA_DIR", home.path())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "📚 VibeLearn: no sessions yet");
    let out = run(home.path(), &["uninstall", "claude-code"]);
    assert!(out.contains("removed 6 Claude Code hooks") && out.contains("previous status line is back"), "{out}");
    assert_eq!(read(&settings), original);
    assert!(run(home.path(), &["uninstall", "claude-code"]).contains("nothing changed"));

    // Cursor, for a project; and the user's file, which never existed.
    let project = TempDir::new();
    let hooks = project.path().join(".cursor/hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    let cursor_original = json!({"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}});
    std::fs::write(&hooks, cursor_original.to_string()).unwrap();
    let dir = project.path().to_str().unwrap();
    run(home.path(), &["install", "cursor", "--project", dir]);
    assert_eq!(read(&hooks)["hooks"]["afterFileEdit"].as_array().unwrap().len(), 2);
    assert!(run(home.path(), &["uninstall", "cursor", "--project", dir]).contains("removed 7 Cursor hooks"));
    assert_eq!(read(&hooks), cursor_original);
    assert!(run(home.path(), &["uninstall", "cursor"]).contains("nothing to remove"));
}

/// The worker keeps every concept's judgement (`learning::kept_standings`: its maintenance task
/// at start and every minute), the statusline reads the kept rows, and a card changed by hand
/// afterwards forgets its concept's row (migration 0020's triggers), so the line stays true.
#[test]
fn the_worker_keeps_each_concepts_standing_and_a_changed_card_forgets_it() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let mut worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let session = seed_session(&http, "kept1", project.path());
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    worker.terminate();
    let count = |sql: &str| crate::hooks::db_rows(dir.path(), sql)[0][0].as_i64().unwrap();
    let names = count("SELECT COUNT(DISTINCT normalized_name) FROM concepts");
    assert!(names > 1, "{names}");
    // The quiz job wrote cards after the worker's first run, whose rows the triggers forgot:
    // the next worker keeps them all at its start.
    let worker = WorkerProcess::start(dir.path());
    crate::util::wait_for("every concept kept", Duration::from_secs(20), || {
        count("SELECT COUNT(*) FROM concept_standings WHERE standing IS NOT NULL") == names
    });
    let due = count("SELECT COUNT(*) FROM questions").min(20);
    let expected = format!("📚 {due} questions due · vl quiz · {names} concepts here (0 mastered, {names} learning)");
    assert_eq!(statusline(dir.path(), &status_json(project.path()), &[]), expected);
    // One concept's every card answered long ago, by hand: its judgement is forgotten, and the
    // line says gap.
    let conn = rusqlite::Connection::open(dir.path().join("vibelearn.db")).unwrap();
    let concept: String = conn.query_row("SELECT MIN(concept_id) FROM questions", [], |r| r.get(0)).unwrap();
    conn.execute(
        "UPDATE questions SET card_state = 'review', stability = 1, fsrs_difficulty = 5, reps = 1, \
         last_review_at = 1000, due_at = 2000 WHERE concept_id = ?1",
        [&concept],
    )
    .unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM concept_standings WHERE standing IS NOT NULL"), names - 1);
    let line = statusline(dir.path(), &status_json(project.path()), &[]);
    assert!(line.ends_with(&format!("{names} concepts here (0 mastered, {} learning, 1 gap)", names - 1)), "{line}");
    drop(worker);
}
