//! What an LLM is shown of a large session (issue 43 §3): a 1,000-file session recorded
//! through the worker's HTTP ingest, whose failing test and fixed file sort late in the
//! alphabet, analysed by a real worker against a fake Anthropic API on 127.0.0.1 that keeps
//! every prompt. Both prompts hold the failing test and the fixed file, not the alphabet's
//! first files, within the same bound as before.

use std::time::Duration;

use serde_json::json;

use crate::fake_http::FakeServer;
use crate::pipeline::{STEPS, anthropic, llm_worker, request_steps};
use crate::util::{Http, TempDir, wait_for};

const FILES: usize = 1_000;
/// The bound the prompts kept before (12 files of at most 4,000 characters, the patterns and
/// the rest): ~61 KB at any size, measured in issue 43.
const PROMPT_BOUND: usize = 64 * 1024;
const TEST_FILE: &str = "tests/test_cart.py";
const FIXED_FILE: &str = "src/shop/cart.py";
const FIXED: &str = "def cart_total(items):\n    return sum(item.price * item.quantity for item in items)\n";

/// A module of ~3 KB (so twelve of them fill the bound) with one function.
fn module(i: usize) -> String {
    let doc: String = (0..40).map(|n| format!("Line {n} of the notes of module {i}, kept for its size.\n")).collect();
    format!("\"\"\"{doc}\"\"\"\n\ndef helper_{i}(value):\n    return value + {i}\n")
}

fn concepts_answer() -> serde_json::Value {
    json!({
        "summary": {"what_was_built": "a shop", "developer_intent": "fix the cart total", "architecture_decisions": []},
        "concepts": [
            {"name": "Generator expressions", "category": "functional_pattern", "difficulty": "junior",
             "source_file": FIXED_FILE, "snippet": "return sum(item.price * item.quantity for item in items)",
             "why_it_matters": "Summing without a list.", "confidence": 0.9},
            {"name": "Assertions in tests", "category": "testing", "difficulty": "junior",
             "source_file": TEST_FILE, "snippet": "assert cart_total([]) == 0",
             "why_it_matters": "A test states what must hold.", "confidence": 0.9},
            {"name": "Absolute imports", "category": "architecture_pattern", "difficulty": "junior",
             "source_file": TEST_FILE, "snippet": "from src.shop.cart import cart_total",
             "why_it_matters": "Where a name comes from.", "confidence": 0.8}
        ]
    })
}

fn questions_answer() -> serde_json::Value {
    json!({"questions": [{"concept": "Generator expressions", "question_type": "true_false", "difficulty": "junior",
        "snippet": null, "question": "sum() can take a generator expression.", "options": null, "correct": "true",
        "explanation": "It takes any iterable.", "follow_up": "What does it start from?", "tags": ["functional"]}]})
}

/// The user prompt of each request the fake received, by kind.
fn prompts(fake: &FakeServer, marker: &str) -> Vec<String> {
    fake.requests()
        .iter()
        .filter_map(|r| r.json()["messages"][0]["content"].as_str().map(str::to_owned))
        .filter(|p| p.contains(marker))
        .collect()
}

fn record_session(http: &Http, session: &str, cwd: &str) {
    let post = |path: &str, body: serde_json::Value| {
        let (status, reply) = http.post(path, &body).unwrap();
        assert_eq!(status, 202, "{path}: {reply}");
    };
    post("/api/sessions/init", json!({"contentSessionId": session, "cwd": cwd, "prompt": "fix the cart total"}));
    let write = |id: String, path: &str, content: String| {
        json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Write", "tool_use_id": id,
               "tool_input": {"file_path": format!("{cwd}/{path}"), "content": content}})
    };
    let test = "from src.shop.cart import cart_total\n\ndef test_total():\n    assert cart_total([]) == 0\n";
    post("/api/sessions/observations", write("w-test".into(), TEST_FILE, test.into()));
    post(
        "/api/sessions/observations",
        write("w-cart".into(), FIXED_FILE, "def cart_total(items):\n    return 0\n".into()),
    );
    for i in 0..FILES - 2 {
        post("/api/sessions/observations", write(format!("w{i}"), &format!("app/module_{i:03}.py"), module(i)));
    }
    post(
        "/api/sessions/observations",
        json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Bash", "tool_use_id": "pytest",
               "tool_input": {"command": "pytest -q"},
               "error": format!("FAILED {TEST_FILE}::test_total - AssertionError: assert 3 == 4\n1 failed in 0.12s")}),
    );
    post("/api/sessions/observations", write("w-fix".into(), FIXED_FILE, FIXED.into()));
}

#[test]
fn a_thousand_file_sessions_prompts_hold_its_failing_test_and_its_fixed_file_within_the_bound() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let fake = FakeServer::start(vec![], anthropic(&questions_answer()));
    fake.set_responder(|request| {
        let concepts = String::from_utf8_lossy(&request.body).contains("Extract the programming concepts");
        if concepts { anthropic(&concepts_answer()) } else { anthropic(&questions_answer()) }
    });
    let worker = llm_worker(&dir, &fake, &[]);
    let http = Http::new(worker.port).with_key(dir.path());
    let cwd = project.path().to_string_lossy().into_owned();
    record_session(&http, "big", &cwd);
    wait_for("the session's files to be stored", Duration::from_secs(60), || {
        let rows = crate::hooks::db_rows(dir.path(), "SELECT COUNT(*) FROM observations WHERE obs_type = 'file_edit'");
        rows[0][0].as_i64() == Some(FILES as i64 + 1)
    });
    request_steps(&http, "big", &STEPS);
    let pipeline = || http.get("/api/vibelearn/sessions/big/pipeline").unwrap().1;
    let concepts_dead = || crate::pipeline::step(&pipeline(), "analyze_concepts")["state"] == "dead";
    wait_for("the quiz prompt", Duration::from_secs(90), || {
        !prompts(&fake, "Write one quiz question").is_empty() || concepts_dead()
    });
    assert!(!concepts_dead(), "the concepts step failed: {}", pipeline());

    let concepts = prompts(&fake, "Extract the programming concepts");
    let questions = prompts(&fake, "Write one quiz question");
    for (name, prompt) in [("concepts", &concepts[0]), ("questions", &questions[0])] {
        for file in [TEST_FILE, FIXED_FILE] {
            assert!(prompt.contains(&format!("=== {file} ===")), "the {name} prompt shows {file}");
        }
        assert!(!prompt.contains("=== app/module_000.py ==="), "the {name} prompt is not the alphabet's first files");
        assert!(prompt.len() <= PROMPT_BOUND, "the {name} prompt is {} bytes", prompt.len());
        let shown = prompt.matches("\n=== ").count();
        assert!(shown <= 12 + 1, "the {name} prompt shows {shown} files and errors");
    }
    assert!(concepts[0].contains(FIXED.lines().nth(1).unwrap()), "the fixed file as it is now");
    assert!(concepts[0].contains("FAILED tests/test_cart.py::test_total"), "with the failure");
}
