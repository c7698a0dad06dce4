//! `probe`: the try of the `claude` CLI that `auto` makes before relying on it (SPEC §6.5).
//!
//! A CLI on PATH is no promise of answers: it may not be logged in, or its account may have no
//! credit. `auto` therefore sends it one tiny prompt before using it. A CLI that fails is not
//! used: the jobs fall back to the offline catalogue, and the failure, in the CLI's own words,
//! is what `vl status` and the dashboard show.
//!
//! A failure is not kept for the worker's life: the user who sees it logs in, and the next
//! sessions should then be the CLI's. After a failed try the CLI is tried again on the back-off
//! of a paused provider (`queue::runner::reprobe::backoff`: 5 min, doubling to an hour), when
//! something asks for the outcome (a job choosing its provider, `/api/health`); the try runs in
//! the background and the asker gets the outcome known so far. A success is kept.
//!
//! The first try runs on a thread of its own when the worker starts ([`CliProbe::start`]), so a
//! slow CLI never delays the worker's readiness; a job that needs the answer first waits for it.
//! The back-off counts on a [`SharedClock`], so a test drives it with a manual one.
//!
//! [`answers`] is the same try for any provider: what a paused provider's gate runs, after a
//! back-off, to find out whether the user has logged in or topped up (`queue::runner::reprobe`).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::{LlmRequest, Provider};
use crate::clock::{Millis, SharedClock};
use crate::queue::runner::reprobe::backoff;

/// How long the try may take: a logged-in CLI answers a one-word prompt in a few seconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(45);

/// The prompt of the try: the shortest that shows the CLI answers at all.
const PROBE_PROMPT: &str = "Reply with the single word OK.";

/// The tries of one CLI: the first before it is relied on, then again after a failure.
pub struct CliProbe {
    cli: Box<dyn Provider>,
    clock: SharedClock,
    state: Mutex<State>,
    /// Signalled when a try ends.
    tried: Condvar,
}

#[derive(Default)]
struct State {
    /// The last try's outcome; `None` before the first has ended.
    outcome: Option<Result<(), String>>,
    /// When the last try ended.
    at: Millis,
    /// Tries that failed in a row.
    failed: u32,
    /// A try is under way.
    running: bool,
}

impl CliProbe {
    pub(super) fn new(cli: Box<dyn Provider>, clock: SharedClock) -> CliProbe {
        CliProbe { cli, clock, state: Mutex::new(State::default()), tried: Condvar::new() }
    }

    /// The outcome: the first try's, waiting for it (or running it now) if it has not ended;
    /// after that the latest, with a try again started in the background when one is due.
    pub fn outcome(self: &Arc<Self>) -> Result<(), String> {
        let mut state = self.lock();
        while state.outcome.is_none() {
            if state.running {
                state = self.tried.wait(state).unwrap_or_else(|p| p.into_inner());
            } else {
                state.running = true;
                drop(state);
                self.try_now();
                state = self.lock();
            }
        }
        let outcome = state.outcome.clone().unwrap_or(Ok(()));
        drop(state);
        self.again_if_due();
        outcome
    }

    /// The outcome if a try has ended, `None` before; never waits. Starts a try again in the
    /// background when one is due.
    pub fn known(self: &Arc<Self>) -> Option<Result<(), String>> {
        let outcome = self.lock().outcome.clone();
        self.again_if_due();
        outcome
    }

    /// Runs the first try on a thread of its own (at most one at a time, however often this
    /// is called), or a try again when one is due.
    pub fn start(self: &Arc<Self>) {
        let mut state = self.lock();
        if state.outcome.is_none() && !state.running {
            state.running = true;
            drop(state);
            self.in_background();
        } else {
            drop(state);
            self.again_if_due();
        }
    }

    /// A try again in the background, when the last failed and its back-off has passed.
    fn again_if_due(self: &Arc<Self>) {
        let mut state = self.lock();
        let wait = Millis::try_from(backoff(state.failed.saturating_sub(1)).as_millis()).unwrap_or(Millis::MAX);
        let due = matches!(state.outcome, Some(Err(_))) && self.clock.now_ms().saturating_sub(state.at) >= wait;
        if due && !state.running {
            state.running = true;
            drop(state);
            self.in_background();
        }
    }

    fn in_background(self: &Arc<Self>) {
        let probe = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("vl-cli-probe".into()).spawn(move || probe.try_now());
        if let Err(e) = spawned {
            // The first job that needs the answer runs the try itself.
            log::warn!(target: "llm", "could not start the claude CLI check in the background: {e}");
            self.lock().running = false;
            self.tried.notify_all();
        }
    }

    /// One try, its outcome stored for every asker; `running` was set by the caller.
    fn try_now(&self) {
        let outcome = answers(self.cli.as_ref());
        let mut state = self.lock();
        match &outcome {
            Ok(()) if state.failed > 0 => log::info!(target: "llm", "the claude CLI answers now; auto uses it"),
            Ok(()) => log::info!(target: "llm", "the claude CLI answered its first prompt; auto uses it"),
            Err(e) => log::warn!(target: "llm", "auto does not use the claude CLI: {e}"),
        }
        state.failed = if outcome.is_ok() { 0 } else { state.failed.saturating_add(1) };
        state.outcome = Some(outcome);
        state.at = self.clock.now_ms();
        state.running = false;
        drop(state);
        self.tried.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether `provider` answers a one-word prompt now (a few tokens; none when it is refused).
pub fn answers(provider: &dyn Provider) -> Result<(), String> {
    let request = LlmRequest { system: String::new(), prompt: PROBE_PROMPT.to_owned(), max_tokens: 5 };
    provider.complete(&request, PROBE_TIMEOUT).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::llm::LlmError;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A CLI that refuses until `logged_in`, counting its tries.
    #[derive(Default)]
    struct Cli {
        logged_in: AtomicBool,
        tries: AtomicUsize,
    }

    impl Provider for Arc<Cli> {
        fn name(&self) -> &'static str {
            "command"
        }

        fn complete(&self, _: &LlmRequest, _: Duration) -> Result<String, LlmError> {
            self.tries.fetch_add(1, Ordering::SeqCst);
            if self.logged_in.load(Ordering::SeqCst) {
                Ok("OK".into())
            } else {
                Err(LlmError::Auth("Not logged in · Please run /login".into()))
            }
        }
    }

    /// Waits until no try is under way (a try again runs on a thread of its own).
    fn settled(probe: &CliProbe) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while probe.lock().running {
            assert!(std::time::Instant::now() < deadline, "the try did not end");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_cli_refused_at_first_is_tried_again_on_the_back_off_and_used_once_it_answers() {
        let cli = Arc::new(Cli::default());
        let clock = ManualClock::new(1_000_000);
        let probe = Arc::new(CliProbe::new(Box::new(Arc::clone(&cli)), clock.clone()));
        assert_eq!(probe.known(), None, "nothing known before the first try");
        let refused = probe.outcome().unwrap_err();
        assert!(refused.contains("Not logged in"), "{refused}");
        assert_eq!(cli.tries.load(Ordering::SeqCst), 1);

        // The user logs in. Asked within the back-off (5 min): the refusal stands, no try.
        cli.logged_in.store(true, Ordering::SeqCst);
        clock.advance(4 * 60_000);
        assert!(probe.outcome().is_err());
        assert!(probe.known().is_some_and(|o| o.is_err()));
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 1);

        // Past it: asking starts a try in the background, and the answer after it is the CLI's.
        clock.advance(60_000);
        assert!(probe.known().is_some_and(|o| o.is_err()), "the asker is not kept waiting");
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 2);
        assert_eq!(probe.outcome(), Ok(()));
        // A success is kept: no more tries, however long it runs.
        clock.advance(24 * 3_600_000);
        probe.start();
        assert_eq!(probe.outcome(), Ok(()));
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn each_try_that_fails_doubles_the_wait_up_to_an_hour() {
        let cli = Arc::new(Cli::default());
        let clock = ManualClock::new(0);
        let probe = Arc::new(CliProbe::new(Box::new(Arc::clone(&cli)), clock.clone()));
        probe.start();
        settled(&probe);
        let mut tries = 1;
        // After try n (n ≥ 1) the next waits 5 min · 2^(n-1), at most an hour.
        for wait_min in [5, 10, 20, 40, 60, 60] {
            clock.advance((wait_min - 1) * 60_000);
            probe.start();
            settled(&probe);
            assert_eq!(cli.tries.load(Ordering::SeqCst), tries, "not yet, {wait_min} min wait");
            clock.advance(60_000);
            probe.start();
            settled(&probe);
            tries += 1;
            assert_eq!(cli.tries.load(Ordering::SeqCst), tries, "tried after {wait_min} min");
        }
    }
}
