//! The LLM path is held to SPEC §6.4's precision rules (issue 31, point 7): a real worker with
//! the Anthropic provider pointed at a fake Messages API on 127.0.0.1. The first questions
//! answer breaks rules 4 and 5 (JavaScript words in a Python session, "look at" something the
//! question does not show), or rule 3 (an ordering over statements none of which is the one
//! that carries the concept); the validator refuses those questions and asks once more, with
//! the reasons, and what is stored is the repaired answer.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_http::FakeServer;
use crate::hooks::db_rows;
use crate::pipeline::{STEPS, anthropic, llm_worker, request_steps, wait_step};
use crate::util::TempDir;

const STORE: &str = "import os\nfrom contextlib import contextmanager\n\n\n@contextmanager\ndef atomic_write(path):\n    tmp = path + \".tmp\"\n    with open(tmp, \"w\") as fh:\n        yield fh\n    os.replace(tmp, path)\n";

/// The concepts answer: `name` cited at `snippet` of store.py, and two more of its lines.
fn concepts_about(name: &str, snippet: &str) -> Value {
    json!({
        "summary": {"what_was_built": "An atomic file writer", "developer_intent": "write files safely", "architecture_decisions": []},
        "concepts": [{"name": name, "category": "error_handling", "difficulty": "mid", "source_file": "store.py",
            "snippet": snippet, "why_it_matters": "Cleanup that always runs.", "confidence": 0.9},
            {"name": "Atomic file replacement", "category": "general", "difficulty": "mid", "source_file": "store.py",
            "snippet": "os.replace(tmp, path)", "why_it_matters": "Readers never see half a file.", "confidence": 0.8},
            {"name": "Generators", "category": "functional", "difficulty": "mid", "source_file": "store.py",
            "snippet": "yield fh", "why_it_matters": "The with block runs at the yield.", "confidence": 0.7}]
    })
}

fn question(text: &str, explanation: &str) -> Value {
    json!({"concept": "Context managers", "question_type": "true_false", "difficulty": "mid", "snippet": null,
        "question": text, "options": null, "correct": "true", "explanation": explanation, "follow_up": null, "tags": ["python"]})
}

/// A worker whose fake Messages API answers `concepts`, then `first` and `repaired` questions;
/// one session writing `file` = `content` runs its steps to the quiz. Returns the quiz job,
/// the repair prompt and the stored questions' (question, explanation, options).
fn run_with_repair(
    concepts: &Value,
    first: &Value,
    repaired: &Value,
    content: &str,
) -> (Value, String, Vec<Vec<Value>>) {
    run_with_repair_on("store.py", concepts, first, repaired, content)
}

/// `run_with_repair` with the session writing `path`.
fn run_with_repair_on(
    path: &str,
    concepts: &Value,
    first: &Value,
    repaired: &Value,
    content: &str,
) -> (Value, String, Vec<Vec<Value>>) {
    let dir = TempDir::new();
    let project = TempDir::new();
    let fake = FakeServer::start(vec![anthropic(concepts), anthropic(first), anthropic(repaired)], anthropic(repaired));
    let worker = llm_worker(&dir, &fake, &[]);
    let http = worker.http();
    let cwd = project.path().to_string_lossy().into_owned();
    let session = "llm-precision";
    let init = json!({"contentSessionId": session, "cwd": cwd, "prompt": "write an atomic writer"});
    assert_eq!(http.post("/api/sessions/init", &init).unwrap().0, 202);
    let write = json!({"contentSessionId": session, "cwd": cwd, "tool_name": "Write", "tool_use_id": "p-w1",
        "tool_input": {"file_path": format!("{cwd}/{path}"), "content": content}});
    assert_eq!(http.post("/api/sessions/observations", &write).unwrap().0, 202);
    request_steps(&http, session, &STEPS);
    let concepts = wait_step(&http, session, "analyze_concepts", "succeeded", Duration::from_secs(20));
    assert_eq!(concepts["attempt"], 1, "{concepts}");
    let quiz = wait_step(&http, session, "analyze_quiz", "succeeded", Duration::from_secs(20));
    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "concepts, questions, one repair");
    let repair = requests[2].json()["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(repair.contains("It was rejected because"), "{repair}");
    let stored =
        db_rows(dir.path(), "SELECT question, explanation, options FROM questions WHERE session_id = 'llm-precision'");
    (quiz, repair, stored)
}

#[test]
fn an_llm_question_that_breaks_a_precision_rule_is_sent_back_once_and_the_repair_is_stored() {
    let first = json!({"questions": [
        question("Look at `functools.wraps`. True or false: it keeps the wrapped function's name.", "It copies the metadata."),
        question("True or false: the temporary file is replaced only when the block succeeds.", "Run npm install and check package.json."),
    ]});
    let repaired = json!({"questions": [
        question("True or false: the temporary file is replaced only when the block succeeds.", "os.replace runs after the yield returns."),
    ]});
    let concepts = concepts_about("Context managers", "@contextmanager\ndef atomic_write(path):");
    let (quiz, repair, stored) = run_with_repair(&concepts, &first, &repaired, STORE);
    assert_eq!(quiz["result"]["rejected_before_repair"], 2, "{quiz}");
    assert!(repair.contains("look at `functools.wraps`, which the snippet does not show"), "{repair}");
    assert!(repair.contains("package.json"), "{repair}");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0][1], json!("os.replace runs after the yield returns."));
}

/// `save` uses the context manager in its `with` line; the other statements run around it.
const SAVER: &str = "import os\nfrom contextlib import contextmanager\n\n\n@contextmanager\ndef atomic_write(path):\n    tmp = path + \".tmp\"\n    with open(tmp, \"w\") as fh:\n        yield fh\n    os.replace(tmp, path)\n\n\ndef save(path, rows):\n    text = \",\".join(rows)\n    size = len(text)\n    print(\"saving\", size)\n    with atomic_write(path) as fh:\n        fh.write(text)\n    return size\n";

/// An ordering question about the context manager over lines 13-19 of `SAVER`.
fn ordering(steps: [&str; 4]) -> Value {
    json!({"concept": "Context managers and with", "question_type": "ordering", "difficulty": "mid", "snippet": null,
        "question": "Put these statements of `save` in the order they run.", "options": [steps[2], steps[0], steps[3], steps[1]],
        "correct": "2,4,1,3", "explanation": "They run top to bottom.", "follow_up": null, "tags": ["python"],
        "grounding": {"file": "store.py", "line_start": 13, "line_end": 19, "kind": "quote"}})
}

/// Rule 3 on the LLM path: an ordering question whose steps all run, in their order, but
/// leave out the `with` statement that carries the concept is refused and asked again.
#[test]
fn an_llm_ordering_without_the_statement_that_carries_the_concept_is_sent_back() {
    let concepts = concepts_about("Context managers and with", "with atomic_write(path) as fh:");
    let without = ordering(["text = \",\".join(rows)", "size = len(text)", "print(\"saving\", size)", "return size"]);
    let with =
        ordering(["size = len(text)", "print(\"saving\", size)", "with atomic_write(path) as fh:", "return size"]);
    let (quiz, repair, stored) =
        run_with_repair(&concepts, &json!({"questions": [without]}), &json!({"questions": [with]}), SAVER);
    assert_eq!(quiz["result"]["rejected_before_repair"], 1, "{quiz}");
    assert!(repair.contains("none of the steps is the statement that carries Context managers and with"), "{repair}");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0][2].as_str().unwrap_or_default().contains("with atomic_write(path) as fh:"), "{stored:?}");
}

/// Two functions: the first's only `generic` is in a `cfg` name (issue 40), the second has a
/// type parameter.
const WIDTH: &str = "#[cfg(feature = \"generic-simd\")]\npub fn width(n: usize) -> usize {\n    n * 2\n}\n\npub fn first<T: Clone>(xs: &[T]) -> T {\n    xs[0].clone()\n}\n";

/// A code_reading question about Generics over lines `start..=end` of `WIDTH`.
fn generics_reading(start: u32, end: u32) -> Value {
    let snippet: Vec<&str> = WIDTH.lines().skip(start as usize - 1).take((end - start + 1) as usize).collect();
    json!({"concept": "Generics", "question_type": "code_reading", "difficulty": "mid", "snippet": snippet.join("\n"),
        "question": "What does this function accept, and why?", "options": null,
        "correct": "Any slice of a cloneable type: the caller picks the type.", "explanation": "The type is chosen per call.",
        "follow_up": null, "tags": ["rust"],
        "grounding": {"file": "width.rs", "line_start": start, "line_end": end, "kind": "quote"}})
}

/// Issue 40 §6 on the LLM path: a question naming Generics over a function whose only
/// `generic` is in a `cfg` name breaks "a concept is named only where its syntax is in the
/// snippet" (decided on the Rust grammar's tree); it is refused, asked once more with the
/// reason, and the job result counts it under its rule.
#[test]
fn an_llm_question_naming_a_concept_its_snippet_lacks_is_sent_back_and_counted_by_rule() {
    let concepts = json!({
        "summary": {"what_was_built": "Width helpers", "developer_intent": "helpers", "architecture_decisions": []},
        "concepts": [{"name": "Generics", "category": "type_system", "difficulty": "mid", "source_file": "width.rs",
            "snippet": "pub fn first<T: Clone>(xs: &[T]) -> T {", "why_it_matters": "One function for many types.",
            "confidence": 0.9},
            {"name": "Conditional compilation", "category": "general", "difficulty": "mid", "source_file": "width.rs",
            "snippet": "#[cfg(feature = \"generic-simd\")]", "why_it_matters": "Code built only with a feature.",
            "confidence": 0.8},
            {"name": "Cloning", "category": "general", "difficulty": "junior", "source_file": "width.rs",
            "snippet": "xs[0].clone()", "why_it_matters": "A copy the caller owns.", "confidence": 0.7}]
    });
    let (quiz, repair, stored) = run_with_repair_on(
        "width.rs",
        &concepts,
        &json!({"questions": [generics_reading(1, 4)]}),
        &json!({"questions": [generics_reading(6, 8)]}),
        WIDTH,
    );
    assert_eq!(quiz["result"]["rejected_before_repair"], 1, "{quiz}");
    assert_eq!(quiz["result"]["refused_before_repair"], json!({"precision: concept not in snippet": 1}), "{quiz}");
    assert_eq!(quiz["result"]["refused"], json!({}), "{quiz}");
    assert!(repair.contains("Generics needs a type-parameter list in the code shown"), "{repair}");
    assert_eq!(stored.len(), 1, "{stored:?}");
}

/// A multiple choice about the context manager whose keyed option is `correct`.
fn choice(correct: &str) -> Value {
    json!({"concept": "Context managers", "question_type": "multiple_choice", "difficulty": "mid", "snippet": null,
        "question": "What makes the replacement safe if writing fails?",
        "options": [correct, "The file is flushed twice", "The temporary name is random", "Python retries the write"],
        "correct": "A", "explanation": "os.replace runs only after the with block completes.", "follow_up": null,
        "tags": ["python"]})
}

/// Issue 40 §2 on the LLM path: another language's name is allowed only as a labelled aside,
/// never as the answer; an answer that is an aside is refused, counted under its rule and asked
/// once more, and the repair (the aside in the explanation) is stored.
#[test]
fn an_llm_answer_that_is_another_languages_aside_is_sent_back_and_an_aside_in_the_explanation_is_kept() {
    let concepts = concepts_about("Context managers", "@contextmanager\ndef atomic_write(path):");
    let first = json!({"questions": [choice("Elsewhere: in Go, defer.")]});
    let mut repaired = choice("os.replace runs only after the block exits without an error");
    repaired["explanation"] = json!(
        "The yield hands the file to the block; os.replace follows it. Elsewhere: in Go, defer; in C#, a using statement."
    );
    let (quiz, repair, stored) = run_with_repair(&concepts, &first, &json!({"questions": [repaired]}), STORE);
    assert_eq!(quiz["result"]["refused_before_repair"], json!({"precision: language": 1}), "{quiz}");
    assert!(repair.contains("the answer is an aside about another language"), "{repair}");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0][1].as_str().unwrap_or_default().ends_with("in C#, a using statement."), "{stored:?}");
}
