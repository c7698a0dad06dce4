//! The route table: every route the worker serves, with who may call it (SPEC §4, "the local
//! trust boundary"). The guard looks a request up here *before* anything is read or queued, and
//! [`super::dispatch`] matches on the [`RouteId`] it found, so a route that is not in this table
//! cannot be reached, and a route that is in it is covered by the table-driven test of
//! `tests/http_raw.rs` that sends every row without a key and with a wrong one.

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone on loopback: reveals no session id, path, code or payload.
    Public,
    /// The user key (`<data>/worker.key`) or the admin token.
    Key,
    /// A session event: the user key or the admin token; with
    /// `VIBELEARN_ACCEPT_UNKEYED_EVENTS=true` also no key at all (a wrong key never).
    Event,
    /// The admin token (`<data>/admin.token`).
    Admin,
}

/// What a route does; [`super::dispatch`] has one arm per variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteId {
    Dashboard,
    Health,
    Readiness,
    Version,
    /// `GET /api/proof`: the worker proves it holds the user key ([`super::proof`]).
    Proof,
    /// `POST /api/dashboard/code`: a one-time code for the page (with the key).
    DashboardCode,
    /// `POST /api/dashboard/exchange`: the page trades its code for the key.
    DashboardExchange,
    Metrics,
    Shutdown,
    SessionInit,
    SessionObservation,
    SessionFileEdit,
    SessionComplete,
    AnalyzeStack,
    AnalyzeStatic,
    AnalyzeConcepts,
    AnalyzeQuiz,
    Sync,
    Pipeline,
    Summary,
    Profile,
    Overview,
    Activity,
    QuestionsDue,
    Sessions,
    JobsList,
    JobsStats,
    JobsThroughput,
    JobsGates,
    JobsPrune,
    JobsReplayMatching,
    JobsResume,
    JobShow,
    JobReplay,
    JobCancel,
    /// `POST /api/debug/panic`: answered only by a debug build with the setting on.
    DebugPanic,
}

/// One row: method, path pattern (`:name` matches one segment), what it is, who may call it,
/// and the name `/metrics` counts it under.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    pub pattern: &'static str,
    pub id: RouteId,
    pub access: Access,
    pub metric: &'static str,
}

const fn route(
    method: &'static str,
    pattern: &'static str,
    id: RouteId,
    access: Access,
    metric: &'static str,
) -> Route {
    Route { method, pattern, id, access, metric }
}

use Access::*;
use RouteId::*;

/// Every route. A literal segment wins over a `:name` one ([`lookup`]).
pub const ROUTES: &[Route] = &[
    // The page is static: it holds no data and asks the API for everything with the key.
    route("GET", "/", Dashboard, Public, "dashboard"),
    route("GET", "/api/health", Health, Public, "health"),
    route("GET", "/api/readiness", Readiness, Public, "readiness"),
    route("GET", "/api/version", Version, Public, "version"),
    // Public by necessity: a client asks before it sends the key. It answers an HMAC of the
    // caller's nonce, which tells nothing of the key (super::proof).
    route("GET", "/api/proof", Proof, Public, "proof"),
    route("POST", "/api/dashboard/code", DashboardCode, Key, "dashboard_code"),
    // Public: the code is the credential, good once for a minute.
    route("POST", "/api/dashboard/exchange", DashboardExchange, Public, "dashboard_exchange"),
    route("GET", "/metrics", Metrics, Key, "metrics"),
    route("POST", "/api/admin/shutdown", Shutdown, Admin, "shutdown"),
    route("POST", "/api/sessions/init", SessionInit, Event, "session_event"),
    route("POST", "/api/sessions/observations", SessionObservation, Event, "session_event"),
    route("POST", "/api/sessions/file-edit", SessionFileEdit, Event, "session_event"),
    route("POST", "/api/sessions/complete", SessionComplete, Event, "session_event"),
    route("POST", "/api/vibelearn/analyze/stack", AnalyzeStack, Key, "analyze"),
    route("POST", "/api/vibelearn/analyze/static", AnalyzeStatic, Key, "analyze"),
    route("POST", "/api/vibelearn/analyze/concepts", AnalyzeConcepts, Key, "analyze"),
    route("POST", "/api/vibelearn/analyze/quiz", AnalyzeQuiz, Key, "analyze"),
    route("POST", "/api/vibelearn/sync", Sync, Key, "analyze"),
    route("GET", "/api/vibelearn/sessions/:id/pipeline", Pipeline, Key, "pipeline"),
    route("GET", "/api/vibelearn/sessions/:id/summary", Summary, Key, "summary"),
    route("GET", "/api/vibelearn/profile", Profile, Key, "profile"),
    route("GET", "/api/vibelearn/activity", Activity, Key, "activity"),
    route("GET", "/api/vibelearn/overview", Overview, Key, "overview"),
    route("GET", "/api/vibelearn/questions/due", QuestionsDue, Key, "questions_due"),
    route("GET", "/api/sessions", Sessions, Key, "sessions"),
    route("GET", "/api/jobs", JobsList, Key, "jobs_list"),
    route("GET", "/api/jobs/stats", JobsStats, Key, "jobs_stats"),
    route("GET", "/api/jobs/throughput", JobsThroughput, Key, "jobs_throughput"),
    route("GET", "/api/jobs/gates", JobsGates, Key, "jobs_gates"),
    route("POST", "/api/jobs/prune", JobsPrune, Admin, "jobs_prune"),
    route("POST", "/api/jobs/replay", JobsReplayMatching, Admin, "jobs_replay"),
    route("POST", "/api/jobs/resume", JobsResume, Admin, "jobs_resume"),
    route("GET", "/api/jobs/:id", JobShow, Key, "jobs_show"),
    route("POST", "/api/jobs/:id/replay", JobReplay, Admin, "jobs_replay"),
    route("POST", "/api/jobs/:id/cancel", JobCancel, Admin, "jobs_cancel"),
    route("POST", "/api/debug/panic", DebugPanic, Key, "debug_panic"),
];

/// What the table says about a method and path.
#[derive(Debug)]
pub enum Lookup {
    /// The route, and the values of its `:name` segments in order.
    Found(&'static Route, Vec<String>),
    /// The path exists with another method (405).
    MethodNotAllowed,
    /// No such path (404).
    NotFound,
}

/// Finds the route for `method` and the path's (decoded) segments. A path that a pattern
/// names literally belongs to that pattern alone: `GET /api/jobs/resume` is 405 (resume is
/// POST), not a request for a job whose id is "resume".
pub fn lookup(method: &str, segments: &[String]) -> Lookup {
    let fitting: Vec<(&'static Route, Vec<String>)> =
        ROUTES.iter().filter_map(|route| matches(route.pattern, segments).map(|params| (route, params))).collect();
    let Some(fewest) = fitting.iter().map(|(_, params)| params.len()).min() else { return Lookup::NotFound };
    fitting
        .into_iter()
        .filter(|(_, params)| params.len() == fewest)
        .find(|(route, _)| route.method == method)
        .map_or(Lookup::MethodNotAllowed, |(route, params)| Lookup::Found(route, params))
}

/// The `:name` segments' values when `segments` fit `pattern`.
fn matches(pattern: &str, segments: &[String]) -> Option<Vec<String>> {
    let parts: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    for (part, segment) in parts.iter().zip(segments) {
        if part.starts_with(':') {
            params.push(segment.clone());
        } else if part != segment {
            return None;
        }
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Vec<String> {
        path.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect()
    }

    #[test]
    fn named_paths_win_over_ids_and_other_methods_are_405() {
        let Lookup::Found(route, params) = lookup("GET", &segs("/api/jobs/stats")) else { panic!() };
        assert_eq!((route.id, params.len()), (RouteId::JobsStats, 0));
        let Lookup::Found(route, params) = lookup("POST", &segs("/api/jobs/42/replay")) else { panic!() };
        assert_eq!((route.id, params), (RouteId::JobReplay, vec!["42".to_owned()]));
        assert!(matches!(lookup("POST", &segs("/api/jobs/stats")), Lookup::MethodNotAllowed));
        assert!(matches!(lookup("GET", &segs("/api/jobs/resume")), Lookup::MethodNotAllowed));
        assert!(matches!(lookup("POST", &segs("/api/jobs/42")), Lookup::MethodNotAllowed));
        assert!(matches!(lookup("DELETE", &segs("/")), Lookup::MethodNotAllowed));
        assert!(matches!(lookup("GET", &segs("/api/nope")), Lookup::NotFound));
    }

    #[test]
    fn only_health_readiness_version_the_proof_the_code_exchange_and_the_static_page_are_public() {
        let public: Vec<&str> = ROUTES.iter().filter(|r| r.access == Access::Public).map(|r| r.pattern).collect();
        assert_eq!(
            public,
            ["/", "/api/health", "/api/readiness", "/api/version", "/api/proof", "/api/dashboard/exchange"]
        );
    }
}
