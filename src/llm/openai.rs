//! The OpenAI-compatible chat-completions provider: `POST {base}/chat/completions`.
//!
//! One type serves `openai` (OpenAI itself, or any compatible server: Ollama, LM Studio, vLLM)
//! and `openrouter`; they differ only in name, base URL, key and two switches:
//!
//! - **Key optional** for `openai` with a non-default base URL: local servers usually need
//!   none. An empty key then sends no `Authorization` header at all (some servers reject
//!   `Bearer ` with nothing after it).
//! - **JSON mode** (`response_format: {"type":"json_object"}`) only against the real OpenAI
//!   base URL. Compatible servers and some OpenRouter upstreams reject the field or ignore it;
//!   the prompt asks for JSON anyway (OpenAI also requires the word "JSON" in the messages for
//!   this mode, which the A.6 prompts contain), and the caller validates the answer.
//!
//! `max_tokens` is sent as such: every compatible server accepts it, and the default model
//! (`gpt-4o-mini`) does too.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::transport::{self, Caller};
use super::{Completion, LlmError, LlmRequest, Provider};

/// OpenAI's own endpoint; JSON mode and a mandatory key apply only here.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Calls an OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiCompatible {
    caller: Caller,
    url: String,
    api_key: String,
    model: String,
    json_mode: bool,
    agent: ureq::Agent,
}

impl OpenAiCompatible {
    /// The `openai` provider. `api_key` may be empty (no `Authorization` header is sent);
    /// `select` only allows that with a non-default `base_url`.
    pub fn openai(base_url: &str, api_key: &str, model: &str) -> Self {
        let json_mode = is_openai_default(base_url);
        Self::build(
            Caller { name: "openai", key_setting: "OPENAI_API_KEY", base_url_setting: "VIBELEARN_OPENAI_BASE_URL" },
            base_url,
            api_key,
            model,
            json_mode,
        )
    }

    /// The `openrouter` provider (OpenRouter speaks the same protocol).
    pub fn openrouter(base_url: &str, api_key: &str, model: &str) -> Self {
        Self::build(
            Caller {
                name: "openrouter",
                key_setting: "OPENROUTER_API_KEY",
                base_url_setting: "VIBELEARN_OPENROUTER_BASE_URL",
            },
            base_url,
            api_key,
            model,
            false,
        )
    }

    fn build(caller: Caller, base_url: &str, api_key: &str, model: &str, json_mode: bool) -> Self {
        OpenAiCompatible {
            caller,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key: api_key.trim().to_string(),
            model: model.to_string(),
            json_mode,
            agent: transport::agent(),
        }
    }

    fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        let mut body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
            "max_tokens": request.max_tokens,
        });
        if self.json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    fn call(&self, request: &LlmRequest, timeout: Duration) -> Result<Completion, LlmError> {
        let bearer = format!("Bearer {}", self.api_key);
        let headers: &[(&str, &str)] =
            if self.api_key.is_empty() { &[] } else { &[("authorization", bearer.as_str())] };
        let body = self.request_body(request);
        let answer = transport::post_json(&self.agent, self.caller, &self.url, headers, &body, timeout)?;
        let tokens = answer["usage"]["total_tokens"].as_u64();
        Ok(Completion::new(request, extract_text(self.caller, answer)?, tokens))
    }
}

/// Whether `base_url` is OpenAI's own endpoint (ignoring a trailing `/`).
pub(super) fn is_openai_default(base_url: &str) -> bool {
    base_url.trim().trim_end_matches('/') == OPENAI_DEFAULT_BASE_URL
}

impl Provider for OpenAiCompatible {
    fn name(&self) -> &'static str {
        self.caller.name
    }

    fn complete(&self, request: &LlmRequest, timeout: Duration) -> Result<String, LlmError> {
        self.complete_counted(request, timeout).map(|c| c.text)
    }

    fn complete_counted(&self, request: &LlmRequest, timeout: Duration) -> Result<Completion, LlmError> {
        self.call(request, timeout).map_err(|e| e.redact(&self.api_key))
    }

    fn model(&self) -> &str {
        &self.model
    }
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

fn extract_text(caller: Caller, answer: serde_json::Value) -> Result<String, LlmError> {
    let name = caller.name;
    // OpenRouter can answer 200 with only an `error` object when the upstream model failed;
    // its `code` is an HTTP status, so it is classified like one.
    if answer.get("choices").is_none()
        && let Some(error) = answer.get("error")
    {
        let code = error.get("code").and_then(|c| c.as_u64()).unwrap_or(0);
        let message = error.get("message").and_then(|m| m.as_str()).unwrap_or("no message");
        let message = format!("{name}: the upstream model failed (code {code}): {message}");
        let code = u16::try_from(code).unwrap_or(0);
        return Err(match crate::remote::classify_status(code) {
            crate::remote::StatusClass::Transient => LlmError::transient(message),
            _ => LlmError::Permanent(message),
        });
    }
    let response: ChatResponse = serde_json::from_value(answer)
        .map_err(|e| LlmError::Permanent(format!("{name}: unexpected answer shape ({e})")))?;
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(LlmError::Permanent(format!("{name}: the answer has no choices")));
    };
    match choice.message.content {
        Some(text) if !text.trim().is_empty() => Ok(text),
        _ => {
            let why = match (choice.message.refusal, choice.finish_reason) {
                (Some(refusal), _) => format!("refusal: {refusal}"),
                (None, Some(reason)) => format!("finish_reason: {reason}"),
                (None, None) => "no reason given".to_string(),
            };
            Err(LlmError::Permanent(format!("{name}: the answer has no text ({why})")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> LlmRequest {
        LlmRequest { system: "sys".into(), prompt: "hi".into(), max_tokens: 9 }
    }

    #[test]
    fn json_mode_only_for_the_real_openai_endpoint() {
        let real = OpenAiCompatible::openai("https://api.openai.com/v1/", "k", "m");
        assert_eq!(real.request_body(&request())["response_format"]["type"], "json_object");
        let local = OpenAiCompatible::openai("http://localhost:11434/v1", "", "m");
        assert!(local.request_body(&request()).get("response_format").is_none());
        let router = OpenAiCompatible::openrouter("https://openrouter.ai/api/v1", "k", "m");
        assert!(router.request_body(&request()).get("response_format").is_none());
    }

    #[test]
    fn openrouter_error_in_a_200_is_classified_by_its_code() {
        let caller = Caller {
            name: "openrouter",
            key_setting: "OPENROUTER_API_KEY",
            base_url_setting: "VIBELEARN_OPENROUTER_BASE_URL",
        };
        let busy = json!({"error": {"code": 502, "message": "upstream down"}});
        assert!(matches!(extract_text(caller, busy), Err(LlmError::Transient { .. })));
        let bad = json!({"error": {"code": 400, "message": "bad model"}});
        assert!(matches!(extract_text(caller, bad), Err(LlmError::Permanent(_))));
    }

    #[test]
    fn null_content_with_a_refusal_is_permanent() {
        let caller =
            Caller { name: "openai", key_setting: "OPENAI_API_KEY", base_url_setting: "VIBELEARN_OPENAI_BASE_URL" };
        let answer = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        let err = extract_text(caller, answer).unwrap_err();
        assert!(matches!(&err, LlmError::Permanent(m) if m.contains("refusal")), "{err:?}");
    }
}
