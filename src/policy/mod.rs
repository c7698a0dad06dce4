//! Intake policy that the hooks and the worker apply alike, so it lives below both: what is
//! private (and so never recorded) and which projects are excluded.
//!
//! - [`privacy`]: `<private>` and the other tags, stripped from every string (pure)
//! - [`turns`]: the private-turn markers in the data dir, failing closed
//! - [`exclude`]: the `VIBELEARN_EXCLUDED_PROJECTS` globs (pure)

pub mod exclude;
pub mod privacy;
pub mod turns;
