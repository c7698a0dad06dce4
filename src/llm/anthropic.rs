//! The Anthropic Messages API provider: `POST {base}/v1/messages`.
//!
//! Anthropic has no JSON mode; the prompt itself asks for the JSON of SPEC Appendix A.6 and the
//! caller validates it. The answer's text is every `text` block of `content`, concatenated
//! (other block types, such as `thinking`, are skipped).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::transport::{self, Caller};
use super::{Completion, LlmError, LlmRequest, Provider};

/// The API version pinned in every request; the response shape below is this version's.
const API_VERSION: &str = "2023-06-01";

const CALLER: Caller =
    Caller { name: "anthropic", key_setting: "ANTHROPIC_API_KEY", base_url_setting: "VIBELEARN_ANTHROPIC_BASE_URL" };

/// Calls Anthropic's Messages API with one API key and model.
pub struct Anthropic {
    url: String,
    api_key: String,
    model: String,
    agent: ureq::Agent,
}

impl Anthropic {
    /// `base_url` is e.g. `https://api.anthropic.com` (a trailing `/` is ignored).
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Self {
        Anthropic {
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            api_key: api_key.trim().to_string(),
            model: model.to_string(),
            agent: transport::agent(),
        }
    }

    fn call(&self, request: &LlmRequest, timeout: Duration) -> Result<Completion, LlmError> {
        let body = json!({
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        });
        let headers = [("x-api-key", self.api_key.as_str()), ("anthropic-version", API_VERSION)];
        let answer = transport::post_json(&self.agent, CALLER, &self.url, &headers, &body, timeout)?;
        let usage = &answer["usage"];
        let tokens = usage["input_tokens"].as_u64().zip(usage["output_tokens"].as_u64()).map(|(i, o)| i + o);
        Ok(Completion::new(request, extract_text(answer)?, tokens))
    }
}

impl Provider for Anthropic {
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
struct MessagesResponse {
    content: Vec<ContentBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

fn extract_text(answer: serde_json::Value) -> Result<String, LlmError> {
    let response: MessagesResponse = serde_json::from_value(answer)
        .map_err(|e| LlmError::Permanent(format!("anthropic: unexpected answer shape ({e})")))?;
    let text: String =
        response.content.into_iter().filter(|block| block.kind == "text").filter_map(|block| block.text).collect();
    if text.trim().is_empty() {
        let reason = response.stop_reason.as_deref().unwrap_or("none given");
        return Err(LlmError::Permanent(format!("anthropic: the answer has no text (stop_reason: {reason})")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_blocks_are_concatenated_and_others_skipped() {
        let answer = json!({"content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "{\"a\":"},
            {"type": "text", "text": "1}"},
        ]});
        assert_eq!(extract_text(answer), Ok("{\"a\":1}".to_string()));
    }

    #[test]
    fn refusal_without_text_is_permanent_and_names_the_reason() {
        let answer = json!({"content": [], "stop_reason": "refusal"});
        let err = extract_text(answer).unwrap_err();
        assert!(matches!(&err, LlmError::Permanent(m) if m.contains("refusal")), "{err:?}");
    }
}
