//! Failed tool calls (issue 18, point 2): Claude Code's PostToolUseFailure and Cursor's
//! postToolUseFailure / non-zero shell exits are stored as observations of the failed call with
//! the error (privacy-stripped, cut like every capture) and outcome `failed`; the offline
//! provider and an LLM provider ground a concept in the error, and the quiz asks about it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::FakeServer;
use crate::hooks::{db_rows, hook};
use crate::pipeline::{anthropic, llm_worker, questions_answer, request_steps, seed_session, wait_step};
use crate::util::{TempDir, WorkerProcess, wait_for};

const MARKER: &str = "MARKER-failure-9d2e-PRIVATE";
const TSC_ERROR: &str = "src/cart.ts(9,7): error TS2322: Type 'string' is not assignable to type 'number'.";

fn wait_for_ingest(dir: &std::path::Path, count: i64) {
    wait_for("the events to be stored", Duration::from_secs(20), || {
        db_rows(dir, "SELECT COUNT(*) FROM observations")[0][0].as_i64() == Some(count)
    });
}

#[test]
fn a_claude_code_failure_is_stored_with_its_error_private_free_and_cut_to_ten_kib() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let cwd = project.path().to_str().unwrap();
    let base = json!({"session_id": "f1", "cwd": cwd, "transcript_path": "/nonexistent", "permission_mode": "default"});
    let with = |extra: Value| {
        let mut v = base.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    let long_error = format!("{TSC_ERROR}\n<private>{MARKER}</private>\n{}", "x".repeat(12 * 1024));
    let inputs = [
        json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t1",
               "tool_input": {"command": "npx tsc --noEmit", "description": "type check"},
               "error": long_error, "is_interrupt": false}),
        json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Edit", "tool_use_id": "t2",
               "tool_input": {"file_path": format!("{cwd}/src/cart.ts"), "old_string": "nope", "new_string": "x"},
               "error": "String to replace not found in file."}),
        json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t3",
               "tool_input": {"command": "npm run dev"}, "error": "Interrupted by user", "is_interrupt": true}),
        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t4",
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "src", "stderr": ""}}),
    ];
    for input in inputs {
        assert_eq!(
            hook(dir.path(), worker.port, "claude-code", "observation", with(input).as_bytes(), &[]),
            json!({"continue": true})
        );
    }
    wait_for_ingest(dir.path(), 4);
    let rows = db_rows(
        dir.path(),
        "SELECT tool_use_id, obs_type, outcome, error, truncated, content, output, command FROM observations ORDER BY id",
    );
    let (tsc, edit, interrupt, ls) = (&rows[0], &rows[1], &rows[2], &rows[3]);
    assert_eq!((tsc[1].as_str(), tsc[2].as_str()), (Some("bash_command"), Some("failed")));
    assert_eq!(tsc[7], "npx tsc --noEmit");
    let error = tsc[3].as_str().unwrap();
    assert!(error.starts_with(TSC_ERROR), "{error:.200}");
    assert!(error.len() <= 10 * 1024, "the error is cut like other captures: {}", error.len());
    assert_eq!(tsc[4], json!(1), "and marked truncated");
    assert_eq!((edit[1].as_str(), edit[2].as_str()), (Some("file_edit"), Some("failed")));
    assert_eq!(edit[3], "String to replace not found in file.");
    assert_eq!(edit[5], Value::Null, "a failed edit wrote nothing");
    assert_eq!(interrupt[2], "failed");
    assert!(interrupt[6].as_str().unwrap().contains("\"is_interrupt\":true"));
    assert_eq!((ls[2].as_str(), ls[3].clone()), (Some("succeeded"), Value::Null));
    // The failed edit does not count as an edited file.
    let counts = vibelearn::jobs::session_data::file_counts(
        &rusqlite::Connection::open(dir.path().join("vibelearn.db")).unwrap(),
        "f1",
    )
    .unwrap();
    assert_eq!(counts, (0, 0));
    drop(worker);
    for file in ["vibelearn.db", "vibelearn.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(file)) {
            assert!(!bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()), "{file} holds private bytes");
        }
    }
}

#[test]
fn cursor_failures_and_non_zero_exits_are_recorded_as_failed_calls() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let base = json!({"conversation_id": "cf1", "generation_id": "g1", "workspace_roots": ["/tmp/cf1"], "cursor_version": "2.1.0"});
    let with = |extra: Value| {
        let mut v = base.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    let inputs = [
        json!({"hook_event_name": "postToolUseFailure", "tool_name": "Shell", "tool_use_id": "c1",
               "tool_input": {"command": "pytest"}, "error_message": "FAILED tests/test_todo.py::test_read - AssertionError",
               "failure_type": "error", "cwd": "/tmp/cf1"}),
        json!({"hook_event_name": "afterShellExecution", "command": "python main.py", "exit_code": 1,
               "output": "ModuleNotFoundError: No module named 'fastapi'", "duration": 80}),
        json!({"hook_event_name": "afterShellExecution", "command": "echo ok", "exit_code": 0, "output": "ok"}),
        json!({"hook_event_name": "afterShellExecution", "command": "ls", "output": "main.py"}),
    ];
    for input in inputs {
        assert_eq!(
            hook(dir.path(), worker.port, "cursor", "observation", with(input).as_bytes(), &[]),
            json!({"continue": true})
        );
    }
    wait_for_ingest(dir.path(), 4);
    let rows = db_rows(dir.path(), "SELECT tool_name, command, outcome, error, output FROM observations ORDER BY id");
    assert_eq!(rows[0][0], "Bash", "Cursor's shell tool is recorded as Bash");
    assert_eq!((rows[0][1].as_str(), rows[0][2].as_str()), (Some("pytest"), Some("failed")));
    assert_eq!(rows[0][3], "FAILED tests/test_todo.py::test_read - AssertionError");
    assert!(rows[0][4].as_str().unwrap().contains("\"failure_type\":\"error\""));
    assert_eq!(
        (rows[1][2].as_str(), rows[1][3].as_str()),
        (Some("failed"), Some("ModuleNotFoundError: No module named 'fastapi'"))
    );
    assert_eq!((rows[2][2].as_str(), rows[2][3].clone()), (Some("succeeded"), Value::Null), "exit 0 succeeded");
    assert_eq!(rows[3][2], "succeeded", "no exit status: as before");
    assert_eq!(db_rows(dir.path(), "SELECT platform FROM sessions")[0][0], "cursor");
}

#[test]
fn the_offline_provider_grounds_a_concept_in_an_error_and_the_quiz_asks_about_it() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let session = seed_session(&http, "f3", project.path());
    let cwd = project.path().to_str().unwrap();
    let failed = json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Bash", "tool_use_id": "f3-tsc",
        "tool_input": {"command": "npx tsc --noEmit"}, "outcome": "failed", "error": format!("{TSC_ERROR}\nFound 1 error.")});
    let (status, reply) = http.post("/api/sessions/observations", &failed).unwrap();
    assert_eq!(status, 202, "{reply}");
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let (_, summary) = http.get(&format!("/api/vibelearn/sessions/{session}/summary")).unwrap();
    let concepts = summary["concepts"].as_array().unwrap();
    let met =
        concepts.iter().find(|c| c["name"] == "Reading compiler type errors").unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(met["source_file"], "failed Bash: npx tsc --noEmit");
    assert!(met["snippet"].as_str().unwrap().contains("error TS2322"));
    assert!(concepts.len() >= 3, "code concepts too: {concepts:?}");
    let (_, due) = http.get(&format!("/api/vibelearn/questions/due?session={session}&limit=50")).unwrap();
    let question = due["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["concept"] == "Reading compiler type errors")
        .unwrap_or_else(|| panic!("no question about the error: {due}"));
    assert!(question["question"].as_str().unwrap().len() > 10);
}

#[test]
fn a_failure_and_the_edit_that_fixed_it_get_a_question_on_the_changed_line() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let session = seed_session(&http, "f5", project.path());
    let cwd = project.path().to_str().unwrap();
    let error = " FAIL  src/cart.test.ts > loadCart\nAssertionError: expected 'boom' to be 'loadCart failed'\n \u{276f} src/cart.test.ts:9:20";
    let failed = json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Bash", "tool_use_id": "f5-test",
        "tool_input": {"command": "npx vitest run"}, "outcome": "failed", "error": error});
    assert_eq!(http.post("/api/sessions/observations", &failed).unwrap().0, 202);
    // The fix: one line of the seeded cart rewritten.
    let files = crate::pipeline::CART.replace("console.error(error);", "console.error(\"loadCart failed\", error);");
    let fix = json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Write", "tool_use_id": "f5-w2",
        "tool_input": {"file_path": format!("{cwd}/src/cart.ts"), "content": files}});
    assert_eq!(http.post("/api/sessions/observations", &fix).unwrap().0, 202);
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let (_, due) = http.get(&format!("/api/vibelearn/questions/due?session={session}&limit=50")).unwrap();
    let questions = due["questions"].as_array().unwrap();
    // The error read as vitest prints it, quoted as it was.
    let reading = questions
        .iter()
        .find(|q| {
            q["question_type"] == "code_reading" && q["snippet"].as_str().is_some_and(|s| s.contains("AssertionError"))
        })
        .unwrap_or_else(|| panic!("no question on the error: {due}"));
    assert!(reading["question"].as_str().unwrap().contains("npx vitest run"), "{reading}");
    // The bug the fix removed: the line as it was, keyed by the fix.
    let bug = questions
        .iter()
        .find(|q| {
            q["question_type"] == "spot_the_bug"
                && q["snippet"].as_str().is_some_and(|s| s.contains("console.error(error);"))
        })
        .unwrap_or_else(|| panic!("no question on the fixed line: {due}"));
    assert!(bug["question"].as_str().unwrap().contains("as it was when `npx vitest run` failed"), "{bug}");
}

#[test]
fn an_llm_provider_is_shown_the_error_and_may_ground_a_concept_in_it() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let label = "failed Bash: npx tsc --noEmit";
    let answer = json!({
        "summary": {"what_was_built": "A cart module", "developer_intent": "add a cart", "architecture_decisions": []},
        "concepts": [
            {"name": "Array reduce", "category": "functional", "difficulty": "junior", "source_file": "src/cart.ts",
             "snippet": "return items.reduce((sum, item) => sum + item.quantity * item.price, 0);", "why_it_matters": "x", "confidence": 0.9},
            {"name": "TypeScript interfaces", "category": "types", "difficulty": "junior", "source_file": "src/cart.ts",
             "snippet": "export interface CartItem {", "why_it_matters": "x", "confidence": 0.85},
            {"name": "Assignability errors", "category": "type_system", "difficulty": "junior", "source_file": label,
             "snippet": "error TS2322: Type 'string' is not assignable to type 'number'.", "why_it_matters": "You met it.", "confidence": 0.8}
        ]
    });
    let mut questions = questions_answer();
    questions["questions"].as_array_mut().unwrap().push(json!({"concept": "Assignability errors", "question_type": "true_false",
        "difficulty": "junior", "snippet": TSC_ERROR, "question": "This error means a string value reached a place typed number.",
        "options": null, "correct": "true", "explanation": "TS2322 compares declared and actual types.", "follow_up": "Where would you fix it?", "tags": []}));
    // The questions answer has one invalid question: its repair gets the same answer again.
    let fake = FakeServer::start(vec![anthropic(&answer), anthropic(&questions)], anthropic(&questions));
    let worker = llm_worker(&dir, &fake, &[]);
    let http = worker.http();
    let session = seed_session(&http, "f4", project.path());
    let failed = json!({"contentSessionId": session, "tool_name": "Bash", "tool_use_id": "f4-tsc",
        "tool_input": {"command": "npx tsc --noEmit"}, "error": TSC_ERROR});
    assert_eq!(http.post("/api/sessions/observations", &failed).unwrap().0, 202);
    request_steps(&http, &session, &["stack", "static", "concepts", "quiz"]);
    wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let prompt = fake.requests()[0].json()["messages"][0]["content"].to_string();
    assert!(prompt.contains(label) && prompt.contains("error TS2322"), "the prompt shows the error: {prompt:.400}");
    let (_, summary) = http.get(&format!("/api/vibelearn/sessions/{session}/summary")).unwrap();
    let met = summary["concepts"].as_array().unwrap().iter().find(|c| c["name"] == "Assignability errors").cloned();
    assert_eq!(met.map(|c| c["source_file"].clone()), Some(json!(label)), "{summary}");
    let quiz_prompt = fake.requests()[1].json()["messages"][0]["content"].to_string();
    assert!(quiz_prompt.contains("comes from an error the developer met"), "{quiz_prompt:.300}");
    let (_, due) = http.get(&format!("/api/vibelearn/questions/due?session={session}&limit=50")).unwrap();
    assert!(due["questions"].as_array().unwrap().iter().any(|q| q["concept"] == "Assignability errors"), "{due}");
}
