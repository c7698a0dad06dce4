//! A fake Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI: it streams
//! (SSE, chunked, one event per chunk, flushed) the turns of a scripted session, and records
//! every request. The script advances by what the CLI sends back: the answer to a request is
//! the turn after as many tool results as the request's messages hold, so the CLI's own
//! retries or side calls never skip a step.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One assistant turn: its content blocks and stop reason.
#[derive(Clone, Debug)]
pub struct Turn {
    pub blocks: Vec<Value>,
    pub stop_reason: &'static str,
}

impl Turn {
    pub fn tool(id: &str, name: &str, input: Value) -> Turn {
        Turn {
            blocks: vec![json!({"type": "tool_use", "id": id, "name": name, "input": input})],
            stop_reason: "tool_use",
        }
    }

    pub fn text(text: &str) -> Turn {
        Turn { blocks: vec![json!({"type": "text", "text": text})], stop_reason: "end_turn" }
    }
}

/// A request as received: method, path, JSON body.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub body: Value,
}

#[derive(Clone)]
pub struct FakeMessages {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeMessages {
    /// Serves `turns` (the last one repeats) until the test process ends.
    pub fn start(turns: Vec<Turn>) -> FakeMessages {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake Messages API");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = FakeMessages { url, seen: Arc::clone(&seen) };
        let turns = Arc::new(turns);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, turns) = (Arc::clone(&seen), Arc::clone(&turns));
                std::thread::spawn(move || serve(stream, &seen, &turns));
            }
        });
        server
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Tool results in a request's messages: how far the session got.
fn tool_results(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|c| c["type"] == "tool_result")
        .count()
}

/// The SSE events of one streamed message.
fn events(turn: &Turn, model: &str) -> Vec<Value> {
    let mut events = vec![json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
        "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 1}}})];
    for (index, block) in turn.blocks.iter().enumerate() {
        if block["type"] == "text" {
            events.push(
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            );
            // Streamed in two deltas, as a model would.
            let text = block["text"].as_str().unwrap_or("");
            let (a, b) = text.split_at(text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i));
            for part in [a, b] {
                events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": part}}));
            }
        } else {
            let start = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
            events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
            let input = block["input"].to_string();
            let (a, b) = input.split_at(input.len() / 2);
            for part in [a, b] {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": part}}));
            }
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": turn.stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 9}}));
    events.push(json!({"type": "message_stop"}));
    events
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, turns: &[Turn]) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
        let (mut length, mut chunked) = (0usize, false);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end().to_ascii_lowercase();
            if header.is_empty() {
                break;
            }
            if let Some(v) = header.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if header.starts_with("transfer-encoding:") && header.contains("chunked") {
                chunked = true;
            }
        }
        let Some(body) = read_body(&mut reader, length, chunked) else { return };
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        seen.lock().unwrap().push(Seen { method: method.clone(), path: path.clone(), body: request.clone() });
        let answered = if method == "POST" && path.starts_with("/v1/messages") && !path.contains("count_tokens") {
            let turn = if request["tools"].as_array().is_some_and(|t| !t.is_empty()) {
                turns[tool_results(&request).min(turns.len() - 1)].clone()
            } else {
                // A side call (a title, a summary): a short answer, never a step.
                Turn::text("Cart total")
            };
            let model = request["model"].as_str().unwrap_or("claude-fake");
            if request["stream"] == true {
                stream_sse(&mut writer, &events(&turn, model))
            } else {
                json_message(&mut writer, &turn, model)
            }
        } else if path.contains("count_tokens") {
            respond(&mut writer, 200, &json!({"input_tokens": 12}))
        } else {
            respond(
                &mut writer,
                404,
                &json!({"type": "error", "error": {"type": "not_found_error", "message": "fake"}}),
            )
        };
        if answered.is_err() {
            return;
        }
    }
}

fn read_body(reader: &mut BufReader<TcpStream>, length: usize, chunked: bool) -> Option<Vec<u8>> {
    if !chunked {
        let mut body = vec![0u8; length];
        return reader.read_exact(&mut body).ok().map(|_| body);
    }
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0u8; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn respond(writer: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    write!(
        writer,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn json_message(writer: &mut TcpStream, turn: &Turn, model: &str) -> std::io::Result<()> {
    respond(
        writer,
        200,
        &json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": turn.blocks,
            "stop_reason": turn.stop_reason, "stop_sequence": null, "usage": {"input_tokens": 12, "output_tokens": 9}}),
    )
}

/// Server-sent events over a chunked response: one event per chunk, flushed, a moment apart.
fn stream_sse(writer: &mut TcpStream, events: &[Value]) -> std::io::Result<()> {
    write!(
        writer,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    )?;
    for event in events {
        let data = format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or("message"));
        write!(writer, "{:x}\r\n{data}\r\n", data.len())?;
        writer.flush()?;
        std::thread::sleep(Duration::from_millis(2));
    }
    write!(writer, "0\r\n\r\n")?;
    writer.flush()
}
