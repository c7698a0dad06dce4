//! The route table (one `match`) and the small routes: core, session events, analysis, reads.
//! Queue admin lives in [`jobs`], metrics text in [`metrics`], the worker's proof and the
//! dashboard's one-time codes in [`proof`]; the page at `/` is
//! [`crate::http::dashboard`].

pub mod jobs;
pub mod metrics;
pub mod proof;
pub mod table;

use std::sync::atomic::Ordering;

use crate::http::wire::{Request, Response};
use serde_json::json;

use super::error::{ApiError, json_response};
use super::server::{ApiRequest, AppContext, ok};
use crate::event::EventKind;
use crate::intake::{self, Reply};
use crate::{learning, reads};

/// Debug builds only: the setting that turns on `POST /api/debug/panic`, a route that panics,
/// so the tests can check that a panicking route is answered 500 and gives its slot back.
/// Two gates: release builds (what `cargo install` and the benchmarks build) never panic there
/// (the route answers 404), and a debug build does only when the setting is "1" — read, like
/// every setting, from `settings.json` and then the environment (the environment alone is
/// read only for keys the file or the defaults name, so a test writes it to the file).
pub const DEBUG_PANIC_SETTING: &str = "VIBELEARN_DEBUG_PANIC_ROUTE";

/// Runs the route the guard found in [`table::ROUTES`] (who may call it was checked there).
pub fn dispatch(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    use table::RouteId::*;
    let param = |i: usize| req.params.get(i).map(String::as_str).unwrap_or_default();
    match req.route.id {
        Dashboard => Ok(crate::http::dashboard::page()),
        Health => Ok(health(ctx, req.credential.is_user())),
        Readiness => Ok(readiness(ctx)),
        Version => Ok(ok(json!({ "version": env!("CARGO_PKG_VERSION") }))),
        Proof => proof::answer(ctx, req),
        DashboardCode => proof::issue_code(ctx),
        DashboardExchange => proof::exchange_code(ctx, req),
        Metrics => Ok(metrics::render(ctx)),
        Shutdown => {
            let _ = ctx.shutdown.try_send(());
            Ok(json_response(202, &json!({ "status": "shutting_down" })))
        }
        SessionInit => session_event(ctx, req, EventKind::Init),
        SessionObservation => session_event(ctx, req, EventKind::Observation),
        SessionFileEdit => session_event(ctx, req, EventKind::FileEdit),
        SessionComplete => session_event(ctx, req, EventKind::Complete),
        AnalyzeStack => analysis(ctx, req, crate::jobs::ANALYZE_STACK),
        AnalyzeStatic => analysis(ctx, req, crate::jobs::ANALYZE_STATIC),
        AnalyzeConcepts => analysis(ctx, req, crate::jobs::ANALYZE_CONCEPTS),
        AnalyzeQuiz => analysis(ctx, req, crate::jobs::ANALYZE_QUIZ),
        Sync => analysis(ctx, req, crate::jobs::SYNC),
        Pipeline => read(ctx, |c| reads::pipeline(c, param(0))),
        Summary => summary(ctx, param(0)),
        Profile => read(ctx, |c| learning::mastery::profile_at(c, &scheduler(ctx, c)?, ctx.queue.now())),
        Overview => read(ctx, |c| {
            learning::summary::overview(c, &scheduler(ctx, c)?, ctx.queue.now(), ctx.config.new_per_day() as usize)
        }),
        Activity => {
            let days = number_param(req, "days", 30)?;
            read(ctx, |c| reads::activity(c, &ctx.config.learner_day(), ctx.queue.now(), days))
        }
        QuestionsDue => {
            let limit = number_param(req, "limit", 20)?;
            let session = req.param("session");
            read(ctx, |c| learning::cards::due_questions(c, ctx.queue.now(), session.as_deref(), limit))
        }
        Sessions => {
            let limit = number_param(req, "limit", 20)?;
            read(ctx, |c| reads::sessions(c, limit))
        }
        JobsList | JobsStats | JobsThroughput | JobsGates | JobsPrune | JobsReplayMatching | JobsResume | JobShow
        | JobReplay | JobCancel => jobs::dispatch(ctx, req),
        DebugPanic => debug_panic(ctx, req),
    }
}

/// The learner's scheduler, with the fitted parameters, the settings and the learner's days.
fn scheduler(ctx: &AppContext, conn: &rusqlite::Connection) -> rusqlite::Result<crate::learn::schedule::Scheduler> {
    learning::cards::scheduler_for(conn, &ctx.config)
}

fn session_event(ctx: &AppContext, req: &ApiRequest<'_>, kind: EventKind) -> Result<Response, ApiError> {
    enqueue_reply(intake::submit_event(&ctx.queue, &ctx.intake, kind, req.body.clone()))
}

fn analysis(ctx: &AppContext, req: &ApiRequest<'_>, kind: &str) -> Result<Response, ApiError> {
    enqueue_reply(intake::submit_analysis(&ctx.queue, &ctx.intake, kind, req.body.clone()))
}

#[cfg(debug_assertions)]
fn debug_panic(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    if ctx.config.get(DEBUG_PANIC_SETTING) == "1" {
        panic!("POST /api/debug/panic: a route panicking on purpose ({DEBUG_PANIC_SETTING}=1, a debug build)")
    }
    Err(unknown_route(req.raw))
}

#[cfg(not(debug_assertions))]
fn debug_panic(_ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    Err(unknown_route(req.raw))
}

pub fn unknown_route(req: &Request) -> ApiError {
    ApiError::not_found(format!("there is no route {} {}", req.method, req.target))
}

pub fn method_not_allowed(req: &Request) -> ApiError {
    ApiError::new(405, "method_not_allowed", format!("{} is not allowed on {}", req.method, req.target))
}

/// A non-negative integer query parameter.
pub fn number_param(req: &ApiRequest<'_>, name: &str, default: usize) -> Result<usize, ApiError> {
    match req.param(name) {
        None => Ok(default),
        Some(raw) => raw.parse().map_err(|_| {
            ApiError::bad_request(format!("the query parameter {name:?} must be a non-negative integer, not {raw:?}"))
        }),
    }
}

fn enqueue_reply(result: Result<Reply, intake::IntakeError>) -> Result<Response, ApiError> {
    let reply = result?;
    let status = if matches!(reply, Reply::Queued { .. }) { 202 } else { 200 };
    Ok(json_response(status, &reply.to_json()))
}

fn read<T: serde::Serialize>(
    ctx: &AppContext,
    query: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
) -> Result<Response, ApiError> {
    let conn = ctx.queue.read()?;
    Ok(ok(query(&conn)?))
}

fn summary(ctx: &AppContext, id: &str) -> Result<Response, ApiError> {
    let conn = ctx.queue.read()?;
    match reads::session_summary(&conn, id)? {
        Some(summary) => Ok(ok(summary)),
        None => Err(ApiError::not_found(format!("no session {id:?}"))),
    }
}

/// How old a write-probe result may be before a new probe starts.
const PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// A probe still waiting after this long means the database is not taking writes.
const PROBE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether the database still takes writes. The probe (a one-row upsert through the writer)
/// runs on its own thread, so `/api/health` answers at once even when the database is locked
/// and the probe waits out the busy timeout; a probe outstanding for [`PROBE_PATIENCE`] counts
/// as "cannot be written".
fn database_writable(ctx: &AppContext) -> bool {
    let mut probe = ctx.write_probe.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(started) = probe.in_flight {
        return probe.writable && started.elapsed() < PROBE_PATIENCE;
    }
    if probe.checked_at.is_some_and(|at| at.elapsed() < PROBE_EVERY) {
        return probe.writable;
    }
    probe.in_flight = Some(std::time::Instant::now());
    let state = std::sync::Arc::clone(&ctx.write_probe);
    let writer = ctx.queue.writer().clone();
    let spawned = std::thread::Builder::new().name("vl-write-probe".into()).spawn(move || {
        let writable = writer
            .call(false, crate::queue::Durability::Relaxed, |conn, now| {
                conn.execute(
                    "INSERT INTO queue_meta (key, value) VALUES ('health_probe', ?1) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [now.to_string()],
                )?;
                Ok(())
            })
            .is_ok();
        let mut probe = state.lock().unwrap_or_else(|p| p.into_inner());
        *probe =
            crate::http::server::WriteProbe { writable, checked_at: Some(std::time::Instant::now()), in_flight: None };
    });
    if spawned.is_err() {
        probe.in_flight = None;
    }
    probe.writable
}

/// Degraded while an enqueue failed on the database this recently and none committed since.
const ENQUEUE_FAILURE_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

/// Degraded when the runner has not ticked for this long.
const RUNNER_STALL_MS: i64 = 10_000;

/// `GET /api/health`. Public, so what it tells anyone is counts and states; the paused
/// providers, their notices and the settings warning (which names a path) go only to a caller
/// with the key.
fn health(ctx: &AppContext, detailed: bool) -> Response {
    use crate::queue::JobState::*;
    let counts = ctx
        .queue
        .read()
        .ok()
        .and_then(|c| crate::queue::store::count_by_state(&c, &[Available, Running, Retryable, Dead, Held]).ok());
    let count = |state| counts.as_ref().and_then(|c| c.get(&state).copied()).unwrap_or(0);
    let runner = ctx.runner.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|r| r.state());
    let writable = database_writable(ctx) && !ctx.queue.enqueues_failing(ENQUEUE_FAILURE_WINDOW);
    let runner_ok = runner.is_some_and(|r| r.last_tick_ms_ago < RUNNER_STALL_MS);
    let healthy = writable && runner_ok && counts.is_some();
    let mut problems = Vec::new();
    if !writable {
        problems.push("the database cannot be written");
    }
    if !runner_ok {
        problems.push("the job runner has not ticked for 10 s");
    }
    // One read of the gates serves both the paused list and the notices.
    let paused: Vec<crate::queue::Gate> = ctx
        .queue
        .gates()
        .map(|gates| gates.into_iter().filter(|g| g.state == crate::queue::GateState::Paused).collect())
        .unwrap_or_default();
    let mut body = json!({
        "status": if healthy { "ok" } else { "degraded" },
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptime_ms": ctx.started.elapsed().as_millis() as u64,
        "port": ctx.port,
        "queue": {
            "available": count(Available),
            "running": count(Running),
            "retryable": count(Retryable),
            "dead": count(Dead),
            "held": count(Held),
        },
        "paused_count": paused.len(),
        "runner": runner.map_or(json!(null), |r| json!(r)),
        "problems": problems,
    });
    if detailed {
        let usage = ctx
            .queue
            .read()
            .ok()
            .and_then(|c| crate::jobs::llm_usage::today(&c, &ctx.config.learner_day(), ctx.queue.now()).ok());
        let usage = usage.unwrap_or_default();
        let cli_notice = crate::jobs::cli_notice(&ctx.llm_choice);
        body["llm"] = json!({
            "description": crate::jobs::provider_now(&ctx.provider, &ctx.llm_choice), "calls_today": usage.calls, "tokens_today": usage.tokens,
            "daily_tokens": ctx.daily_tokens,
            // Whether its calls spend tokens (the offline provider makes none): `vl status` says
            // what a session costs only then.
            "uses_tokens": matches!(ctx.llm_choice.as_ref(), Ok(crate::llm::Selected::Remote(_))),
            // What made the decision (issue 42): VIBELEARN_PROVIDER, settings.json, claude CLI.
            "source": crate::jobs::provider_source(&ctx.config, &ctx.llm_choice),
            // The keys this worker sees but does not spend, with the command that turns one on.
            "note": crate::jobs::provider_note(&ctx.config),
        });
        let probed = crate::jobs::probed_gate(&ctx.llm_choice);
        body["paused"] = paused
            .iter()
            .map(|gate| {
                let mut shown = json!(gate);
                shown["resumes"] = json!(crate::jobs::resumes_when(gate, probed));
                shown
            })
            .collect();
        body["settings_warning"] = json!(ctx.config.settings_warning);
        body["provider_notice"] = json!(cli_notice);
        body["notices"] =
            json!(cli_notice.into_iter().chain(crate::jobs::notices_of(&paused, probed)).collect::<Vec<_>>());
    }
    json_response(if healthy { 200 } else { 503 }, &body)
}

fn readiness(ctx: &AppContext) -> Response {
    if ctx.ready.load(Ordering::SeqCst) {
        ok(json!({ "status": "ready" }))
    } else {
        json_response(503, &json!({ "status": "starting" }))
    }
}
