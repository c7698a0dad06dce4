//! The worker's HTTP API (SPEC §4): the HTTP/1.1 wire format ([`wire`]), server threads and
//! guards ([`server`]), the JSON error type ([`error`]), the routes ([`routes`]) and the
//! dashboard page at `/` ([`dashboard`]). Routes are thin: parse → enqueue or read → JSON.

pub mod dashboard;
pub mod error;
pub mod routes;
pub mod server;
pub mod wire;

pub use error::ApiError;
pub use server::{AppContext, HttpServer};
