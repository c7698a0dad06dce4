//! Intake policy that the hooks and the worker apply alike, so it lives below both: what is
//! private (and so never recorded) and which projects are excluded.
//!
//! - [`privacy`]: `<private>` and the other tags, stripped from every string
//! - [`exclude`]: the `VIBELEARN_EXCLUDED_PROJECTS` globs

pub mod exclude;
pub mod privacy;
