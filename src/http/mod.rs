//! The worker's HTTP API (SPEC §4). Routes are thin: parse → enqueue or read → JSON.
//! - [`head`]: request heads parsed by `httparse`, strict framing, limits (pure)
//! - [`reader`]: reading heads and bodies off a connection by deadlines, pipelining
//! - [`wire`]: the request the routes see, writing responses
//! - [`slots`]: the table of open connections and who gives way at the cap
//! - [`accept`]: the accept thread and its backoff
//! - [`connection`]: one connection's life, its guards, panics turned into 500
//! - [`server`]: the shared context, the stop protocol, the guards of SPEC §4
//! - [`error`]: the one JSON error type; [`routes`]: the route table; [`dashboard`]: the page at `/`

pub mod accept;
pub mod connection;
pub mod dashboard;
pub mod error;
pub mod head;
pub mod reader;
pub mod routes;
pub mod server;
pub mod slots;
pub mod wire;

pub use error::ApiError;
pub use server::{AppContext, HttpServer};
