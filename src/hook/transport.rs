//! Getting a hook's event to the worker: POST within a 500 ms budget, to a listener that proved
//! it is the user's worker ([`crate::worker_client`]); when the worker is not reachable
//! (refused, timeout, 5xx), does not take the user key (401), or the port's listener is not
//! our worker (no proof: nothing was sent), enqueue the same job directly into the database through
//! [`crate::intake`] — the function the worker itself uses — and start a worker, at most once
//! per 30 s across all hooks. An event is never lost because the worker was down.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::config::Config;
use crate::db;
use crate::event::EventKind;
use crate::intake::{self, IntakeSettings, Reply};
use crate::queue::{Queue, QueueThread, WriterConfig};
use crate::worker_client::{Unreachable, WorkerClient};

/// Connect + response budget of one POST to the worker (SPEC §3.3).
pub const POST_BUDGET: Duration = Duration::from_millis(500);
/// At most one worker spawn per this interval across all hook processes.
pub const SPAWN_INTERVAL: Duration = Duration::from_secs(30);

/// Where a request goes.
#[derive(Debug, Clone, Copy)]
pub enum Route {
    Event(EventKind),
    Analysis(&'static str),
}

impl Route {
    pub fn path(self) -> String {
        match self {
            Route::Event(EventKind::Init) => "/api/sessions/init".into(),
            Route::Event(EventKind::Observation) => "/api/sessions/observations".into(),
            Route::Event(EventKind::FileEdit) => "/api/sessions/file-edit".into(),
            Route::Event(EventKind::Complete) => "/api/sessions/complete".into(),
            Route::Analysis(crate::jobs::SYNC) => "/api/vibelearn/sync".into(),
            Route::Analysis(kind) => format!("/api/vibelearn/analyze/{}", kind.trim_start_matches("analyze_")),
        }
    }
}

/// What happened to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The worker answered (2xx or a 4xx that a retry cannot fix).
    Posted(u16),
    /// The worker was unreachable; the job went straight into the database.
    Enqueued(Reply),
    /// Neither worked; the reason is logged.
    Failed(String),
}

/// Sends requests for one hook run; opens the database only if the worker is unreachable.
pub struct Transport<'a> {
    config: &'a Config,
    client: WorkerClient,
    /// The database, its writer and intake's settings (which read the key files), made once,
    /// when the first request has to be enqueued directly.
    direct: Option<(Queue, QueueThread, IntakeSettings)>,
    worker_down: bool,
}

impl<'a> Transport<'a> {
    pub fn new(config: &'a Config) -> Transport<'a> {
        Transport { config, client: WorkerClient::new(config, POST_BUDGET), direct: None, worker_down: false }
    }

    pub fn send(&mut self, route: Route, body: Value) -> Delivery {
        if !self.worker_down {
            match self.client.post(&route.path(), &body) {
                // The worker did not take the key (it has none for this data dir yet — an older
                // worker still running — or the key file was replaced): store it directly, as
                // when the worker is down, without starting another worker.
                Ok(response) if response.status == 401 => {
                    log::warn!(target: "hook", "the worker refused the key for {}; enqueueing directly", route.path());
                    self.worker_down = true;
                    return self.deliver_directly(route, body);
                }
                Ok(response) if response.status < 500 => {
                    if response.status >= 400 {
                        log::warn!(target: "hook", "the worker refused {}: {} {}", route.path(), response.status, response.body);
                    }
                    return Delivery::Posted(response.status);
                }
                Ok(response) => log::warn!(target: "hook", "worker answered {}; enqueueing directly", response.status),
                // Not our worker: nothing was sent to it. Store the event ourselves; starting a
                // worker would only fail on the held port.
                Err(Unreachable::NotOurWorker(why)) => {
                    log::warn!(target: "hook", "{why}; enqueueing directly");
                    self.worker_down = true;
                    return self.deliver_directly(route, body);
                }
                // Something listens but there is no key file to check it with: store it
                // ourselves, and start no worker (one would fail on the held port).
                Err(Unreachable::NoKey) => {
                    log::warn!(target: "hook", "no worker key in the data dir; enqueueing {} directly", route.path());
                    self.worker_down = true;
                    return self.deliver_directly(route, body);
                }
                Err(e) => log::info!(target: "hook", "{e}; enqueueing directly"),
            }
            // Once down, stay down for this hook run: each further POST would cost the budget.
            self.worker_down = true;
            maybe_spawn_worker(self.config);
        }
        self.deliver_directly(route, body)
    }

    fn deliver_directly(&mut self, route: Route, body: Value) -> Delivery {
        match self.enqueue_directly(route, body) {
            Ok(reply) => Delivery::Enqueued(reply),
            Err(e) => {
                log::error!(target: "hook", "could not deliver {}: {e}", route.path());
                Delivery::Failed(e)
            }
        }
    }

    fn enqueue_directly(&mut self, route: Route, body: Value) -> Result<Reply, String> {
        if self.direct.is_none() {
            let path = self.config.db_path();
            open_data_dir(self.config)?;
            let conn = db::open_and_migrate(&path, self.config.synchronous()).map_err(|e| e.to_string())?;
            let started =
                Queue::start(conn, &path, self.config.synchronous(), WriterConfig::default(), crate::clock::system())
                    .map_err(|e| e.to_string())?;
            let (queue, thread) = started;
            self.direct = Some((queue, thread, IntakeSettings::from_config(self.config)));
        }
        let Some((queue, _, settings)) = &self.direct else { return Err("the database is not open".into()) };
        let result = match route {
            Route::Event(kind) => intake::submit_event(queue, settings, kind, body),
            Route::Analysis(kind) => intake::submit_analysis(queue, settings, kind, body),
        };
        result.map_err(|e| e.to_string())
    }
}

/// Creates the data dir owner-only, or tightens it when an older version left it loose (one
/// `stat` when it is not), logging what changed.
fn open_data_dir(config: &Config) -> Result<(), String> {
    let tightened = crate::worker::secure_data_dir(config, crate::platform::Scope::IfLoose)
        .map_err(|e| format!("cannot create {}: {e}", config.data_dir.display()))?;
    if let Some(line) = tightened {
        log::warn!(target: "hook", "{line}");
    }
    Ok(())
}

/// Starts `vl worker start` detached unless a hook did so in the last [`SPAWN_INTERVAL`].
/// The stamp file's lock makes concurrent hooks agree on who spawns.
fn maybe_spawn_worker(config: &Config) {
    let stamp = config.data_dir.join("worker-spawn.stamp");
    let _ = open_data_dir(config);
    let Ok(file) = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&stamp) else { return };
    if file.try_lock().is_err() {
        return; // another hook is spawning right now
    }
    let recent = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < SPAWN_INTERVAL && file.metadata().map(|m| m.len() > 0).unwrap_or(false));
    if recent {
        return;
    }
    let _ = std::fs::write(&stamp, format!("{}\n", std::process::id()));
    match crate::worker_spawn::spawn_vl_detached(config, &["worker", "start"]) {
        Ok(()) => log::info!(target: "hook", "the worker was down; started one"),
        Err(e) => log::warn!(target: "hook", "{e}"),
    }
}
