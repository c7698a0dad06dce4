//! The IDE hook side: privacy stripping and project exclusion (pure), used by the hooks and
//! again by the worker on arrival.

pub mod exclude;
pub mod privacy;
