//! A small HTTP client for talking to the local worker (hooks and CLI): JSON in, status and
//! JSON out, every call bounded by a timeout, the admin token attached when asked.

use std::time::Duration;

use serde_json::Value;

use crate::config::Config;

/// A response from the worker: status and parsed body (`Null` when not JSON).
#[derive(Debug, Clone)]
pub struct WorkerResponse {
    pub status: u16,
    pub body: Value,
}

/// Why the worker could not be reached at all.
#[derive(Debug, Clone)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the worker is not reachable: {}", self.0)
    }
}

/// Client bound to one worker address.
pub struct WorkerClient {
    base: String,
    agent: ureq::Agent,
    token: Option<String>,
}

impl WorkerClient {
    /// A client whose every call (connect + response) is bounded by `timeout`.
    pub fn new(config: &Config, timeout: Duration) -> WorkerClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let token = std::fs::read_to_string(config.data_dir.join("admin.token")).ok().map(|t| t.trim().to_owned());
        WorkerClient { base: config.worker_url(), agent, token }
    }

    pub fn get(&self, path: &str) -> Result<WorkerResponse, Unreachable> {
        let mut request = self.agent.get(format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        read(request.call())
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<WorkerResponse, Unreachable> {
        let mut request = self.agent.post(format!("{}{path}", self.base)).header("Content-Type", "application/json");
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        read(request.send(body.to_string()))
    }

    /// True when `/api/health` answers 200.
    pub fn is_healthy(&self) -> bool {
        self.get("/api/health").is_ok_and(|r| r.status == 200)
    }

    pub fn is_ready(&self) -> bool {
        self.get("/api/readiness").is_ok_and(|r| r.status == 200)
    }
}

fn read(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<WorkerResponse, Unreachable> {
    let mut response = result.map_err(|e| Unreachable(e.to_string()))?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().map_err(|e| Unreachable(e.to_string()))?;
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(WorkerResponse { status, body })
}
