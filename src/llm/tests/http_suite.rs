//! The one suite every HTTP provider passes (STYLE #14): the same request checks and the same
//! faults, played by the fake server, for anthropic, openai, openrouter and gemini.
//!
//! A provider is described once by a [`Case`] (how to build it, its path, its success shape,
//! how its auth and body must look); `every_provider!` turns each check into one test per
//! provider, named `<check>::<provider>`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::fake_server::{FakeServer, Recorded, Reply};
use crate::llm::{Anthropic, Gemini, LlmError, LlmRequest, OpenAiCompatible, Provider};

const KEY: &str = "sk-test-KEY-0123456789";
const MODEL: &str = "test-model";
const ANSWER: &str = r#"{"concepts":[]}"#;
/// Long enough for a local round trip, short enough to keep the stall tests fast.
const TIMEOUT: Duration = Duration::from_secs(5);
const SHORT_TIMEOUT: Duration = Duration::from_millis(300);
/// What "returns within the timeout" allows on top of it (scheduling on a loaded 2-core box).
const MARGIN: Duration = Duration::from_millis(700);

pub struct Case {
    make: fn(base: &str) -> Box<dyn Provider>,
    name: &'static str,
    path: &'static str,
    key_setting: &'static str,
    success: fn(text: &str) -> Value,
    /// A well-formed answer that carries no text.
    empty: fn() -> Value,
    check_auth: fn(&Recorded),
    check_body: fn(&Value, &LlmRequest),
}

fn request() -> LlmRequest {
    LlmRequest { system: "You write quizzes.".into(), prompt: "Session: built a router".into(), max_tokens: 1234 }
}

mod cases {
    use super::*;

    pub fn anthropic() -> Case {
        Case {
            make: |base| Box::new(Anthropic::new(base, KEY, MODEL)),
            name: "anthropic",
            path: "/v1/messages",
            key_setting: "ANTHROPIC_API_KEY",
            success: |text| {
                json!({"id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})
            },
            empty: || json!({"content": [], "stop_reason": "max_tokens"}),
            check_auth: |r| {
                assert_eq!(r.header("x-api-key"), Some(KEY));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
            },
            check_body: |b, req| {
                assert_eq!(b["model"], MODEL);
                assert_eq!(b["max_tokens"], req.max_tokens);
                assert_eq!(b["system"], req.system.as_str());
                assert_eq!(b["messages"], json!([{"role": "user", "content": req.prompt}]));
            },
        }
    }

    fn chat_success(text: &str) -> Value {
        json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
    }

    fn chat_body(b: &Value, req: &LlmRequest) {
        assert_eq!(b["model"], MODEL);
        assert_eq!(b["max_tokens"], req.max_tokens);
        assert_eq!(
            b["messages"],
            json!([{"role": "system", "content": req.system}, {"role": "user", "content": req.prompt}])
        );
        // The fake server is not OpenAI itself, so no JSON mode (see openai.rs).
        assert!(b.get("response_format").is_none());
    }

    pub fn openai() -> Case {
        Case {
            make: |base| Box::new(OpenAiCompatible::openai(base, KEY, MODEL)),
            name: "openai",
            path: "/v1/chat/completions",
            key_setting: "OPENAI_API_KEY",
            success: chat_success,
            empty: || json!({"choices": [{"message": {"content": null}, "finish_reason": "length"}]}),
            check_auth: |r| assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str())),
            check_body: chat_body,
        }
    }

    pub fn openrouter() -> Case {
        Case {
            make: |base| Box::new(OpenAiCompatible::openrouter(base, KEY, MODEL)),
            name: "openrouter",
            key_setting: "OPENROUTER_API_KEY",
            ..openai()
        }
    }

    pub fn gemini() -> Case {
        Case {
            make: |base| Box::new(Gemini::new(base, KEY, MODEL)),
            name: "gemini",
            path: "/v1/models/test-model:generateContent",
            key_setting: "GEMINI_API_KEY",
            success: |text| {
                json!({"candidates": [{"content": {"role": "model",
                "parts": [{"text": text}]}, "finishReason": "STOP"}]})
            },
            empty: || json!({"candidates": [{"content": {"parts": []}, "finishReason": "MAX_TOKENS"}]}),
            check_auth: |r| {
                assert_eq!(r.header("x-goog-api-key"), Some(KEY));
                assert!(!r.target.contains(KEY) && !r.target.contains("key="), "{}", r.target);
                assert_eq!(r.header("authorization"), None);
            },
            check_body: |b, req| {
                assert_eq!(b["systemInstruction"], json!({"parts": [{"text": req.system}]}));
                assert_eq!(b["contents"], json!([{"role": "user", "parts": [{"text": req.prompt}]}]));
                assert_eq!(b["generationConfig"]["maxOutputTokens"], req.max_tokens);
                assert_eq!(b["generationConfig"]["responseMimeType"], "application/json");
            },
        }
    }
}

/// Runs one call of `case`'s provider against a server playing `reply`.
fn call(case: &Case, reply: Reply, timeout: Duration) -> (FakeServer, Result<String, LlmError>) {
    let server = FakeServer::start(reply);
    // Every provider is pointed at `{server}/v1`, like the real default bases.
    let base = match case.name {
        "anthropic" => server.base.clone(),
        _ => format!("{}/v1", server.base),
    };
    let result = (case.make)(&base).complete(&request(), timeout);
    (server, result)
}

fn assert_transient(result: &Result<String, LlmError>) {
    assert!(matches!(result, Err(LlmError::Transient { .. })), "expected Transient: {result:?}");
}

fn assert_permanent(result: &Result<String, LlmError>) {
    assert!(matches!(result, Err(LlmError::Permanent(_))), "expected Permanent: {result:?}");
}

fn sends_the_documented_request(case: Case) {
    let (server, result) = call(&case, Reply::json(200, &(case.success)(ANSWER).to_string()), TIMEOUT);
    assert_eq!(result, Ok(ANSWER.to_string()));
    let seen = server.request();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.target, case.path);
    assert_eq!(seen.header("content-type"), Some("application/json"));
    (case.check_auth)(&seen);
    (case.check_body)(&seen.json(), &request());
}

fn rate_limit_is_transient_with_retry_after(case: Case) {
    let reply = Reply::Respond {
        status: 429,
        headers: vec![("retry-after", "7".into())],
        body: r#"{"error":{"message":"slow down"}}"#.into(),
    };
    let (_server, result) = call(&case, reply, TIMEOUT);
    match result {
        Err(LlmError::Transient { message, retry_after }) => {
            assert_eq!(retry_after, Some(Duration::from_secs(7)));
            assert!(message.contains("429") && message.contains("slow down"), "{message}");
        }
        other => panic!("expected Transient: {other:?}"),
    }
}

fn server_error_is_transient(case: Case) {
    let (_server, result) = call(&case, Reply::json(500, "<html>oops</html>"), TIMEOUT);
    assert_transient(&result);
    assert!(result.unwrap_err().to_string().contains("500"));
}

fn rejected_key_is_auth_and_never_quoted(case: Case) {
    for status in [401, 403] {
        // Some servers echo the key they got; it must not reach the message.
        let body = format!(r#"{{"error":{{"message":"invalid key {KEY}"}}}}"#);
        let (_server, result) = call(&case, Reply::json(status, &body), TIMEOUT);
        match result {
            Err(LlmError::Auth(message)) => {
                assert!(message.contains(case.name), "{message}");
                assert!(message.contains(case.key_setting), "{message}");
                assert!(!message.contains(KEY), "{message}");
            }
            other => panic!("{status}: expected Auth: {other:?}"),
        }
    }
}

fn client_errors_are_permanent(case: Case) {
    for status in [400, 404, 422] {
        let (_server, result) = call(&case, Reply::json(status, r#"{"error":{"message":"bad field"}}"#), TIMEOUT);
        assert_permanent(&result);
        assert!(result.unwrap_err().to_string().contains("bad field"));
    }
}

fn truncated_json_is_transient(case: Case) {
    let full = (case.success)(ANSWER).to_string();
    let (_server, result) = call(&case, Reply::json(200, &full[..full.len() / 2]), TIMEOUT);
    assert_transient(&result);
}

fn body_cut_short_is_transient(case: Case) {
    let (_server, result) = call(&case, Reply::CutBody((case.success)(ANSWER).to_string()), TIMEOUT);
    assert_transient(&result);
}

fn wrong_shape_is_permanent(case: Case) {
    let (_server, result) = call(&case, Reply::json(200, r#"{"unexpected":[1,2]}"#), TIMEOUT);
    assert_permanent(&result);
}

fn answer_without_text_is_permanent(case: Case) {
    let (_server, result) = call(&case, Reply::json(200, &(case.empty)().to_string()), TIMEOUT);
    assert_permanent(&result);
}

fn stall_before_headers_times_out(case: Case) {
    let started = Instant::now();
    let (_server, result) = call(&case, Reply::StallHeaders, SHORT_TIMEOUT);
    assert!(started.elapsed() < SHORT_TIMEOUT + MARGIN, "took {:?}", started.elapsed());
    assert_transient(&result);
}

fn stall_mid_body_times_out(case: Case) {
    let started = Instant::now();
    let (_server, result) = call(&case, Reply::StallBody, SHORT_TIMEOUT);
    assert!(started.elapsed() < SHORT_TIMEOUT + MARGIN, "took {:?}", started.elapsed());
    assert_transient(&result);
}

fn closed_without_answer_is_transient(case: Case) {
    let (_server, result) = call(&case, Reply::Close, TIMEOUT);
    assert_transient(&result);
}

/// A host that cannot be reached is its own class: the provider pauses and is probed, instead
/// of a job burning its retries (issue 42).
fn refused_connection_is_unreachable(case: Case) {
    // A port that was just free: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let base = format!("http://127.0.0.1:{}/v1", port.expect("a free port"));
    let result = (case.make)(&base).complete(&request(), TIMEOUT);
    let Err(LlmError::Unreachable(message)) = &result else { panic!("expected Unreachable, got {result:?}") };
    assert!(message.contains("cannot be reached") && message.contains("BASE_URL"), "{message}");
}

/// A name that does not resolve (`.invalid` never does, RFC 2606): unreachable too.
fn unresolvable_host_is_unreachable(case: Case) {
    let result = (case.make)("http://vibelearn-test.invalid/v1").complete(&request(), TIMEOUT);
    assert!(matches!(result, Err(LlmError::Unreachable(_))), "{result:?}");
}

macro_rules! every_provider {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            #[test] fn anthropic() { super::$check(super::cases::anthropic()) }
            #[test] fn openai() { super::$check(super::cases::openai()) }
            #[test] fn openrouter() { super::$check(super::cases::openrouter()) }
            #[test] fn gemini() { super::$check(super::cases::gemini()) }
        }
    )*};
}

every_provider!(
    sends_the_documented_request,
    rate_limit_is_transient_with_retry_after,
    server_error_is_transient,
    rejected_key_is_auth_and_never_quoted,
    client_errors_are_permanent,
    truncated_json_is_transient,
    body_cut_short_is_transient,
    wrong_shape_is_permanent,
    answer_without_text_is_permanent,
    stall_before_headers_times_out,
    stall_mid_body_times_out,
    closed_without_answer_is_transient,
    refused_connection_is_unreachable,
    unresolvable_host_is_unreachable,
);

#[test]
fn openai_compatible_server_without_key_gets_no_authorization_header() {
    let server = FakeServer::start(Reply::json(200, &(cases::openai().success)(ANSWER).to_string()));
    let provider = OpenAiCompatible::openai(&format!("{}/v1", server.base), "", MODEL);
    assert_eq!(provider.complete(&request(), TIMEOUT), Ok(ANSWER.to_string()));
    let seen = server.request();
    assert_eq!(seen.header("authorization"), None);
    assert!(seen.json().get("response_format").is_none());
}
