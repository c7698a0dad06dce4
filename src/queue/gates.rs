//! Gates: named conditions that jobs of some kinds need, such as a remote's credentials.
//! The queue knows only the names; which kinds need which gate is the [`Registry`]'s
//! business (`Registry::gate`), and a gate's *version* (for a remote, a fingerprint of the
//! credentials) is whatever the registering code says it is.
//!
//! A gate is in one of three states (table `queue_gates`; no row reads as `unproven`):
//! - `unproven`: nothing needing it has succeeded since the runner started or the gate
//!   resumed, so jobs needing it run **one at a time**: with bad credentials, one call is
//!   refused, not one per thread;
//! - `open`: a job needing it succeeded; no limit;
//! - `paused`: a job needing it was refused ([`Outcome::Refused`](super::Outcome::Refused));
//!   jobs needing it are held at claim, and make no call.
//!
//! A paused gate resumes (→ `unproven`; its held jobs become available and the jobs its
//! refusals killed are replayed) when an admin resumes it, when one of those dead jobs is
//! replayed, or when its version differs from the one it paused under (checked at runner
//! start and by the watchdog every few seconds: new credentials get their one try), or when
//! no registered kind needs it any more (at runner start: the provider was changed).
//!
//! [`Registry`]: super::Registry

use std::collections::HashMap;

use rusqlite::{Connection, params};
use serde::Serialize;

use super::job::JobId;
use crate::clock::Millis;

/// Which gate each kind needs (kinds absent need none).
pub type KindGates = HashMap<String, String>;

/// Where a gate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GateState {
    Unproven,
    Open,
    Paused,
}

impl GateState {
    fn parse(raw: &str) -> GateState {
        match raw {
            "open" => GateState::Open,
            "paused" => GateState::Paused,
            _ => GateState::Unproven,
        }
    }
}

/// One gate as the admin API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub name: String,
    pub state: GateState,
    /// Why it paused (the refusal's error).
    pub reason: Option<String>,
    pub changed_at: Millis,
    /// Jobs held on it.
    pub held: i64,
}

/// Every gate with a row, by name.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<Gate>> {
    conn.prepare_cached(
        "SELECT g.name, g.state, g.reason, g.changed_at, \
           (SELECT COUNT(*) FROM jobs j WHERE j.state = 'held' AND j.gate = g.name) \
         FROM queue_gates g ORDER BY g.name",
    )?
    .query_map([], |r| {
        Ok(Gate {
            name: r.get(0)?,
            state: GateState::parse(&r.get::<_, String>(1)?),
            reason: r.get(2)?,
            changed_at: r.get(3)?,
            held: r.get(4)?,
        })
    })?
    .collect()
}

/// The states of the gates that have a row (the claim's view; the table is tiny).
pub fn states(conn: &Connection) -> rusqlite::Result<HashMap<String, GateState>> {
    conn.prepare_cached("SELECT name, state FROM queue_gates")?
        .query_map([], |r| Ok((r.get::<_, String>(0)?, GateState::parse(&r.get::<_, String>(1)?))))?
        .collect()
}

/// The reason a gate paused, if it is paused.
pub fn pause_reason(conn: &Connection, gate: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached("SELECT reason FROM queue_gates WHERE name = ?1 AND state = 'paused'")?
        .query_row([gate], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

/// A job needing `gate` was refused: the gate pauses under the credentials' `version`.
pub fn pause(conn: &Connection, gate: &str, reason: &str, version: &str, now: Millis) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO queue_gates (name, state, reason, version, changed_at) VALUES (?1, 'paused', ?2, ?3, ?4) \
         ON CONFLICT (name) DO UPDATE SET state = 'paused', reason = excluded.reason, version = excluded.version, \
         changed_at = excluded.changed_at",
    )?
    .execute(params![gate, reason, version, now])?;
    Ok(())
}

/// A job needing `gate` succeeded: an unproven gate opens (a paused one stays paused: a job
/// that started before the pause proves nothing about the credentials now).
pub fn proven(conn: &Connection, gate: &str, now: Millis) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO queue_gates (name, state, changed_at) VALUES (?1, 'open', ?2) \
         ON CONFLICT (name) DO UPDATE SET state = 'open', changed_at = excluded.changed_at WHERE state = 'unproven'",
    )?
    .execute(params![gate, now])?;
    Ok(())
}

/// At runner start every open gate is unproven again: credentials may have changed while
/// nothing ran.
pub fn forget_proofs(conn: &Connection, now: Millis) -> rusqlite::Result<usize> {
    conn.prepare_cached("UPDATE queue_gates SET state = 'unproven', changed_at = ?1 WHERE state = 'open'")?
        .execute([now])
}

/// Whether a job of one of `kinds` is running (an unproven gate admits one at a time).
pub fn running_any(conn: &Connection, kinds: &[&str]) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_lane_active \
         WHERE ",
        lane_active!("state"),
        " AND state = 'running' AND kind = ?1)"
    ))?;
    for kind in kinds {
        if stmt.query_row([kind], |r| r.get::<_, bool>(0))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// What a resume did.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Resumed {
    /// The gates that were paused and are now unproven.
    pub gates: Vec<String>,
    /// Held jobs made available.
    pub released: usize,
    /// Dead jobs (refused by those gates) replayed.
    pub replayed: Vec<JobId>,
}

/// Resumes the paused gate `name`, or every paused gate. See the module doc.
pub fn resume(conn: &Connection, name: Option<&str>, now: Millis) -> rusqlite::Result<Resumed> {
    let paused: Vec<String> = conn
        .prepare_cached(
            "SELECT name FROM queue_gates WHERE state = 'paused' AND (?1 IS NULL OR name = ?1) ORDER BY name",
        )?
        .query_map([name], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut resumed = Resumed::default();
    for gate in paused {
        conn.prepare_cached(
            "UPDATE queue_gates SET state = 'unproven', reason = NULL, changed_at = ?2 WHERE name = ?1",
        )?
        .execute(params![gate, now])?;
        resumed.released += conn
            .prepare_cached(
                "UPDATE jobs SET state = 'available', gate = NULL, run_at = ?2 WHERE state = 'held' AND gate = ?1",
            )?
            .execute(params![gate, now])?;
        let refused: Vec<JobId> = conn
            .prepare_cached("SELECT id FROM jobs WHERE state = 'dead' AND gate = ?1 ORDER BY id")?
            .query_map([&gate], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        resumed.replayed.extend(super::store::replay_rows(conn, &refused, now)?);
        resumed.gates.push(gate);
    }
    Ok(resumed)
}

/// Resumes each paused gate whose version differs from `current` (new credentials), and each
/// paused gate absent from `current` (no kind needs it any more: the provider was changed, so
/// its held jobs would otherwise wait on nothing). A gate paused with no recorded version (by
/// hand, or by a build that did not record one) is left for an explicit resume. Returns what
/// was resumed.
pub fn resume_changed(conn: &Connection, current: &HashMap<String, String>, now: Millis) -> rusqlite::Result<Resumed> {
    let paused: Vec<(String, Option<String>)> = conn
        .prepare_cached("SELECT name, version FROM queue_gates WHERE state = 'paused'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut total = Resumed::default();
    for (gate, version) in paused {
        let resume_it = match (current.get(&gate), version) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(now_version), Some(version)) => *now_version != version,
        };
        if resume_it {
            let one = resume(conn, Some(&gate), now)?;
            total.gates.extend(one.gates);
            total.released += one.released;
            total.replayed.extend(one.replayed);
        }
    }
    Ok(total)
}
