//! The queue's row types: [`JobId`], [`JobState`] and its transitions, [`NewJob`] (what an
//! enqueuer asks for) and [`Job`] (what the admin API shows). Kind names are opaque strings
//! here; the queue does not know what any kind does.
//!
//! The state machine is written down in `docs/state_machine.md`; [`JobState::can_move_to`]
//! is its executable form and is checked by a unit test against that table.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::Serialize;

use crate::clock::Millis;

/// Primary key of a job row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct JobId(pub i64);

impl ToSql for JobId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for JobId {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value).map(JobId)
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a job is in its life. Each variant names who moves jobs out of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting to run at `run_at`. Left by the dispatcher's claim (→ running, or → held when
    /// a dependency cannot succeed or the kind's gate is paused) or a cancel (→ cancelled).
    Available,
    /// Owned by one attempt (the lease token). Left by the job thread's completion, the
    /// watchdog (timeout → retryable/dead), the rescuer (expired lease or previous process →
    /// available/dead), shutdown (lease released → available) or an admin cancel.
    Running,
    /// Finished; effects committed. Left by an admin replay, by a dependency that re-ran with
    /// a changed output (→ available), or by the pruner (deleted).
    Succeeded,
    /// Failed, will run again at `run_at`. Left by the scheduler (→ available when due) or an
    /// admin cancel.
    Retryable,
    /// Out of attempts or failed permanently. Left by an admin replay or the resume of the
    /// gate that refused it (→ available), an admin cancel, or the pruner.
    Dead,
    /// Stopped by an admin (or because a job it depends on was). Left only by an admin replay
    /// or the pruner.
    Cancelled,
    /// Not runnable: a dependency is dead, cancelled or held itself, or the kind's gate is
    /// paused. Blocks no lane. Left when that dependency succeeds or the gate resumes
    /// (→ available), or by a cancel.
    Held,
}

impl JobState {
    pub const ALL: [JobState; 7] = [
        JobState::Available,
        JobState::Running,
        JobState::Succeeded,
        JobState::Retryable,
        JobState::Dead,
        JobState::Cancelled,
        JobState::Held,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Available => "available",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Retryable => "retryable",
            JobState::Dead => "dead",
            JobState::Cancelled => "cancelled",
            JobState::Held => "held",
        }
    }

    pub fn parse(raw: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// Still going to run (or running): the states that block later jobs of a lane.
    pub fn is_active(self) -> bool {
        matches!(self, JobState::Available | JobState::Running | JobState::Retryable)
    }

    /// The edges of the state machine (docs/state_machine.md).
    pub fn can_move_to(self, to: JobState) -> bool {
        use JobState::*;
        matches!(
            (self, to),
            (Available, Running | Held)
                | (Running, Succeeded | Retryable | Dead | Available)
                | (Retryable | Held, Available)
                | (Available | Retryable | Running | Held | Dead, Cancelled)
                | (Dead | Cancelled | Succeeded, Available)
        )
    }
}

impl ToSql for JobState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for JobState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        JobState::parse(text).ok_or_else(|| FromSqlError::Other(format!("unknown job state {text:?}").into()))
    }
}

/// How one attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    Succeeded,
    Failed,
    TimedOut,
    /// The process running it died, its lease expired, or shutdown released it.
    Lost,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Succeeded => "succeeded",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::TimedOut => "timed_out",
            AttemptOutcome::Lost => "lost",
        }
    }
}

/// When an enqueue with a `unique_key` returns an existing job instead of inserting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniqueScope {
    /// Only while the existing job is still waiting (available or retryable): analysis steps,
    /// so a Stop hook firing every turn does not pile up work, yet a new turn after the step
    /// ran queues a fresh run.
    Waiting,
    /// As long as the existing job row exists in any state: events with an IDE-given id
    /// (`tool_use_id`), which must be ingested once however often the hook retries.
    Ever,
}

/// Work a job may do inside its own enqueue transaction instead of waiting for the runner (see
/// [`NewJob::inline`]). Called with the new job's id; returns the result the admin API shows.
/// An error rolls the work back and the job is enqueued as usual, for the runner to retry.
pub type InlineRun = Box<
    dyn FnOnce(&rusqlite::Connection, JobId, Millis) -> Result<Option<serde_json::Value>, super::runner::EffectError>
        + Send,
>;

/// A request to enqueue one job.
#[derive(Debug)]
pub struct NewJob {
    pub kind: String,
    pub payload: serde_json::Value,
    /// Jobs sharing a lane start one at a time, in enqueue order.
    pub lane: Option<String>,
    pub unique_key: Option<String>,
    pub unique_scope: UniqueScope,
    pub max_attempts: u32,
    /// Earliest start; `None` = now.
    pub run_at: Option<Millis>,
    /// Run at once, in the enqueue transaction, when nothing would make the job wait.
    pub inline: Option<Inline>,
    /// Jobs that must succeed before this one may start.
    pub depends_on: Vec<JobId>,
    /// Unique keys: the job also depends on the most recent job enqueued with each of them,
    /// when one exists (resolved at enqueue, so the enqueuer need not know ids).
    pub after_keys: Vec<String>,
}

/// The [`InlineRun`] of a [`NewJob`] (a newtype so that `NewJob` stays `Debug`).
pub struct Inline(pub InlineRun);

impl std::fmt::Debug for Inline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inline(..)")
    }
}

impl NewJob {
    pub fn new(kind: impl Into<String>, payload: serde_json::Value, max_attempts: u32) -> NewJob {
        NewJob {
            kind: kind.into(),
            payload,
            lane: None,
            unique_key: None,
            unique_scope: UniqueScope::Waiting,
            max_attempts: max_attempts.max(1),
            run_at: None,
            inline: None,
            depends_on: Vec::new(),
            after_keys: Vec::new(),
        }
    }

    /// Lets the job run inside its own enqueue transaction when it could start at once: not
    /// deduplicated, not delayed, and no earlier job of its lane still waiting or running
    /// (so lane order holds). It is then born `succeeded` with one succeeded attempt, its
    /// effects committed with it — no claim, no completion, no job thread. Otherwise, or if
    /// `run` fails, the job is enqueued as usual and the runner runs its handler, which must
    /// do the same work. Meant for short kinds whose work is a few writes.
    pub fn inline(mut self, run: InlineRun) -> NewJob {
        self.inline = Some(Inline(run));
        self
    }

    /// Serialises the payload here, on the enqueuing thread, so the writer only binds text.
    pub fn prepare(mut self) -> PreparedJob {
        let payload = std::mem::take(&mut self.payload).to_string();
        PreparedJob { job: self, payload }
    }

    pub fn lane(mut self, lane: impl Into<String>) -> NewJob {
        self.lane = Some(lane.into());
        self
    }

    pub fn unique(mut self, key: impl Into<String>, scope: UniqueScope) -> NewJob {
        self.unique_key = Some(key.into());
        self.unique_scope = scope;
        self
    }

    /// The job may start only after each of `ids` succeeded.
    pub fn depends_on(mut self, ids: impl IntoIterator<Item = JobId>) -> NewJob {
        self.depends_on.extend(ids);
        self
    }

    /// The job may start only after the latest job with each of these unique keys succeeded
    /// (keys with no job yet are ignored). Such a job always precedes the new one, so a
    /// dependency never points forward in a lane.
    pub fn after_keys(mut self, keys: impl IntoIterator<Item = String>) -> NewJob {
        self.after_keys.extend(keys);
        self
    }
}

/// A [`NewJob`] whose payload is already JSON text (its `job.payload` is left `null`).
#[derive(Debug)]
pub struct PreparedJob {
    pub job: NewJob,
    pub payload: String,
}

/// What an enqueue did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Enqueued {
    pub id: JobId,
    /// True when an existing job with the same unique key (and the same or a superset of the
    /// dependencies) was returned instead.
    pub deduplicated: bool,
    /// True when the job ran in its enqueue transaction ([`NewJob::inline`]) and is done.
    #[serde(skip)]
    pub ran_inline: bool,
}

/// One recorded attempt (SPEC Appendix A.1 `attempts[]`).
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub attempt: u32,
    pub outcome: Option<AttemptOutcome>,
    pub error: Option<String>,
    pub started_at: Millis,
    pub finished_at: Option<Millis>,
}

/// A job as the admin API shows it (SPEC Appendix A.1).
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub id: JobId,
    pub kind: String,
    pub state: JobState,
    pub lane: Option<String>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub created_at: Millis,
    pub run_at: Millis,
    pub finished_at: Option<Millis>,
    pub last_error: Option<String>,
    pub result: Option<serde_json::Value>,
    pub payload: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<Attempt>>,
    /// Jobs this one starts after (their success is required).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<JobId>,
    /// What a held job waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_on: Option<WaitingOn>,
    /// A dead job whose gate refused it: resuming that gate replays it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_by_gate: Option<String>,
}

/// Why a held job is not runnable.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct WaitingOn {
    /// Dependencies that have not succeeded (dead, cancelled, held, or not yet run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobId>,
    /// The paused gate it waits on, with the reason it paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A job handed to a job thread: everything a handler needs, plus the lease it runs under.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub id: JobId,
    pub kind: String,
    pub lane: Option<String>,
    pub payload: serde_json::Value,
    /// 1-based number of this attempt.
    pub attempt: u32,
    pub max_attempts: u32,
    /// The job_attempts row id; completions are applied only while the job still holds it.
    pub lease_token: i64,
    /// When the job was enqueued (or became due), for enqueue→start latency.
    pub run_at: Millis,
    pub claimed_at: Millis,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_round_trip() {
        for state in JobState::ALL {
            assert_eq!(JobState::parse(state.as_str()), Some(state));
        }
        assert_eq!(JobState::parse("paused"), None);
    }

    #[test]
    fn finished_states_leave_only_by_replay_or_cancel() {
        for from in [JobState::Succeeded, JobState::Dead, JobState::Cancelled] {
            for to in JobState::ALL {
                let allowed = to == JobState::Available || (from == JobState::Dead && to == JobState::Cancelled);
                assert_eq!(from.can_move_to(to), allowed, "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn held_jobs_block_no_lane_and_never_run_directly() {
        assert!(!JobState::Held.is_active());
        assert!(!JobState::Held.can_move_to(JobState::Running));
    }

    #[test]
    fn the_documented_table_matches_can_move_to() {
        // Every edge listed in docs/state_machine.md's table, and no other.
        let doc = include_str!("../../docs/state_machine.md");
        let mut documented = Vec::new();
        for line in doc.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(|c| c.trim().trim_matches('`')).collect();
            if let (Some(from), Some(to)) = (JobState::parse(cells[1]), JobState::parse(cells[2])) {
                documented.push((from, to));
            }
        }
        for from in JobState::ALL {
            for to in JobState::ALL {
                assert_eq!(
                    from.can_move_to(to),
                    documented.contains(&(from, to)),
                    "{from:?} -> {to:?} disagrees with docs/state_machine.md"
                );
            }
        }
    }
}
