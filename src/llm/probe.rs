//! `probe`: the try of the `claude` CLI that `auto` makes before relying on it (SPEC §6.5).
//!
//! A CLI on PATH is no promise of answers: it may not be logged in, or its account may have no
//! credit. `auto` therefore sends it one tiny prompt before using it. A CLI that fails is not
//! used: the jobs fall back to the offline catalogue, and the failure, in the CLI's own words,
//! is what `vl status` and the dashboard show.
//!
//! A failure is not kept for the worker's life: the user who sees it logs in, and the next
//! sessions should then be the CLI's. After a failed try the CLI is tried again on the back-off
//! of a paused provider ([`crate::backoff`]: 5 min, doubling to an hour; the queue's re-probe
//! of a paused gate uses the same schedule), when
//! the worker next has work for it: a job choosing its provider makes the try that is due and
//! waits for it, as it waits for the first, so the first job after a login is the CLI's.
//! `/api/health` never waits: it starts a due try in the background and tells what is known.
//! A success is kept.
//!
//! The first try runs on a thread of its own when the worker starts ([`CliProbe::start`]), so a
//! slow CLI never delays the worker's readiness. The back-off counts on a [`SharedMonotonic`]
//! clock, so a test drives it with a manual one. A try that panics counts as a failed one, so
//! no asker waits for it forever.
//!
//! [`answers`] is the same try for any provider: what a paused provider's gate runs, after a
//! back-off, to find out whether the user has logged in or topped up (`queue::runner::reprobe`).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{LlmRequest, Provider};
use crate::backoff::probe_backoff as backoff;
use crate::clock::SharedMonotonic;

/// How long the try may take: a logged-in CLI answers a one-word prompt in a few seconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(45);

/// The prompt of the try: the shortest that shows the CLI answers at all.
const PROBE_PROMPT: &str = "Reply with the single word OK.";

/// The tries of one CLI: the first before it is relied on, then again while it fails.
pub struct CliProbe {
    cli: Box<dyn Provider>,
    clock: SharedMonotonic,
    state: Mutex<State>,
    /// Signalled when a try ends.
    tried: Condvar,
}

#[derive(Default)]
struct State {
    /// The last try's outcome and when it ended; `None` before the first has ended.
    last: Option<(Result<(), String>, Instant)>,
    /// Tries that failed in a row.
    failed: u32,
    /// A try is under way.
    running: bool,
}

impl CliProbe {
    pub(super) fn new(cli: Box<dyn Provider>, clock: SharedMonotonic) -> CliProbe {
        CliProbe { cli, clock, state: Mutex::new(State::default()), tried: Condvar::new() }
    }

    /// The outcome a job acts on: the first try's, or a try again when one is due (the last
    /// failed, its back-off passed), made now or waited for if under way; else the last.
    pub fn outcome(self: &Arc<Self>) -> Result<(), String> {
        let mut state = self.lock();
        loop {
            if state.running {
                state = self.tried.wait(state).unwrap_or_else(|p| p.into_inner());
            } else if self.due(&state) {
                state.running = true;
                drop(state);
                self.try_now();
                state = self.lock();
            } else if let Some((outcome, _)) = &state.last {
                return outcome.clone();
            }
        }
    }

    /// The outcome if a try has ended, `None` before; never waits. Starts a due try in the
    /// background.
    pub fn known(self: &Arc<Self>) -> Option<Result<(), String>> {
        let outcome = self.lock().last.as_ref().map(|(outcome, _)| outcome.clone());
        self.start();
        outcome
    }

    /// Starts the first try, or one again that is due, on a thread of its own (at most one try
    /// at a time, however often this is called).
    pub fn start(self: &Arc<Self>) {
        let mut state = self.lock();
        if state.running || !self.due(&state) {
            return;
        }
        state.running = true;
        drop(state);
        let probe = Arc::clone(self);
        let spawned = std::thread::Builder::new().name("vl-cli-probe".into()).spawn(move || probe.try_now());
        if let Err(e) = spawned {
            // The next job that needs the answer makes the try itself.
            log::warn!(target: "llm", "could not start the claude CLI check in the background: {e}");
            self.lock().running = false;
            self.tried.notify_all();
        }
    }

    /// Whether a try is to be made: none has ended, or the last failed and its back-off passed.
    fn due(&self, state: &State) -> bool {
        match &state.last {
            None => true,
            Some((Ok(()), _)) => false,
            Some((Err(_), at)) => {
                self.clock.now().saturating_duration_since(*at) >= backoff(state.failed.saturating_sub(1))
            }
        }
    }

    /// One try, its outcome stored for every asker; `running` was set by the caller. A try
    /// that panics is stored as failed, so that no asker waits for it forever.
    fn try_now(&self) {
        struct Unwinding<'a>(&'a CliProbe);
        impl Drop for Unwinding<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.finish(Err("the check of the claude CLI failed (a panic; see the log)".into()));
                }
            }
        }
        let unwinding = Unwinding(self);
        let outcome = answers(self.cli.as_ref());
        std::mem::forget(unwinding);
        self.finish(outcome);
    }

    fn finish(&self, outcome: Result<(), String>) {
        let mut state = self.lock();
        match &outcome {
            Ok(()) if state.failed > 0 => log::info!(target: "llm", "the claude CLI answers now; auto uses it"),
            Ok(()) => log::info!(target: "llm", "the claude CLI answered its first prompt; auto uses it"),
            Err(e) => log::warn!(target: "llm", "auto does not use the claude CLI: {e}"),
        }
        state.failed = if outcome.is_ok() { 0 } else { state.failed.saturating_add(1) };
        state.last = Some((outcome, self.clock.now()));
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
    use crate::clock::ManualMonotonic;
    use crate::llm::LlmError;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A CLI that refuses until `logged_in` (or panics while `panics`), counting its tries.
    #[derive(Default)]
    struct Cli {
        logged_in: AtomicBool,
        panics: AtomicBool,
        tries: AtomicUsize,
    }

    impl Provider for Arc<Cli> {
        fn name(&self) -> &'static str {
            "command"
        }

        fn complete(&self, _: &LlmRequest, _: Duration) -> Result<String, LlmError> {
            self.tries.fetch_add(1, Ordering::SeqCst);
            assert!(!self.panics.load(Ordering::SeqCst), "no thread for the child process");
            if self.logged_in.load(Ordering::SeqCst) {
                Ok("OK".into())
            } else {
                Err(LlmError::Auth("Not logged in · Please run /login".into()))
            }
        }
    }

    fn probe_of(cli: &Arc<Cli>, clock: &Arc<ManualMonotonic>) -> Arc<CliProbe> {
        Arc::new(CliProbe::new(Box::new(Arc::clone(cli)), clock.clone()))
    }

    /// Waits until no try is under way (one started by `start` runs on a thread of its own).
    fn settled(probe: &CliProbe) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while probe.lock().running {
            assert!(Instant::now() < deadline, "the try did not end");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_cli_refused_at_first_is_tried_again_on_the_back_off_and_the_next_job_after_a_login_uses_it() {
        let cli = Arc::new(Cli::default());
        let clock = ManualMonotonic::new();
        let probe = probe_of(&cli, &clock);
        assert_eq!(probe.lock().last, None, "nothing known before the first try");
        let refused = probe.outcome().unwrap_err();
        assert!(refused.contains("Not logged in"), "{refused}");
        assert_eq!(cli.tries.load(Ordering::SeqCst), 1);

        // The user logs in. Asked within the back-off (5 min): the refusal stands, no try.
        cli.logged_in.store(true, Ordering::SeqCst);
        clock.advance(4 * MINUTE);
        assert!(probe.outcome().is_err());
        assert!(probe.known().is_some_and(|o| o.is_err()));
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 1);

        // Past it, the job that asks makes the try and gets its answer: the CLI's.
        clock.advance(MINUTE);
        assert_eq!(probe.outcome(), Ok(()));
        assert_eq!(cli.tries.load(Ordering::SeqCst), 2);
        // A success is kept: no more tries, however long the worker runs.
        clock.advance(24 * 60 * MINUTE);
        probe.start();
        assert_eq!(probe.known(), Some(Ok(())));
        assert_eq!(probe.outcome(), Ok(()));
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_health_check_never_waits_it_starts_a_due_try_in_the_background() {
        let cli = Arc::new(Cli::default());
        let clock = ManualMonotonic::new();
        let probe = probe_of(&cli, &clock);
        probe.start();
        settled(&probe);
        assert!(probe.known().is_some_and(|o| o.is_err()));
        cli.logged_in.store(true, Ordering::SeqCst);
        clock.advance(5 * MINUTE);
        assert!(probe.known().is_some_and(|o| o.is_err()), "what is known so far");
        settled(&probe);
        assert_eq!(cli.tries.load(Ordering::SeqCst), 2);
        assert_eq!(probe.known(), Some(Ok(())));
    }

    #[test]
    fn each_try_that_fails_doubles_the_wait_up_to_an_hour() {
        let cli = Arc::new(Cli::default());
        let clock = ManualMonotonic::new();
        let probe = probe_of(&cli, &clock);
        assert!(probe.outcome().is_err());
        let mut tries = 1;
        // After try n (n ≥ 1) the next waits 5 min · 2^(n-1), at most an hour.
        for wait in [5, 10, 20, 40, 60, 60] {
            clock.advance((wait - 1) * MINUTE);
            assert!(probe.outcome().is_err());
            assert_eq!(cli.tries.load(Ordering::SeqCst), tries, "not yet, {wait} min wait");
            clock.advance(MINUTE);
            assert!(probe.outcome().is_err());
            tries += 1;
            assert_eq!(cli.tries.load(Ordering::SeqCst), tries, "tried after {wait} min");
        }
    }

    #[test]
    fn a_try_that_panics_fails_and_leaves_no_asker_waiting() {
        let cli = Arc::new(Cli::default());
        cli.panics.store(true, Ordering::SeqCst);
        let clock = ManualMonotonic::new();
        let probe = probe_of(&cli, &clock);
        // On a thread of its own, as at the worker's start: the thread dies, the try ends.
        probe.start();
        settled(&probe);
        let failed = probe.outcome().unwrap_err();
        assert!(failed.contains("panic"), "{failed}");
        // And tried again on the back-off, like any failure.
        cli.panics.store(false, Ordering::SeqCst);
        cli.logged_in.store(true, Ordering::SeqCst);
        clock.advance(5 * MINUTE);
        assert_eq!(probe.outcome(), Ok(()));
    }
}
