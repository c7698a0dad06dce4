//! Queue admin routes (SPEC §4.5): list with filters and keyset paging, show with attempts,
//! replay one or many, cancel, stats, throughput (the dashboard's chart), prune, the gates
//! (paused providers) and their resume. Who may call each is in [`super::table`]: reads need the user key, mutations the admin token.

use serde_json::json;

use super::number_param;
use crate::http::error::{ApiError, json_response};
use crate::http::server::{ApiRequest, AppContext, ok};
use crate::http::wire::Response;
use crate::queue::store::{ListFilter, Retention};
use crate::queue::{JobId, JobState};

/// The queue routes of [`super::table::ROUTES`]; the guard already checked who may call them.
pub fn dispatch(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    use super::table::RouteId::*;
    let id = || job_id(req.params.first().map(String::as_str).unwrap_or_default());
    match req.route.id {
        JobsList => list(ctx, req),
        JobsStats => ctx.queue.stats().map(|s| ok(json!(s))).map_err(Into::into),
        JobsThroughput => throughput(ctx, req),
        JobsGates => ctx.queue.gates().map(|g| ok(json!({ "gates": g }))).map_err(Into::into),
        JobsPrune => prune(ctx),
        JobsReplayMatching => replay_matching(ctx, req),
        JobsResume => resume(ctx, req),
        JobShow => show(ctx, id()?),
        JobReplay => replay_one(ctx, id()?),
        JobCancel => cancel(ctx, id()?),
        other => unreachable!("{other:?} is not a queue route; routes::dispatch sends only queue routes here"),
    }
}

fn job_id(raw: &str) -> Result<JobId, ApiError> {
    raw.parse().map(JobId).map_err(|_| ApiError::bad_request(format!("{raw:?} is not a job id")))
}

fn state_param(raw: Option<String>) -> Result<Option<JobState>, ApiError> {
    raw.map(|s| {
        JobState::parse(&s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown state {s:?}; use one of available, running, succeeded, retryable, dead, cancelled, held"
            ))
        })
    })
    .transpose()
}

fn list(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let filter = ListFilter {
        state: state_param(req.param("state"))?,
        kind: req.param("kind"),
        lane: req.param("session").map(|s| crate::jobs::lane(&s)),
        since: req
            .param("since")
            .map(|s| s.parse())
            .transpose()
            .map_err(|_| ApiError::bad_request("since must be ms since the epoch"))?,
        before: req.param("before").map(|b| job_id(&b)).transpose()?,
        limit: number_param(req, "limit", 50)?,
    };
    let (jobs, next) = ctx.queue.list(&filter)?;
    Ok(ok(json!({ "jobs": jobs, "next_before": next })))
}

fn throughput(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let minutes = number_param(req, "minutes", 15)?;
    let conn = ctx.queue.read()?;
    Ok(ok(crate::reads::throughput(&conn, ctx.queue.now(), minutes)?))
}

fn show(ctx: &AppContext, id: JobId) -> Result<Response, ApiError> {
    match ctx.queue.get(id)? {
        Some(job) => Ok(ok(json!(job))),
        None => Err(ApiError::not_found(format!("no job {id}"))),
    }
}

fn replay_one(ctx: &AppContext, id: JobId) -> Result<Response, ApiError> {
    if ctx.queue.get(id)?.is_none() {
        return Err(ApiError::not_found(format!("no job {id}")));
    }
    let replayed = ctx.queue.replay(vec![id])?;
    Ok(ok(json!({ "replayed": replayed })))
}

fn replay_matching(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let body = &req.body;
    let state = match body.get("state").and_then(|s| s.as_str()) {
        Some(raw) => state_param(Some(raw.to_owned()))?.unwrap_or(JobState::Dead),
        None => return Err(ApiError::bad_request("the field \"state\" is required (e.g. \"dead\")")),
    };
    if !matches!(state, JobState::Dead | JobState::Cancelled | JobState::Succeeded) {
        return Err(ApiError::bad_request("only dead, cancelled or succeeded jobs can be replayed"));
    }
    let kind = body.get("kind").and_then(|k| k.as_str()).map(str::to_owned);
    let since = body.get("since").and_then(|s| s.as_i64());
    let replayed = ctx.queue.replay_matching(state, kind, since)?;
    Ok(ok(json!({ "replayed": replayed })))
}

/// `POST /api/jobs/resume` `{provider?}`: resumes that paused provider (gate), or every one.
fn resume(ctx: &AppContext, req: &ApiRequest<'_>) -> Result<Response, ApiError> {
    let provider = match req.body.get("provider") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(name)) => Some(name.clone()),
        Some(_) => return Err(ApiError::bad_request("\"provider\" must be a string (e.g. \"anthropic\")")),
    };
    let resumed = crate::jobs::llm_usage::resume(&ctx.queue, &ctx.config.learner_day(), provider)?;
    Ok(ok(json!({ "resumed": resumed })))
}

fn cancel(ctx: &AppContext, id: JobId) -> Result<Response, ApiError> {
    if ctx.queue.get(id)?.is_none() {
        return Err(ApiError::not_found(format!("no job {id}")));
    }
    let cancelled = ctx.queue.cancel(vec![id])?;
    Ok(ok(json!({ "cancelled": cancelled })))
}

fn prune(ctx: &AppContext) -> Result<Response, ApiError> {
    let retention = Retention {
        succeeded_ms: crate::clock::millis(ctx.config.retention_succeeded()),
        dead_ms: crate::clock::millis(ctx.config.retention_dead()),
    };
    let pruned = ctx.queue.prune(retention)?;
    Ok(json_response(200, &json!({ "pruned": pruned })))
}
