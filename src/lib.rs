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
//! - [`db`]: opening SQLite with checked pragmas; migrations in `PRAGMA user_version`
//! - [`queue`]: the durable job queue as a library (knows nothing of VibeLearn)

pub mod clock;
pub mod db;
pub mod queue;
