//! VibeLearn's job kinds: one file per kind, each implementing `queue::Handler`, and the
//! table of their timeouts and attempt limits (SPEC §5.1). Beside them: the prompts, one LLM
//! exchange with its repair (`llm_call`), what the quiz keeps of an answer (`question_checks`),
//! and the session's inputs (`session_data`).
//!
//! Handlers read through the queue's read pool and return their outputs as effects, which the
//! writer commits together with the job's `succeeded` state.

pub mod concepts;
pub mod ingest;
pub mod llm_call;
pub mod llm_usage;
pub mod optimize;
pub mod prompts;
pub mod question_checks;
pub mod quiz;
pub mod reteach;
pub mod session_data;
pub mod stack;
pub mod static_patterns;
pub mod sync;

use std::time::Duration;

use crate::config::Config;
use crate::queue::{KindSpec, NewJob, UniqueScope};

pub const INGEST: &str = "ingest";
pub const ANALYZE_STACK: &str = "analyze_stack";
pub const ANALYZE_STATIC: &str = "analyze_static";
pub const ANALYZE_CONCEPTS: &str = "analyze_concepts";
pub const ANALYZE_QUIZ: &str = "analyze_quiz";
pub const SYNC: &str = "sync";
/// Re-fits the learner's FSRS parameters (SPEC §7), weekly; not a pipeline step.
pub const OPTIMIZE_SCHEDULER: &str = "optimize_scheduler";

/// Every kind: the pipeline's in order after ingest, then the scheduler's fit.
pub const KIND_NAMES: [&str; 7] =
    [INGEST, ANALYZE_STACK, ANALYZE_STATIC, ANALYZE_CONCEPTS, ANALYZE_QUIZ, SYNC, OPTIMIZE_SCHEDULER];

/// The five analysis steps a Stop hook requests, in order.
pub const PIPELINE: [&str; 5] = [ANALYZE_STACK, ANALYZE_STATIC, ANALYZE_CONCEPTS, ANALYZE_QUIZ, SYNC];

/// The pipeline's dependency graph (SPEC §5.3): the steps whose output a step reads. Stack and
/// static feed concepts; concepts feed quiz; sync sends all of it. A step starts only after the
/// latest job of each of its prerequisites (for the same session) succeeded, and is held while
/// one of them is dead — it never runs on partial input (docs/state_machine.md).
pub fn prerequisites(kind: &str) -> &'static [&'static str] {
    match kind {
        ANALYZE_CONCEPTS => &[ANALYZE_STACK, ANALYZE_STATIC],
        ANALYZE_QUIZ => &[ANALYZE_CONCEPTS],
        SYNC => &[ANALYZE_STACK, ANALYZE_STATIC, ANALYZE_CONCEPTS, ANALYZE_QUIZ],
        _ => &[],
    }
}

/// The gate of the upstream's credentials (`config.json`'s account key).
pub const UPSTREAM_GATE: &str = "upstream";

/// Ingest jobs a job thread claims at once (one per session lane at most).
pub const INGEST_BATCH: usize = 8;

/// Default `(timeout, max attempts)` per kind (SPEC §5.1).
pub fn default_spec(kind: &str) -> Option<KindSpec> {
    let (secs, max_attempts) = match kind {
        INGEST => (10, 5),
        ANALYZE_STACK => (60, 3),
        ANALYZE_STATIC => (60, 3),
        ANALYZE_CONCEPTS => (120, 6),
        ANALYZE_QUIZ => (120, 6),
        SYNC => (60, 12),
        // A fit of a few thousand reviews takes seconds; a year of daily use, under a minute.
        OPTIMIZE_SCHEDULER => (300, 3),
        _ => return None,
    };
    let spec = KindSpec::new(Duration::from_secs(secs), max_attempts);
    // Ingest is short (a few inserts): a thread takes several at once and records them in one
    // transaction. The analysis steps and sync stay one at a time.
    Some(if kind == INGEST { spec.batched(INGEST_BATCH) } else { spec })
}

/// A kind's spec with the configured timeout override applied.
pub fn spec(config: &Config, kind: &str) -> Option<KindSpec> {
    default_spec(kind).map(|spec| KindSpec { timeout: config.kind_timeout(kind, spec.timeout), ..spec })
}

/// The session id an analysis job is for; a payload without one is dead at once.
pub fn session_id_of(job: &crate::queue::ClaimedJob) -> Result<String, crate::queue::Outcome> {
    job.payload
        .get("contentSessionId")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .ok_or_else(|| crate::queue::Outcome::dead("the job payload has no contentSessionId"))
}

/// The outcome of a step asked for a session nothing was ever recorded for: retrying cannot help.
pub fn missing_session(session_id: &str) -> crate::queue::Outcome {
    crate::queue::Outcome::dead(format!("no session {session_id:?} has been recorded"))
}

/// The lane of a session's jobs: its events and steps start in enqueue order.
pub fn lane(session_id: &str) -> String {
    format!("session:{session_id}")
}

/// The unique key of a session's analysis step: dedup, and what its dependents name.
fn step_key(kind: &str, session_id: &str) -> String {
    format!("{kind}:{session_id}")
}

/// Whether a session has events newer than its last analysis request: SessionEnd analyses such
/// a session (its Stop never came), and only such a one, so a session is not analysed twice.
///
/// Compared by job id, in the session's lane: the last observation or file-edit job (found
/// through the ingest keys `tool:<session>:…` / `event:<session>:…`, an index range) against
/// the last `analyze_stack` job. When the event jobs are gone (pruned), the stored
/// observations' times stand in for them.
pub fn session_needs_analysis(conn: &rusqlite::Connection, session_id: &str) -> rusqlite::Result<bool> {
    let (last_request, requested_at): (Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT MAX(id), MAX(created_at) FROM jobs WHERE unique_key = ?1")?
        .query_row([step_key(ANALYZE_STACK, session_id)], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let mut last_event: Option<i64> = None;
    for prefix in ["tool", "event"] {
        let (from, to) = (format!("{prefix}:{session_id}:"), format!("{prefix}:{session_id};"));
        let id: Option<i64> = conn
            .prepare_cached(
                "SELECT MAX(id) FROM jobs WHERE unique_key >= ?1 AND unique_key < ?2 AND lane = ?3 \
                 AND kind = 'ingest' AND state NOT IN ('dead','cancelled') \
                 AND json_extract(payload, '$.event') IN ('observation','file_edit')",
            )?
            .query_row(rusqlite::params![from, to, lane(session_id)], |r| r.get(0))?;
        last_event = last_event.max(id);
    }
    if let Some(event) = last_event {
        return Ok(last_request.is_none_or(|request| event > request));
    }
    let last_observed: Option<i64> = conn
        .prepare_cached("SELECT MAX(created_at) FROM observations WHERE session_id = ?1")?
        .query_row([session_id], |r| r.get(0))?;
    Ok(last_observed.is_some_and(|at| requested_at.is_none_or(|requested| at > requested)))
}

/// An analysis step for a session, after the latest job of each of its prerequisites;
/// deduplicated while an identical one (with the same prerequisites) is still waiting.
pub fn analysis_job(kind: &str, session_id: &str, payload: serde_json::Value) -> NewJob {
    let max_attempts = default_spec(kind).map_or(3, |s| s.max_attempts);
    NewJob::new(kind, payload, max_attempts)
        .lane(lane(session_id))
        .unique(step_key(kind, session_id), UniqueScope::Waiting)
        .after_keys(prerequisites(kind).iter().map(|prerequisite| step_key(prerequisite, session_id)))
}

/// The analysis steps a Stop (or a SessionEnd without one) queues, in order: the pipeline,
/// without the upload when `VIBELEARN_AUTO_SYNC` is off.
pub fn pipeline_steps(auto_sync: bool) -> impl Iterator<Item = &'static str> {
    PIPELINE.into_iter().filter(move |kind| auto_sync || *kind != SYNC)
}

/// The provider the worker's jobs use, chosen once at start; a `claude` CLI that `auto` found
/// starts its first try in the background here (SPEC §6.5, `llm::probe`).
pub fn choose_provider(config: &Config) -> concepts::ProviderChoice {
    let choice = decide(config);
    if let Ok(crate::llm::Selected::Remote(provider)) = &choice {
        provider.start_check();
    }
    // What the worker runs on and what made the choice, in the log as in `/api/health`.
    let (described, source) = (describe_provider(&choice), provider_source(config, &choice));
    log::info!(target: "llm", "provider: {described} (chosen by {source})");
    if let Some(note) = provider_note(config) {
        log::info!(target: "llm", "{note}");
    }
    std::sync::Arc::new(choice)
}

/// The handlers of every kind, with their configured specs, using `choice` (from
/// [`choose_provider`]) for the LLM steps.
pub fn registry(
    config: &Config,
    queue: &crate::queue::Queue,
    choice: concepts::ProviderChoice,
) -> crate::queue::Registry {
    let mut registry = crate::queue::Registry::default();
    let spec_of = |kind| spec(config, kind).expect("every kind in KIND_NAMES has a default spec");
    add_gates(&mut registry, config, queue, &choice);
    let provider = choice;
    let llm = llm_call::Limits {
        timeout: config.llm_timeout(),
        budget: llm_usage::Budget {
            queue: queue.clone(),
            daily_tokens: config.llm_daily_tokens(),
            day: config.learner_day(),
        },
    };
    registry.register(INGEST, spec_of(INGEST), ingest::IngestHandler);
    registry.register(
        ANALYZE_STACK,
        spec_of(ANALYZE_STACK),
        stack::StackHandler {
            queue: queue.clone(),
            read_manifests_from_disk: !config.flag(crate::config::ACCEPT_UNKEYED_EVENTS),
        },
    );
    registry.register(ANALYZE_STATIC, spec_of(ANALYZE_STATIC), static_patterns::StaticHandler { queue: queue.clone() });
    registry.register(
        ANALYZE_CONCEPTS,
        spec_of(ANALYZE_CONCEPTS),
        concepts::ConceptsHandler { queue: queue.clone(), provider: provider.clone(), llm: llm.clone() },
    );
    registry.register(
        ANALYZE_QUIZ,
        spec_of(ANALYZE_QUIZ),
        quiz::QuizHandler {
            queue: queue.clone(),
            provider,
            llm,
            scheduling: crate::learning::cards::SchedulerSettings::from_config(config),
        },
    );
    registry.register(
        OPTIMIZE_SCHEDULER,
        spec_of(OPTIMIZE_SCHEDULER),
        optimize::OptimizeHandler { queue: queue.clone(), day: config.learner_day() },
    );
    registry.register(
        SYNC,
        spec_of(SYNC),
        sync::SyncHandler {
            queue: queue.clone(),
            data_dir: config.data_dir.clone(),
            api_url: config.get("VIBELEARN_API_URL").to_owned(),
            include_snippets: config.flag("VIBELEARN_SYNC_SNIPPETS"),
        },
    );
    registry
}

/// The registry's gates: the LLM provider's credentials (and its daily budget), for the steps
/// that call it, and the upstream account's, for sync.
fn add_gates(
    registry: &mut crate::queue::Registry,
    config: &Config,
    queue: &crate::queue::Queue,
    choice: &concepts::ProviderChoice,
) {
    let settings = provider_settings(config);
    // The gate of the LLM provider's credentials: the provider in use, or the one whose key
    // is missing. Offline needs none.
    let llm_gate = match choice.as_ref() {
        Ok(crate::llm::Selected::Remote(provider)) => Some(provider.name()),
        Ok(crate::llm::Selected::Offline) => None,
        Err(problem) => problem.provider_without_key(),
    };
    if let Some(gate) = llm_gate {
        // Read once: the provider is built once, at worker start, so new credentials take a
        // restart, which compares this against the version the gate paused under.
        // The day is part of the version, so a pause for the spent daily budget lifts the next
        // day (a refused key then gets one more try a day: one refused call, no tokens).
        let version = credentials_fingerprint(&settings.credentials_text());
        let clock = queue.clone();
        let day = config.learner_day();
        registry
            .gate(gate, &[ANALYZE_CONCEPTS, ANALYZE_QUIZ], move || format!("{version}:{}", day.day_of(clock.now())));
        // Not logged in, no credit: tried again on its own after a back-off (issue 31); a
        // spent budget lifts with the day instead.
        let probed = std::sync::Arc::clone(choice);
        registry.gate_probe(gate, move |reason| {
            let Ok(crate::llm::Selected::Remote(provider)) = probed.as_ref() else { return None };
            (!reason.contains(llm_usage::BUDGET_REASON_PREFIX)).then(|| crate::llm::probe::answers(provider.as_ref()))
        });
    }
    let data_dir = config.data_dir.clone();
    let api_url = config.get("VIBELEARN_API_URL").to_owned();
    // Read live: `vl login` writes config.json while the worker runs.
    registry.gate(UPSTREAM_GATE, &[SYNC], move || {
        credentials_fingerprint(&format!("{api_url}\n{}", sync::api_key(&data_dir).unwrap_or_default()))
    });
}

/// The provider a choice makes, for people: its name and model (`anthropic claude-sonnet-4-5`,
/// `the claude CLI (its own default model)`, `offline (no LLM, free)`), or what to fix.
pub fn describe_provider(choice: &Result<crate::llm::Selected, crate::llm::SelectError>) -> String {
    match choice {
        Ok(crate::llm::Selected::Offline) => "offline (no LLM, free)".to_owned(),
        Ok(crate::llm::Selected::Remote(provider)) => match provider.model() {
            "" => format!("{} ({})", provider.name(), provider.description()),
            model => format!("{} {model}", provider.name()),
        },
        Err(problem) => format!("misconfigured — {problem}"),
    }
}

/// Why the worker's `auto` did not use the `claude` CLI it found, in the CLI's own words and
/// with what to do, while its last try failed (SPEC §6.5); `None` before the first try ends
/// or once one succeeded. Never waits (it may start a try again, `llm::probe`).
pub fn cli_notice(choice: &Result<crate::llm::Selected, crate::llm::SelectError>) -> Option<String> {
    let Ok(crate::llm::Selected::Remote(provider)) = choice else { return None };
    let why = provider.known_unavailable()?;
    Some(format!(
        "auto did not choose the claude CLI, so questions come from the offline catalogue: it answered \
         \"{why}\"; to use it, log it in (run `claude`, then /login; or, if it could not reach its API, check \
         the network): the worker tries it again before its next job, at most an hour after the last try, \
         or at once when restarted (`vl worker stop`, then `vl worker start`); or choose a provider with \
         `vl provider <name>`"
    ))
}

/// The worker's provider now, for `/api/health`: `described` (from start) while the `claude`
/// CLI's try is under way or after it succeeded, offline once it failed.
pub fn provider_now(described: &str, choice: &Result<crate::llm::Selected, crate::llm::SelectError>) -> String {
    match cli_notice(choice) {
        Some(_) => "offline (no LLM, free; auto did not choose the claude CLI: see the notice)".to_owned(),
        None => described.to_owned(),
    }
}

/// What a choice costs, for `vl install` (SPEC §6.5).
pub fn provider_cost(choice: &Result<crate::llm::Selected, crate::llm::SelectError>) -> &'static str {
    match choice {
        Ok(crate::llm::Selected::Offline) => "nothing leaves this machine",
        Ok(crate::llm::Selected::Remote(provider)) if provider.name() == "command" => {
            "runs a command on this machine (the claude CLI uses your Claude login, usually your plan)"
        }
        Ok(crate::llm::Selected::Remote(_)) => "billed per token to that API key's account",
        Err(_) => "nothing until the setting is fixed",
    }
}

/// What `auto` left alone, for `vl status`, `vl install` and the worker's log: each API key
/// that is set (in this process's environment or settings.json) but not used, because a key
/// is used only for the provider named for VibeLearn (`llm::select`), with the one command
/// that turns it on.
pub fn provider_note(config: &Config) -> Option<String> {
    let unused = provider_settings(config).unused_keys();
    if unused.is_empty() {
        return None;
    }
    let names: Vec<&str> = unused.iter().map(|(setting, _)| *setting).collect();
    let commands: Vec<String> = unused.iter().map(|(_, provider)| format!("`vl provider {provider}`")).collect();
    let (is, it) = if unused.len() == 1 { ("is", "it") } else { ("are", "one") };
    Some(format!(
        "{} {is} set but not used: VibeLearn spends an API key only on the provider you choose for it; \
         to use {it}, run {}",
        names.join(", "),
        commands.join(" or ")
    ))
}

/// The one provider decision (SPEC §6.5): what install, status, the quiz's grader and the
/// worker all ask, so each names the same provider for the same settings.
pub fn decide(config: &Config) -> Result<crate::llm::Selected, crate::llm::SelectError> {
    crate::llm::select(&provider_settings(config))
}

/// What made the decision (`VIBELEARN_PROVIDER`, `settings.json`, `claude CLI`, or `default`:
/// nothing named and no `claude` CLI answering), for `/api/health`, `vl status` and `vl install`.
pub fn provider_source(
    config: &Config,
    choice: &Result<crate::llm::Selected, crate::llm::SelectError>,
) -> &'static str {
    provider_settings(config).chosen_by(choice)
}

/// The provider settings from the resolved configuration. Every key is handed over: which
/// one may be spent is `llm::select`'s rule, in one place.
pub fn provider_settings(config: &Config) -> crate::llm::ProviderSettings {
    let owned = |key: &str| config.optional(key).map(str::to_owned);
    let chosen_in = match config.origin("VIBELEARN_PROVIDER") {
        crate::config::Origin::Environment => crate::llm::CHOSEN_IN_ENV,
        crate::config::Origin::SettingsFile => crate::llm::CHOSEN_IN_FILE,
        crate::config::Origin::Default => "",
    };
    crate::llm::ProviderSettings {
        provider: config.get("VIBELEARN_PROVIDER").to_owned(),
        anthropic_key: owned("ANTHROPIC_API_KEY"),
        openai_key: owned("OPENAI_API_KEY"),
        gemini_key: owned("GEMINI_API_KEY"),
        openrouter_key: owned("OPENROUTER_API_KEY"),
        anthropic_model: config.get("VIBELEARN_ANTHROPIC_MODEL").to_owned(),
        openai_model: config.get("VIBELEARN_OPENAI_MODEL").to_owned(),
        gemini_model: config.get("VIBELEARN_GEMINI_MODEL").to_owned(),
        openrouter_model: config.get("VIBELEARN_OPENROUTER_MODEL").to_owned(),
        anthropic_base_url: config.get("VIBELEARN_ANTHROPIC_BASE_URL").to_owned(),
        openai_base_url: config.get("VIBELEARN_OPENAI_BASE_URL").to_owned(),
        openrouter_base_url: config.get("VIBELEARN_OPENROUTER_BASE_URL").to_owned(),
        gemini_base_url: config.get("VIBELEARN_GEMINI_BASE_URL").to_owned(),
        llm_command: owned("VIBELEARN_LLM_COMMAND"),
        path_var: config.path_var.clone(),
        chosen_in,
    }
}

/// Prefix of the error of a job that a remote refused for its credentials (its gate pauses).
pub const AUTH_ERROR_PREFIX: &str = "not authorised";

/// Prefix of the error of a job whose provider could not be reached at all (DNS, refused
/// connection, network down, TLS): its gate pauses as for a refusal, and is probed.
pub const UNREACHABLE_ERROR_PREFIX: &str = "unreachable";

/// A short, one-way fingerprint of credentials: a paused gate compares it, never the secret.
fn credentials_fingerprint(text: &str) -> String {
    session_data::sha256_hex(text.as_bytes())[..16].to_owned()
}

/// The gate the worker probes on its own while it is paused (`add_gates`): the remote LLM
/// provider it was started with. A provider whose key is missing has nothing to probe.
pub fn probed_gate(choice: &Result<crate::llm::Selected, crate::llm::SelectError>) -> Option<&'static str> {
    match choice {
        Ok(crate::llm::Selected::Remote(provider)) => Some(provider.name()),
        _ => None,
    }
}

/// What lifts a paused gate's pause, finishing "they resume …" (`probed`: [`probed_gate`] of
/// the worker's provider).
pub fn resumes_when(gate: &crate::queue::Gate, probed: Option<&str>) -> &'static str {
    if gate.reason.as_deref().is_some_and(|r| r.contains(llm_usage::BUDGET_REASON_PREFIX)) {
        "when your next day begins (VIBELEARN_DAY_STARTS_AT)"
    } else if gate.name == UPSTREAM_GATE {
        "when its credentials change"
    } else if probed == Some(gate.name.as_str()) {
        "on their own once it answers again (it is tried 5 min after the pause, then at doubling intervals up to hourly) or when its credentials change"
    } else {
        "once its key is set and the worker restarted (`vl worker stop`, then `vl worker start`)"
    }
}

/// Notices for `/api/health` and `vl status`: each paused provider, why, what waits on it,
/// and what lifts the pause ([`resumes_when`]).
pub fn notices_of(gates: &[crate::queue::Gate], probed: Option<&str>) -> Vec<String> {
    gates
        .iter()
        .filter(|gate| gate.state == crate::queue::GateState::Paused)
        .map(|gate| {
            let reason = gate.reason.as_deref().unwrap_or("refused");
            let when = resumes_when(gate, probed);
            format!(
                "{} paused: {} — {} job{} held; they resume {when}, or with `vl jobs resume --provider {}`",
                gate.name,
                reason,
                gate.held,
                if gate.held == 1 { "" } else { "s" },
                gate.name
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_pause_notice_says_what_lifts_it() {
        let paused = |name: &str, reason: &str| crate::queue::Gate {
            name: name.into(),
            state: crate::queue::GateState::Paused,
            reason: Some(reason.into()),
            changed_at: 0,
            held: 2,
        };
        let refused = paused("anthropic", "not authorised: anthropic: 401");
        let missing =
            paused("anthropic", "not authorised: VIBELEARN_PROVIDER=anthropic but ANTHROPIC_API_KEY is not set");
        let budget = paused("anthropic", &format!("{} 210000 LLM tokens today", llm_usage::BUDGET_REASON_PREFIX));
        // The worker probes the provider it runs; a missing key leaves it nothing to run.
        assert!(resumes_when(&refused, Some("anthropic")).starts_with("on their own once it answers again"));
        assert!(resumes_when(&missing, None).starts_with("once its key is set and the worker restarted"));
        assert!(resumes_when(&refused, Some("openai")).starts_with("once its key is set"), "another provider's gate");
        assert!(resumes_when(&budget, Some("anthropic")).starts_with("when your next day begins"), "not a UTC day");
        assert_eq!(resumes_when(&paused(UPSTREAM_GATE, "401"), None), "when its credentials change");
        let open = crate::queue::Gate { state: crate::queue::GateState::Open, ..refused.clone() };
        let notices = notices_of(&[missing, open], None);
        assert_eq!(notices.len(), 1, "only paused gates: {notices:?}");
        assert!(
            notices[0].starts_with("anthropic paused: not authorised: VIBELEARN_PROVIDER=anthropic"),
            "{notices:?}"
        );
        assert!(notices[0].contains("2 jobs held; they resume once its key is set"), "{notices:?}");
    }

    fn config(pairs: &[(&str, &str)]) -> Config {
        config_with_file(pairs, None)
    }

    fn config_with_file(pairs: &[(&str, &str)], settings: Option<&str>) -> Config {
        let dir = tempfile::tempdir().unwrap();
        if let Some(settings) = settings {
            std::fs::write(dir.path().join("settings.json"), settings).unwrap();
        }
        let mut env: BTreeMap<String, String> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        env.insert("VIBELEARN_DATA_DIR".into(), dir.path().to_string_lossy().into_owned());
        Config::resolve(&env)
    }

    #[test]
    fn a_key_is_spent_only_on_the_provider_named_for_vibelearn() {
        let key = ("ANTHROPIC_API_KEY", "sk-ant-from-an-agent-0123456789");
        // Wherever the key comes from — an agent's environment, the shell, settings.json —
        // `auto` leaves it alone, names it, and says which command turns it on.
        for unnamed in [
            config(&[key, ("CLAUDECODE", "1")]),
            config(&[key]),
            config_with_file(&[], Some(r#"{"ANTHROPIC_API_KEY": "sk-ant-in-file-0123456789"}"#)),
        ] {
            let choice = decide(&unnamed);
            assert_eq!(choice.as_ref().map(|c| c.name()).ok(), Some("offline"), "no claude CLI on this PATH");
            assert_eq!(provider_source(&unnamed, &choice), crate::llm::CHOSEN_BY_DEFAULT);
            let note = provider_note(&unnamed).expect("the unused key is named");
            assert!(note.contains("ANTHROPIC_API_KEY is set but not used"), "{note}");
            assert!(note.contains("`vl provider anthropic`"), "{note}");
        }
        // Named in the environment or in settings.json: that provider, with the key from either.
        let named = config(&[key, ("VIBELEARN_PROVIDER", "anthropic")]);
        let choice = decide(&named);
        assert_eq!(choice.as_ref().map(|c| c.name()).ok(), Some("anthropic"));
        assert_eq!(provider_source(&named, &choice), "VIBELEARN_PROVIDER");
        assert_eq!(provider_note(&named), None);
        let in_file =
            config_with_file(&[("GEMINI_API_KEY", "g-key-0123456789")], Some(r#"{"VIBELEARN_PROVIDER": "gemini"}"#));
        let choice = decide(&in_file);
        assert_eq!(choice.as_ref().map(|c| c.name()).ok(), Some("gemini"), "the user's own key for it");
        assert_eq!(provider_source(&in_file, &choice), "settings.json");
    }
}
