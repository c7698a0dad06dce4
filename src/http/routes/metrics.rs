//! `GET /metrics` in the Prometheus text format: jobs by kind and outcome, queue depth by
//! state, a job duration histogram by kind, HTTP requests by route and status, connections
//! evicted at the cap.

use std::fmt::Write as _;

use crate::http::wire::Response;

use crate::http::server::AppContext;
use crate::queue::metrics::DURATION_BUCKETS;

pub fn render(ctx: &AppContext) -> Response {
    let mut out = String::new();
    let kinds = ctx.queue.metrics().snapshot();
    for (name, help, pick) in [
        ("vibelearn_jobs_enqueued_total", "Jobs enqueued", 0),
        ("vibelearn_jobs_succeeded_total", "Job attempts that succeeded", 1),
        ("vibelearn_jobs_failed_total", "Job attempts that failed and will retry", 2),
        ("vibelearn_jobs_dead_total", "Job attempts that failed permanently", 3),
        ("vibelearn_jobs_timed_out_total", "Job attempts that timed out", 4),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}.\n# TYPE {name} counter");
        for (kind, c) in &kinds {
            let value = [c.enqueued, c.succeeded, c.failed, c.dead, c.timed_out][pick];
            let _ = writeln!(out, "{name}{{kind=\"{kind}\"}} {value}");
        }
    }
    let _ = writeln!(
        out,
        "# HELP vibelearn_job_duration_seconds Job handler run time.\n# TYPE vibelearn_job_duration_seconds histogram"
    );
    for (kind, c) in &kinds {
        let mut cumulative = 0;
        for (i, bound) in DURATION_BUCKETS.iter().enumerate() {
            cumulative += c.duration_buckets[i];
            let _ =
                writeln!(out, "vibelearn_job_duration_seconds_bucket{{kind=\"{kind}\",le=\"{bound}\"}} {cumulative}");
        }
        cumulative += c.duration_buckets[DURATION_BUCKETS.len()];
        let _ = writeln!(out, "vibelearn_job_duration_seconds_bucket{{kind=\"{kind}\",le=\"+Inf\"}} {cumulative}");
        let _ = writeln!(out, "vibelearn_job_duration_seconds_sum{{kind=\"{kind}\"}} {}", c.duration_sum_secs);
        let _ = writeln!(out, "vibelearn_job_duration_seconds_count{{kind=\"{kind}\"}} {cumulative}");
    }
    let _ = writeln!(out, "# HELP vibelearn_queue_depth Jobs per state.\n# TYPE vibelearn_queue_depth gauge");
    if let Ok(conn) = ctx.queue.read()
        && let Ok(counts) = crate::queue::store::count_by_state(&conn, &crate::queue::JobState::ALL)
    {
        for state in crate::queue::JobState::ALL {
            let _ = writeln!(
                out,
                "vibelearn_queue_depth{{state=\"{}\"}} {}",
                state.as_str(),
                counts.get(&state).copied().unwrap_or(0)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP vibelearn_gate_paused Whether a provider's jobs are paused (1) after it refused our credentials.\n\
         # TYPE vibelearn_gate_paused gauge"
    );
    for gate in ctx.queue.gates().unwrap_or_default() {
        let paused = u8::from(gate.state == crate::queue::GateState::Paused);
        let _ = writeln!(out, "vibelearn_gate_paused{{gate=\"{}\"}} {paused}", gate.name);
        let _ = writeln!(out, "vibelearn_gate_held_jobs{{gate=\"{}\"}} {}", gate.name, gate.held);
    }
    let _ = writeln!(
        out,
        "# HELP vibelearn_http_requests_total HTTP requests.\n# TYPE vibelearn_http_requests_total counter"
    );
    for ((route, status), count) in ctx.http_counts.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = writeln!(out, "vibelearn_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}");
    }
    let _ = writeln!(
        out,
        "# HELP vibelearn_http_connections_evicted_total Connections closed to admit a new one at the connection cap \
         (the longest idle or slowest first).\n# TYPE vibelearn_http_connections_evicted_total counter\n\
         vibelearn_http_connections_evicted_total {}",
        ctx.evictions.load(std::sync::atomic::Ordering::Relaxed)
    );
    Response::new(200, "text/plain; version=0.0.4", out)
}
