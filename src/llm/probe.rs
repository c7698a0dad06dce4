//! `probe`: the one try of the `claude` CLI that `auto` makes before relying on it (SPEC §6.5).
//!
//! A CLI on PATH is no promise of answers: it may not be logged in, or its account may have no
//! credit. `auto` therefore sends it one tiny prompt, once per worker, and keeps the outcome for
//! the worker's life. A CLI that fails is not used: the jobs fall back to the offline catalogue,
//! and the failure, in the CLI's own words, is what `vl status` and the dashboard show.
//!
//! The try runs on a thread of its own when the worker starts ([`CliProbe::start`]), so a slow
//! CLI never delays the worker's readiness; a job that needs the answer first waits for it.
//!
//! [`answers`] is the same try for any provider: what a paused provider's gate runs, after a
//! back-off, to find out whether the user has logged in or topped up (`queue::runner::reprobe`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::{CommandProvider, LlmRequest, Provider};

/// How long the try may take: a logged-in CLI answers a one-word prompt in a few seconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(45);

/// The prompt of the try: the shortest that shows the CLI answers at all.
const PROBE_PROMPT: &str = "Reply with the single word OK.";

/// One try of a CLI, run at most once.
pub struct CliProbe {
    cli: CommandProvider,
    outcome: OnceLock<Result<(), String>>,
}

impl CliProbe {
    pub(super) fn new(cli: CommandProvider) -> CliProbe {
        CliProbe { cli, outcome: OnceLock::new() }
    }

    /// The outcome, trying the CLI now unless that was done (or is under way: then this waits).
    pub fn outcome(&self) -> &Result<(), String> {
        self.outcome.get_or_init(|| self.try_once())
    }

    /// The outcome if the try has finished; `None` before.
    pub fn known(&self) -> Option<&Result<(), String>> {
        self.outcome.get()
    }

    /// Runs the try on a thread of its own (at most one, however often this is called).
    pub fn start(self: &Arc<Self>) {
        if self.known().is_some() {
            return;
        }
        let probe = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("vl-cli-probe".into()).spawn(move || {
            probe.outcome();
        });
        if let Err(e) = spawned {
            // The first job that needs the answer runs the try itself.
            log::warn!(target: "llm", "could not start the claude CLI check in the background: {e}");
        }
    }

    fn try_once(&self) -> Result<(), String> {
        match answers(&self.cli) {
            Ok(()) => {
                log::info!(target: "llm", "the claude CLI answered its first prompt; auto uses it");
                Ok(())
            }
            Err(e) => {
                log::warn!(target: "llm", "auto does not use the claude CLI: {e}");
                Err(e)
            }
        }
    }
}

/// Whether `provider` answers a one-word prompt now (a few tokens; none when it is refused).
pub fn answers(provider: &dyn Provider) -> Result<(), String> {
    let request = LlmRequest { system: String::new(), prompt: PROBE_PROMPT.to_owned(), max_tokens: 5 };
    provider.complete(&request, PROBE_TIMEOUT).map(|_| ()).map_err(|e| e.to_string())
}
