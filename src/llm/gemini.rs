//! The Google Gemini provider: `POST {base}/models/{model}:generateContent`.
//!
//! The key travels in the `x-goog-api-key` header, never in the URL (SPEC §6.5): URLs end up in
//! logs, proxies and error messages. JSON mode is `responseMimeType: application/json`. The
//! answer's text is the first candidate's parts joined; "thought" parts (summaries some models
//! add) are skipped because they are not the answer.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::transport::{self, Caller};
use super::{Completion, LlmError, LlmRequest, Provider};

const CALLER: Caller =
    Caller { name: "gemini", key_setting: "GEMINI_API_KEY", base_url_setting: "VIBELEARN_GEMINI_BASE_URL" };

/// Calls Gemini's `generateContent` with one API key and model.
pub struct Gemini {
    url: String,
    api_key: String,
    model: String,
    agent: ureq::Agent,
}

impl Gemini {
    /// `base_url` is e.g. `https://generativelanguage.googleapis.com/v1beta`. A `models/`
    /// prefix on `model` (the form the API lists models in) is accepted and not doubled.
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Self {
        let model = model.trim().trim_start_matches("models/");
        Gemini {
            url: format!("{}/models/{model}:generateContent", base_url.trim_end_matches('/')),
            api_key: api_key.trim().to_string(),
            model: model.to_string(),
            agent: transport::agent(),
        }
    }

    fn call(&self, request: &LlmRequest, timeout: Duration) -> Result<Completion, LlmError> {
        let body = json!({
            "systemInstruction": {"parts": [{"text": request.system}]},
            "contents": [{"role": "user", "parts": [{"text": request.prompt}]}],
            "generationConfig": {
                "maxOutputTokens": request.max_tokens,
                "responseMimeType": "application/json",
            },
        });
        let headers = [("x-goog-api-key", self.api_key.as_str())];
        let answer = transport::post_json(&self.agent, CALLER, &self.url, &headers, &body, timeout)?;
        let tokens = answer["usageMetadata"]["totalTokenCount"].as_u64();
        Ok(Completion::new(request, extract_text(answer)?, tokens))
    }
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        CALLER.name
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
#[serde(rename_all = "camelCase")]
struct GenerateResponse {
    // Absent (not empty) when the prompt itself was blocked; `prompt_feedback` says why.
    #[serde(default)]
    candidates: Option<Vec<Candidate>>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

fn extract_text(answer: serde_json::Value) -> Result<String, LlmError> {
    let response: GenerateResponse = serde_json::from_value(answer)
        .map_err(|e| LlmError::Permanent(format!("gemini: unexpected answer shape ({e})")))?;
    let Some(candidate) = response.candidates.and_then(|c| c.into_iter().next()) else {
        let Some(reason) = response.prompt_feedback.and_then(|f| f.block_reason) else {
            return Err(LlmError::Permanent("gemini: unexpected answer shape (no candidates)".to_string()));
        };
        return Err(LlmError::Permanent(format!("gemini: the prompt was blocked ({reason})")));
    };
    let text: String = candidate
        .content
        .map(|c| c.parts)
        .unwrap_or_default()
        .into_iter()
        .filter(|part| !part.thought)
        .filter_map(|part| part.text)
        .collect();
    if text.trim().is_empty() {
        let reason = candidate.finish_reason.as_deref().unwrap_or("none given");
        return Err(LlmError::Permanent(format!("gemini: the answer has no text (finishReason: {reason})")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_joined_and_thoughts_skipped() {
        let answer = json!({"candidates": [{"content": {"parts": [
            {"text": "thinking…", "thought": true}, {"text": "{\"a\":"}, {"text": "1}"},
        ]}}]});
        assert_eq!(extract_text(answer), Ok("{\"a\":1}".to_string()));
    }

    #[test]
    fn a_blocked_prompt_is_permanent_and_says_why() {
        let answer = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        let err = extract_text(answer).unwrap_err();
        assert!(matches!(&err, LlmError::Permanent(m) if m.contains("SAFETY")), "{err:?}");
    }

    #[test]
    fn model_prefix_is_not_doubled() {
        let g = Gemini::new("http://h/v1beta/", "k", "models/gemini-2.0-flash");
        assert_eq!(g.url, "http://h/v1beta/models/gemini-2.0-flash:generateContent");
    }
}
