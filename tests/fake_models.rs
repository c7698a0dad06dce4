//! Fakes of the three agents' model APIs on 127.0.0.1, for the real-CLI tests: Gemini's
//! `generateContent`/`streamGenerateContent`, OpenAI's Responses API (Codex,
//! `wire_api = "responses"`) and chat completions (Copilot CLI). Each answers a scripted
//! session — write a file, edit a line, two shell commands, a final answer — advancing by how
//! many tool results the request carries back, so side calls (Gemini's routing call, titles)
//! never skip a step. Every request is recorded.

use std::path::Path;

use serde_json::{Value, json};

use crate::fake_http::{FakeServer, Recorded, Reply};

/// One step of the scripted session.
#[derive(Clone, Debug)]
pub enum Step {
    Write { path: String, content: String },
    Edit { path: String, old: String, new: String },
    Shell(String),
    Text(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Gemini,
    Responses,
    Completions,
}

/// Starts the fake of `api` serving `steps` (the last one repeats).
pub fn start(api: Api, steps: Vec<Step>) -> FakeServer {
    let server = FakeServer::start(vec![], Reply::raw(404, "{}"));
    server.set_responder(move |request| match api {
        Api::Gemini => gemini(request, &steps),
        Api::Responses => responses(request, &steps),
        Api::Completions => completions(request, &steps),
    });
    server
}

fn step(steps: &[Step], done: usize) -> &Step {
    &steps[done.min(steps.len() - 1)]
}

fn sse(events: Vec<String>) -> Reply {
    Reply::raw(200, &events.concat()).with_header("Content-Type", "text/event-stream")
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn gemini(request: &Recorded, steps: &[Step]) -> Reply {
    let body = request.json();
    if request.method != "POST" || !request.path.contains("enerateContent") {
        return Reply::json(200, &json!({"models": []}));
    }
    let parts = if body["tools"].as_array().is_none_or(Vec::is_empty) {
        // A side call (routing, a next-speaker check): a short JSON answer.
        vec![json!({"text": "{\"reasoning\": \"scripted\", \"next_speaker\": \"user\", \"model_choice\": \"pro\"}"})]
    } else {
        let done = body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter(|p| p.get("functionResponse").is_some())
            .count();
        vec![match step(steps, done) {
            Step::Write { path, content } => {
                json!({"functionCall": {"name": "write_file", "args": {"file_path": path, "content": content}}})
            }
            Step::Edit { path, old, new } => json!({"functionCall": {"name": "replace",
                "args": {"file_path": path, "old_string": old, "new_string": new, "instruction": "rename"}}}),
            Step::Shell(command) => json!({"functionCall": {"name": "run_shell_command",
                "args": {"command": command, "description": command}}}),
            Step::Text(text) => json!({"text": text}),
        }]
    };
    let answer = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}});
    if request.path.contains(":streamGenerateContent") { sse(vec![data(&answer)]) } else { Reply::json(200, &answer) }
}

/// Codex's patch for a step, paths relative to the project.
fn patch(path: &str, body: &str, add: bool) -> String {
    let name = Path::new(path).file_name().map(|n| format!("src/{}", n.to_string_lossy())).unwrap_or_default();
    let kind = if add { "Add" } else { "Update" };
    format!("*** Begin Patch\n*** {kind} File: {name}\n{body}*** End Patch\n")
}

fn responses(request: &Recorded, steps: &[Step]) -> Reply {
    let body = request.json();
    if request.method != "POST" || !request.path.ends_with("/responses") {
        return Reply::json(200, &json!({"data": [], "models": []}));
    }
    let done = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .count();
    let call = format!("call_{done}");
    let item = match step(steps, done) {
        Step::Write { path, content } => {
            let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
            json!({"type": "custom_tool_call", "id": format!("ctc_{done}"), "call_id": call, "name": "apply_patch",
                "input": patch(path, &lines, true), "status": "completed"})
        }
        Step::Edit { path, old, new } => {
            let hunk = format!("@@\n-{old}\n+{new}\n");
            json!({"type": "custom_tool_call", "id": format!("ctc_{done}"), "call_id": call, "name": "apply_patch",
                "input": patch(path, &hunk, false), "status": "completed"})
        }
        Step::Shell(command) => json!({"type": "function_call", "id": format!("fc_{done}"), "call_id": call,
            "name": "exec_command", "arguments": json!({"cmd": command}).to_string()}),
        Step::Text(text) => json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    };
    let id = format!("resp_{done}");
    let event = |name: &str, value: Value| format!("event: {name}\ndata: {value}\n\n");
    sse(vec![
        event("response.created", json!({"type": "response.created", "response": {"id": id}})),
        event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        event(
            "response.completed",
            json!({"type": "response.completed", "response": {"id": id, "usage": {
            "input_tokens": 10, "input_tokens_details": null, "output_tokens": 5, "output_tokens_details": null,
            "total_tokens": 15}}}),
        ),
    ])
}

fn completions(request: &Recorded, steps: &[Step]) -> Reply {
    let body = request.json();
    if request.method != "POST" || !request.path.ends_with("/chat/completions") {
        return Reply::json(200, &json!({"data": []}));
    }
    let done = body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "tool").count();
    let call = |name: &str, args: Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{done}"),
            "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
    };
    let (delta, finish) = if body["tools"].as_array().is_none_or(Vec::is_empty) {
        (json!({"role": "assistant", "content": "A scripted session"}), "stop")
    } else {
        match step(steps, done) {
            Step::Write { path, content } => {
                (call("create", json!({"path": path, "file_text": content})), "tool_calls")
            }
            Step::Edit { path, old, new } => {
                (call("edit", json!({"path": path, "old_str": old, "new_str": new})), "tool_calls")
            }
            Step::Shell(command) => (
                call("bash", json!({"command": command, "description": command, "mode": "sync", "initial_wait": 30})),
                "tool_calls",
            ),
            Step::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        }
    };
    let base = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body["model"]});
    let chunk = |choice: Value, usage: bool| {
        let mut c = base.clone();
        c["choices"] = json!([choice]);
        if usage {
            c["usage"] = json!({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2});
        }
        data(&c)
    };
    if body["stream"] != true {
        let mut message = delta.clone();
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            calls.iter_mut().for_each(|c| {
                c.as_object_mut().map(|o| o.remove("index"));
            });
        }
        let mut whole = base.clone();
        whole["object"] = json!("chat.completion");
        whole["choices"] = json!([{"index": 0, "message": message, "finish_reason": finish}]);
        return Reply::json(200, &whole);
    }
    sse(vec![
        chunk(json!({"index": 0, "delta": delta, "finish_reason": null}), false),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": finish}), true),
        "data: [DONE]\n\n".to_owned(),
    ])
}
