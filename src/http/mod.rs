//! The worker's HTTP API (SPEC §4): server setup and guards ([`server`]), the JSON error type
//! ([`error`]) and the routes ([`routes`]). Routes are thin: parse → enqueue or read → JSON.

pub mod error;
pub mod routes;
pub mod server;

pub use error::ApiError;
pub use server::{AppContext, HttpServer};
