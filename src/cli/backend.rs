//! Where an admin command runs: through the worker when it answers, else on the database.
//!
//! SPEC §1 asks `vl jobs …` and `vl sync` to work whether or not the worker runs.
//! [`Backend::connect`] asks the worker's readiness route once:
//! - **Worker**: every operation is a call to the HTTP admin API (§4.5) with the admin token
//!   from `<data>/admin.token`. The worker's own queue handle makes the change, so its
//!   dispatcher is woken at once; going around it (writing the file while it runs) would leave
//!   replayed jobs waiting until its next timer.
//! - **Database**: reads open the file read-only and call the same `queue::store` and `reads`
//!   functions the routes call; changes start a [`Queue`] writer on a read-write connection —
//!   exactly what a hook's direct enqueue does — and stop it before returning.
//!
//! Either way an operation returns the JSON the HTTP API returns (Appendix A.1–A.2), built from
//! the same `Job` and `Stats` serialisations, so `--json` output does not depend on the path.
//!
//! A missing database file reads as an empty queue: a read command never creates one.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::{Value, json};

use super::format::encode;
use crate::clock::Millis;
use crate::config::Config;
use crate::db;
use crate::hook::transport::Route;
use crate::queue::store::{self, ListFilter, Retention};
use crate::queue::{JobId, JobState, Queue, QueueError, WriterConfig};
use crate::worker_client::{Unreachable, WorkerClient, WorkerResponse};

/// Budget of the readiness probe: a worker on loopback answers in a millisecond; a port that
/// swallows packets must not make every command slow.
const PROBE_TIMEOUT: Duration = Duration::from_millis(800);
/// A worker that is up but still starting (503 from readiness) gets this long to finish.
const STARTING_WAIT: Duration = Duration::from_secs(5);
/// Budget of one admin call: prune can delete many rows and vacuum.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The database, file system or queue error behind a [`CliError::Caused`].
type DbFailure = Box<dyn std::error::Error + Send + Sync>;

/// A command's failure, with the exit code it deserves.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The user asked for something malformed (exit 2, like clap's own usage errors).
    #[error("{0}")]
    Usage(String),
    /// A job, session or file the user named does not exist (exit 1).
    #[error("{0}")]
    NotFound(String),
    /// The worker or the database failed (exit 1).
    #[error("{0}")]
    Failed(String),
    /// What the command was doing when the database, a file or the worker failed, with that
    /// failure as its source (exit 1).
    #[error("{context}: {source}")]
    Caused {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            CliError::NotFound(_) | CliError::Failed(_) | CliError::Caused { .. } => ExitCode::FAILURE,
        }
    }

    /// A failure of `source` while doing `context` ("cannot read the database at …").
    pub fn caused(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> CliError {
        CliError::Caused { context: context.into(), source: source.into() }
    }
}

/// What `vl jobs list` asks for; the same filters as `GET /api/jobs`.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    pub state: Option<JobState>,
    pub kind: Option<String>,
    pub session: Option<String>,
    pub since: Option<Millis>,
    pub before: Option<JobId>,
    pub limit: usize,
}

/// See the module doc.
pub enum Backend<'a> {
    Worker(WorkerClient),
    Database(&'a Config),
}

impl<'a> Backend<'a> {
    /// The worker when its readiness route answers (waiting briefly while it starts), else
    /// the database.
    pub fn connect(config: &'a Config) -> Backend<'a> {
        if worker_answers(config) {
            Backend::Worker(WorkerClient::admin(config, CALL_TIMEOUT))
        } else {
            Backend::Database(config)
        }
    }

    pub fn is_worker(&self) -> bool {
        matches!(self, Backend::Worker(_))
    }

    /// `{"jobs":[Job…], "next_before":int|null}`.
    pub fn list(&self, query: &JobQuery) -> Result<Value, CliError> {
        match self {
            Backend::Worker(client) => {
                let mut params = vec![format!("limit={}", query.limit)];
                let mut add = |name: &str, value: Option<String>| {
                    if let Some(value) = value {
                        params.push(format!("{name}={}", encode(&value)));
                    }
                };
                add("state", query.state.map(|s| s.as_str().to_owned()));
                add("kind", query.kind.clone());
                add("session", query.session.clone());
                add("since", query.since.map(|s| s.to_string()));
                add("before", query.before.map(|b| b.to_string()));
                expect_ok(client.get(&format!("/api/jobs?{}", params.join("&"))))
            }
            Backend::Database(config) => {
                let filter = ListFilter {
                    state: query.state,
                    kind: query.kind.clone(),
                    lane: query.session.as_deref().map(crate::jobs::lane),
                    since: query.since,
                    before: query.before,
                    limit: query.limit,
                };
                let (jobs, next) = read(config, (Vec::new(), None), |conn| store::list(conn, &filter))?;
                Ok(json!({ "jobs": jobs, "next_before": next }))
            }
        }
    }

    /// One job with its attempts (Appendix A.1), or `None` when there is no such job.
    pub fn show(&self, id: JobId) -> Result<Option<Value>, CliError> {
        match self {
            Backend::Worker(client) => match client.get(&format!("/api/jobs/{id}")) {
                Ok(response) if response.status == 404 => Ok(None),
                other => expect_ok(other).map(Some),
            },
            Backend::Database(config) => Ok(read(config, None, |conn| store::get(conn, id))?.map(|job| json!(job))),
        }
    }

    /// `{"by_state":…, "by_kind":…, "oldest_available_age_ms":…}`.
    pub fn stats(&self) -> Result<Value, CliError> {
        match self {
            Backend::Worker(client) => expect_ok(client.get("/api/jobs/stats")),
            Backend::Database(config) => {
                let mut empty = store::Stats::default();
                for state in JobState::ALL {
                    empty.by_state.insert(state.as_str().to_owned(), 0);
                }
                let now = crate::clock::system().now_ms();
                Ok(json!(read(config, empty, |conn| store::stats(conn, now))?))
            }
        }
    }

    /// Replays these jobs; returns those that moved (the others are unknown or not in a
    /// replayable state; [`Backend::show`] tells which).
    pub fn replay(&self, ids: &[JobId]) -> Result<Vec<JobId>, CliError> {
        match self {
            Backend::Worker(client) => each_id(client, ids, "replay", "replayed"),
            Backend::Database(config) => write(config, |queue| queue.replay(ids.to_vec())),
        }
    }

    /// Replays every job in `state` (of `kind`, finished since `since`).
    pub fn replay_matching(
        &self,
        state: JobState,
        kind: Option<&str>,
        since: Option<Millis>,
    ) -> Result<Vec<JobId>, CliError> {
        match self {
            Backend::Worker(client) => {
                let body = json!({ "state": state.as_str(), "kind": kind, "since": since });
                ids_of(&expect_ok(client.post("/api/jobs/replay", &body))?, "replayed")
            }
            Backend::Database(config) => {
                write(config, |queue| queue.replay_matching(state, kind.map(str::to_owned), since))
            }
        }
    }

    /// Cancels these jobs; returns those that moved.
    pub fn cancel(&self, ids: &[JobId]) -> Result<Vec<JobId>, CliError> {
        match self {
            Backend::Worker(client) => each_id(client, ids, "cancel", "cancelled"),
            Backend::Database(config) => write(config, |queue| queue.cancel(ids.to_vec())),
        }
    }

    /// Resumes the paused provider `provider` (or every one): `{"resumed":{gates, released, replayed}}`.
    pub fn resume(&self, provider: Option<&str>) -> Result<Value, CliError> {
        match self {
            Backend::Worker(client) => expect_ok(client.post("/api/jobs/resume", &json!({ "provider": provider }))),
            Backend::Database(config) => {
                let provider = provider.map(str::to_owned);
                write(config, move |queue| crate::jobs::llm_usage::resume(queue, &config.learner_day(), provider))
                    .map(|resumed| json!({ "resumed": resumed }))
            }
        }
    }

    /// `{"gates":[…]}`: every provider gate with its state and held jobs.
    pub fn gates(&self) -> Result<Value, CliError> {
        match self {
            Backend::Worker(client) => expect_ok(client.get("/api/jobs/gates")),
            Backend::Database(config) => {
                read(config, json!({ "gates": [] }), |conn| Ok(json!({ "gates": crate::queue::gates::list(conn)? })))
            }
        }
    }

    /// Applies retention now; returns how many jobs were deleted.
    pub fn prune(&self) -> Result<i64, CliError> {
        match self {
            Backend::Worker(client) => {
                let reply = expect_ok(client.post("/api/jobs/prune", &json!({})))?;
                Ok(reply["pruned"].as_i64().unwrap_or(0))
            }
            Backend::Database(config) => {
                let retention = Retention {
                    succeeded_ms: config.retention_succeeded().as_millis() as i64,
                    dead_ms: config.retention_dead().as_millis() as i64,
                };
                write(config, |queue| queue.prune(retention)).map(|n| n as i64)
            }
        }
    }

    /// Enqueues analysis steps for a session, in order; returns each enqueue reply
    /// (Appendix A.3).
    pub fn enqueue_analysis(&self, session_id: &str, kinds: &[&'static str]) -> Result<Vec<Value>, CliError> {
        let body = json!({ "contentSessionId": session_id });
        match self {
            Backend::Worker(client) => {
                kinds.iter().map(|kind| expect_status(client.post(&Route::Analysis(kind).path(), &body), 202)).collect()
            }
            Backend::Database(config) => write(config, |queue| {
                let mut replies = Vec::new();
                let settings = crate::intake::IntakeSettings::from_config(config);
                for kind in kinds {
                    match crate::intake::submit_analysis(queue, &settings, kind, body.clone()) {
                        Ok(reply) => replies.push(reply.to_json()),
                        Err(crate::intake::IntakeError::Queue(e)) => return Err(e),
                        Err(e) => return Err(QueueError::Rejected(e.to_string())),
                    }
                }
                Ok(replies)
            }),
        }
    }

    /// `{"steps":[…]}` of `GET /api/vibelearn/sessions/:id/pipeline`.
    pub fn pipeline(&self, session_id: &str) -> Result<Value, CliError> {
        match self {
            Backend::Worker(client) => {
                expect_ok(client.get(&format!("/api/vibelearn/sessions/{}/pipeline", encode(session_id))))
            }
            Backend::Database(config) => {
                let empty = json!({ "steps": crate::jobs::PIPELINE.iter().map(|kind| json!({
                    "kind": kind, "job_id": null, "state": null, "attempt": 0, "last_error": null, "result": null,
                })).collect::<Vec<_>>() });
                read(config, empty, |conn| crate::reads::pipeline(conn, session_id))
            }
        }
    }
}

/// True when a worker answers readiness, waiting up to [`STARTING_WAIT`] while it answers 503.
pub fn worker_answers(config: &Config) -> bool {
    let probe = WorkerClient::new(config, PROBE_TIMEOUT);
    let deadline = Instant::now() + STARTING_WAIT;
    loop {
        match probe.get("/api/readiness") {
            Ok(response) if response.status == 200 => return true,
            Ok(response) if response.status == 503 && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => return false,
        }
    }
}

/// Runs a read on a read-only connection; `empty` when there is no database yet.
pub fn read<T>(
    config: &Config,
    empty: T,
    query: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, CliError> {
    let path = config.db_path();
    if !path.exists() {
        return Ok(empty);
    }
    let failed = |e: DbFailure| CliError::caused(format!("cannot read the database at {}", path.display()), e);
    let conn = db::open_read_only(&path).map_err(|e| failed(e.into()))?;
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| failed(e.into()))?;
    if version == 0 {
        return Ok(empty); // created but never migrated: no tables, no jobs
    }
    if version < db::migrate::latest_version() {
        // Written by an older vl and not opened by a worker since: bring it up to date first
        // (what the worker would do), so the queries below find the columns they name.
        drop(conn);
        db::open_and_migrate(&path, config.synchronous()).map_err(|e| failed(e.into()))?;
        let conn = db::open_read_only(&path).map_err(|e| failed(e.into()))?;
        return query(&conn).map_err(|e| failed(e.into()));
    }
    query(&conn).map_err(|e| failed(e.into()))
}

/// Runs changes through a queue writer started on the database (created and migrated if
/// needed), then stops the writer (its `stop` checkpoints).
pub fn write<T: Send + 'static>(
    config: &Config,
    change: impl FnOnce(&Queue) -> Result<T, QueueError>,
) -> Result<T, CliError> {
    let path = config.db_path();
    let failed = |e: DbFailure| CliError::caused(format!("cannot change the database at {}", path.display()), e);
    if let Some(line) =
        crate::worker::secure_data_dir(config, crate::platform::Scope::IfLoose).map_err(|e| failed(e.into()))?
    {
        log::warn!(target: "cli", "{line}");
    }
    let conn = db::open_and_migrate(&path, config.synchronous()).map_err(|e| failed(e.into()))?;
    let (queue, thread) =
        Queue::start(conn, &path, config.synchronous(), WriterConfig::default(), crate::clock::system())
            .map_err(|e| failed(e.into()))?;
    let result = change(&queue);
    thread.stop();
    result.map_err(|e| failed(e.into()))
}

/// POSTs `/api/jobs/:id/<action>` for each id; collects the ids the worker says moved.
/// A 404 (no such job) is not an error here: the caller explains each id that did not move.
fn each_id(client: &WorkerClient, ids: &[JobId], action: &str, field: &str) -> Result<Vec<JobId>, CliError> {
    let mut moved = Vec::new();
    for id in ids {
        match client.post(&format!("/api/jobs/{id}/{action}"), &json!({})) {
            Ok(response) if response.status == 404 => {}
            other => moved.extend(ids_of(&expect_ok(other)?, field)?),
        }
    }
    Ok(moved)
}

fn ids_of(reply: &Value, field: &str) -> Result<Vec<JobId>, CliError> {
    reply[field]
        .as_array()
        .map(|ids| ids.iter().filter_map(Value::as_i64).map(JobId).collect())
        .ok_or_else(|| CliError::Failed(format!("the worker's reply has no {field:?} list: {reply}")))
}

fn expect_ok(result: Result<WorkerResponse, Unreachable>) -> Result<Value, CliError> {
    expect_status(result, 200)
}

/// The body of a response with the expected status; anything else is a failure that quotes
/// the worker's own message.
fn expect_status(result: Result<WorkerResponse, Unreachable>, expected: u16) -> Result<Value, CliError> {
    let response = result.map_err(|e| CliError::Failed(format!("{e} (it answered a moment ago; is it stopping?)")))?;
    if response.status == expected {
        return Ok(response.body);
    }
    let message = response.body["message"].as_str().map(str::to_owned).unwrap_or_else(|| response.body.to_string());
    let hint = if matches!(response.status, 401 | 403) {
        " — the admin token in the data directory does not match this worker's"
    } else {
        ""
    };
    let error = CliError::Failed(format!("the worker refused ({}): {message}{hint}", response.status));
    Err(if response.status == 400 { CliError::Usage(message) } else { error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_caused_failure_reads_as_before_and_keeps_its_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let error = CliError::caused("cannot read /data/vibelearn.db", io);
        assert_eq!(error.to_string(), "cannot read /data/vibelearn.db: permission denied");
        let cause = error.source().expect("the cause is kept");
        assert_eq!(
            cause.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert_eq!(error.exit_code(), ExitCode::FAILURE);

        let unreachable = Unreachable::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(unreachable.to_string().starts_with("the worker is not reachable: "), "{unreachable}");
        assert!(unreachable.source().is_some(), "the io error is the source");
    }
}
