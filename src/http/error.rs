//! The one JSON error shape of the HTTP API: `{"error": "<code>", "message": "<sentence>"}`
//! with the status that goes with the code (SPEC §4). Unknown routes get this too, never HTML.

use super::wire::Response;
use serde_json::json;

use crate::intake::IntakeError;
use crate::queue::QueueError;

/// An HTTP failure: status, machine code, human sentence.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(404, "not_found", message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(403, "forbidden", message)
    }

    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(503, "unavailable", message)
    }

    pub fn into_response(self) -> Response {
        json_response(self.status, &json!({ "error": self.code, "message": self.message }))
    }
}

impl From<QueueError> for ApiError {
    fn from(e: QueueError) -> Self {
        let code = match e {
            QueueError::Full => "queue_full",
            QueueError::Busy(_) => "database_busy",
            _ => "unavailable",
        };
        ApiError::new(503, code, e.to_string())
    }
}

impl From<IntakeError> for ApiError {
    fn from(e: IntakeError) -> Self {
        match e {
            IntakeError::Invalid(message) => ApiError::bad_request(message),
            IntakeError::Queue(e) => e.into(),
        }
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> Self {
        QueueError::from(e).into()
    }
}

/// A JSON response with the given status: a `Value`, or a typed reply serialised straight to
/// its text (the profile's, `learning::mastery::Profile`).
pub fn json_response(status: u16, body: &impl serde::Serialize) -> Response {
    // serde_json fails only on a map whose keys are not strings, which no reply holds.
    let text = serde_json::to_string(body).expect("every reply serialises: its maps have string keys");
    Response::new(status, "application/json", text)
}
