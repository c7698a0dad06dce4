//! Recorded sample sessions: a project's files plus the hook events of a session, with
//! `{{PROJECT}}` standing for the project directory. `vl demo` replays the embedded one; the
//! tests replay them through real hook processes.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// The session `vl demo` replays: a Next.js + Prisma + Tailwind shopping cart.
pub const DEMO_SESSION: &str = include_str!("../tests/fixtures/sessions/nextjs-cart.json");

/// Placeholder for the project directory inside recorded payloads.
const PROJECT: &str = "{{PROJECT}}";

#[derive(Debug, Clone, Deserialize)]
pub struct SampleSession {
    pub description: String,
    /// Files present before the session starts (manifests, transcript), by relative path.
    #[serde(default)]
    pub project_files: BTreeMap<String, String>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    /// The hook event (`session-init`, `observation`, …).
    pub event: String,
    /// A file the IDE wrote just before this hook fired.
    #[serde(default)]
    pub write_file: Option<WriteFile>,
    /// The hook's stdin.
    pub input: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WriteFile {
    pub path: String,
    pub content: String,
}

impl SampleSession {
    pub fn parse(text: &str) -> Result<SampleSession, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Writes the project's initial files under `project`.
    pub fn materialize(&self, project: &Path) -> std::io::Result<()> {
        for (relative, content) in &self.project_files {
            write(project, relative, content)?;
        }
        Ok(())
    }

    /// Applies the step's file write and returns its stdin with the project path filled in.
    pub fn prepare_step(&self, step: &Step, project: &Path) -> std::io::Result<Value> {
        if let Some(file) = &step.write_file {
            write(project, &file.path, &file.content)?;
        }
        let text = step.input.to_string();
        let dir = serde_json::to_string(&project.to_string_lossy()).unwrap_or_default();
        let filled = text.replace(PROJECT, dir.trim_matches('"'));
        serde_json::from_str(&filled).map_err(std::io::Error::other)
    }
}

fn write(project: &Path, relative: &str, content: &str) -> std::io::Result<()> {
    let path = project.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_session_parses_and_fills_the_project_path() {
        let session = SampleSession::parse(DEMO_SESSION).unwrap();
        let dir = tempfile::tempdir().unwrap();
        session.materialize(dir.path()).unwrap();
        assert!(dir.path().join("package.json").exists());
        let input = session.prepare_step(&session.steps[3], dir.path()).unwrap();
        assert!(input["cwd"].as_str().unwrap().starts_with(dir.path().to_str().unwrap()));
        assert!(dir.path().join("lib/cart.ts").exists());
    }
}
