//! Grounded questions end to end (issue 16): an LLM faked on 127.0.0.1 answers with one
//! grounded question and three whose code or answer key does not check out against the
//! session's file; the worker asks for one repair with the reasons, stores what verifies with
//! its grounding, counts the drops, and the summary reports the grounded share.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::FakeServer;
use crate::hooks::db_rows;
use crate::pipeline::{STEPS, anthropic, concepts_answer, llm_worker, request_steps, seed_session, wait_step};
use crate::util::TempDir;

const FETCH: &str = "const response = await fetch(`/api/cart/${userId}`);";

fn question(concept: &str, qtype: &str, difficulty: &str, snippet: Option<&str>, correct: &str) -> Value {
    json!({"concept": concept, "question_type": qtype, "difficulty": difficulty, "snippet": snippet,
           "question": format!("About {concept}: what does this code do?"), "options": null, "correct": correct,
           "explanation": "See the line.", "follow_up": "And then?", "tags": []})
}

fn grounded(mut q: Value, lines: (u32, u32), kind: &str, mutation: Option<Value>) -> Value {
    q["grounding"] =
        json!({"file": "src/cart.ts", "line_start": lines.0, "line_end": lines.1, "kind": kind, "mutation": mutation});
    q
}

/// A code_reading question quoting `snippet` as line `line` of src/cart.ts.
fn quoting(concept: &str, difficulty: &str, snippet: &str, line: u32) -> Value {
    grounded(question(concept, "code_reading", difficulty, Some(snippet), "See the code."), (line, line), "quote", None)
}

fn quote() -> Value {
    quoting("Array reduce", "junior", "return items.reduce((sum, item) => sum + item.quantity * item.price, 0);", 8)
}

/// Claims line 13, which calls `fetch`, not `axios`.
fn fabricated() -> Value {
    quoting("Async error handling", "mid", "const response = await axios.get(`/api/cart/${userId}`);", 13)
}

fn blank(answer: &str) -> Value {
    // The whole interface: its first line alone would cut it (issue 31's rule 2).
    let snippet = "export ___ CartItem {\n  id: string;\n  quantity: number;\n  price: number;\n}";
    let q = question("TypeScript interfaces", "fill_in_blank", "junior", Some(snippet), answer);
    grounded(q, (1, 5), "blank", None)
}

fn mutation(second_line: &str) -> Value {
    let snippet = format!("const response = fetch(`/api/cart/${{userId}}`);\n    {second_line}");
    let q = question("Async error handling", "spot_the_bug", "mid", Some(&snippet), "Line 13 lost its await.");
    let edit = json!({"line": 13, "original": FETCH, "mutated": "const response = fetch(`/api/cart/${userId}`);"});
    grounded(q, (13, 14), "mutation", Some(edit))
}

fn no_code() -> Value {
    let mut q = question("Async error handling", "true_false", "mid", None, "true");
    q["question"] = json!("A rejected awaited promise inside try is caught by its catch.");
    q
}

#[test]
fn llm_questions_are_verified_against_the_session_files_repaired_once_and_the_drops_counted() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let first =
        json!({"questions": [quote(), fabricated(), blank("type"), mutation("return response.json();"), no_code()]});
    let repaired = json!({"questions": [
        quote(), fabricated(), blank("interface"), mutation("return await response.json();"), no_code()
    ]});
    let fake = FakeServer::start(
        vec![anthropic(&concepts_answer("src/cart.ts")), anthropic(&first), anthropic(&repaired)],
        crate::fake_http::Reply::raw(500, "{}"),
    );
    let worker = llm_worker(&dir, &fake, &[]);
    let http = worker.http();
    let session = seed_session(&http, "grounded", project.path());
    request_steps(&http, &session, &STEPS);
    let quiz = wait_step(&http, &session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let result = &quiz["result"];
    assert_eq!(
        (&result["questions"], &result["dropped"], &result["grounding_failures"], &result["rejected_before_repair"]),
        (&json!(4), &json!(1), &json!(1), &json!(3)),
        "{result}"
    );
    assert_eq!(result["grounded_by_kind"], json!({"blank": 1, "mutation": 1, "quote": 1}));
    assert!(result["drop_reasons"][0].as_str().unwrap().contains("is not found in lines 13-13 of src/cart.ts"));

    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "concepts, questions, one repair");
    let asked = requests[1].json()["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(asked.contains("=== src/cart.ts ===") && asked.contains("   8|   return items.reduce"), "{asked:.600}");
    let repair = requests[2].json()["messages"][0]["content"].as_str().unwrap().to_owned();
    for reason in [
        "It was rejected because",
        "is not found in lines 13-13 of src/cart.ts",
        "filling the blank with \"type\" does not give back lines 1-5",
        "reverting the mutation does not restore the file",
    ] {
        assert!(repair.contains(reason), "{reason} missing from the repair prompt");
    }

    let mut stored = db_rows(
        dir.path(),
        "SELECT question_type, grounding_kind, grounding_file, grounding_line_start, grounding_line_end, \
         grounding_mutation FROM questions WHERE session_id = 'grounded' ORDER BY question_type",
    );
    for row in &mut stored {
        // The mutation is stored as JSON text: compared as JSON.
        if let Some(text) = row[5].as_str() {
            row[5] = serde_json::from_str(text).unwrap();
        }
    }
    let null = Value::Null;
    assert_eq!(
        stored,
        vec![
            vec![json!("code_reading"), json!("quote"), json!("src/cart.ts"), json!(8), json!(8), null.clone()],
            vec![json!("fill_in_blank"), json!("blank"), json!("src/cart.ts"), json!(1), json!(5), null.clone()],
            vec![
                json!("spot_the_bug"),
                json!("mutation"),
                json!("src/cart.ts"),
                json!(13),
                json!(14),
                json!({"line": 13, "original": FETCH, "mutated": "const response = fetch(`/api/cart/${userId}`);"})
            ],
            vec![json!("true_false"), null.clone(), null.clone(), null.clone(), null.clone(), null],
        ]
    );
    let (_, summary) = http.get(&format!("/api/vibelearn/sessions/{session}/summary")).unwrap();
    assert_eq!(
        summary["grounding"],
        json!({"questions": 4, "grounded": 3, "share": 0.75, "by_kind": {"quote": 1, "blank": 1, "mutation": 1}})
    );
    let (_, due) = http.get(&format!("/api/vibelearn/questions/due?session={session}&limit=50")).unwrap();
    let blank_question = due["questions"].as_array().unwrap().iter().find(|q| q["question_type"] == "fill_in_blank");
    assert_eq!(
        blank_question.map(|q| q["grounding"].clone()),
        Some(json!({"file": "src/cart.ts", "line_start": 1, "line_end": 5, "kind": "blank", "mutation": null}))
    );
    let (_, sessions) = http.get("/api/sessions").unwrap();
    assert_eq!(sessions["sessions"][0]["grounded_questions"], 3);
}
