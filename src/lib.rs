//! VibeLearn: turns AI-assisted coding sessions into spaced-repetition learning material.
//!
//! ```text
//!  IDE ──stdin──▶ vl hook ──HTTP──▶ http handlers ──┐             ┌──▶ job threads (pool)
//!                   │ (worker down)                  ▼             │     read via r2d2 pool,
//!                   └──────────── direct enqueue ─▶ writer thread ─┤     return Effects
//!    vl CLI ──HTTP or DB──────────────────────────▶ SQLite (WAL) ◀─┘
//!                                                     ▲ claims, completions, effects
//!                                 dispatcher ◀──wake──┘ (all through the writer)
//! ```
//!
//! # Layout
//! - [`clock`]: time as an input (`Clock`, `ManualClock` for tests)
//! - [`backoff`]: the probe back-off shared by the queue's re-probe and the LLM layer's CLI try
//! - [`db`]: opening SQLite with checked pragmas; migrations in `PRAGMA user_version`
//! - [`queue`]: the durable job queue as a library (knows nothing of VibeLearn)
//! - [`config`]: data dir, settings.json + environment, secret redaction
//! - [`event`]: a session event typed once at the edge (the wire shape and the job payload)
//! - [`intake`]: validation, privacy and enqueue of incoming events (HTTP and hooks)
//! - [`capture`]: the whole file after an edit: read here, rebuilt from the session, or a fragment
//! - [`jobs`]: VibeLearn's job kinds (ingest, analysis steps, sync) as queue handlers
//! - [`analysis`]: pure stack detection, static rules, concept and question validation, and the
//!   verification of a question's grounding in the session's files
//! - [`learn`]: pure learning rules: FSRS scheduling and its load balancing, mastery, streaks,
//!   answer checking, export
//! - [`learning`]: the learning loop's reads and its one write (due cards, recording an answer,
//!   live mastery, the learner's days), shared by the CLI, the JSON API, the routes and the jobs
//! - [`llm`]: LLM providers behind one trait, and the offline provider
//! - [`hook`]: the IDE hook entry point: stdin, adapters, privacy, exclusion, transport
//! - [`http`]: the worker's HTTP API and the dashboard page at `/`
//! - [`reads`]: read-model queries behind the read routes and the CLI
//! - [`remote`]: what a remote's HTTP status and `Retry-After` mean (providers and sync)
//! - [`sample`]: recorded sample sessions (the demo and the tests replay them)
//! - [`worker`]: the worker process: lock, startup, shutdown
//! - [`worker_client`]: the HTTP client hooks and the CLI use to reach the worker
//! - [`worker_protocol`]: what the worker and its clients share: the proof, the end of an HTTP
//!   head, who holds the port
//! - [`worker_spawn`]: starting a detached worker (`vl worker start`, hooks)
//! - [`executables`]: the two executables, `vl` and `vl-worker`, and how one finds the other
//! - [`logging`]: the rotating log file
//! - [`platform`]: everything that differs between operating systems: detached processes and
//!   process trees, the shell, PATH, the home folder, owner-only files, the URL opener
//! - [`policy`]: privacy stripping, private-turn markers and project exclusion, shared by hooks
//!   and the worker
//! - [`cli`]: the `vl` commands

pub mod analysis;
pub mod backoff;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod event;
pub mod executables;
pub mod hook;
pub mod http;
pub mod intake;
pub mod jobs;
pub mod learn;
pub mod learning;
pub mod llm;
pub mod logging;
pub mod platform;
pub mod policy;
pub mod queue;
pub mod reads;
pub mod remote;
pub mod retention;
pub mod sample;
pub mod worker;
pub mod worker_client;
pub mod worker_protocol;
pub mod worker_spawn;
