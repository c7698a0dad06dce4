//! Trying a paused gate again on its own (issue 31): a gate paused because what it guards
//! refused (a CLI that is not logged in, an account with no credit, a host that cannot be
//! reached) is *probed* on the probe back-off of [`crate::backoff`] — 5 min after the pause,
//! then twice as long after each probe that fails, at most an hour — and resumed (`gates::resume`: its held jobs released, its
//! refused jobs replayed) the first time a probe succeeds. Without this such a gate waited for
//! `vl jobs resume` or a restart although the user had long since logged in.
//!
//! What a probe does is the registering code's business ([`GateProbe`], one tiny request to
//! the provider); the queue only schedules it. The schedule counts on the queue's clock (the
//! pause's `changed_at` and the writer's `now`), so a test with a manual clock drives it.
//! [`Reprobe::run_once`] is the pure part: which gates are due at `now`. Each due probe runs
//! on a thread of its own (a CLI may take its whole timeout to answer), at most one per gate.
//!
//! A pause the probe says it cannot lift (`None`: a spent daily budget, which lifts with the
//! day) is not probed again until the gate pauses anew.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::handler::GateProbe;
use crate::backoff::probe_backoff as backoff;
use crate::clock::Millis;
use crate::queue::gates::{self, GateState};
use crate::queue::writer::{Durability, Waker, WriterHandle};

/// One paused gate as the schedule follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Probing {
    /// The pause's `changed_at`: a new pause starts the back-off again.
    paused_at: Millis,
    /// Probes started since that pause.
    started: u32,
    /// When the next may start; `Millis::MAX` when the probe cannot lift this pause.
    next_at: Millis,
    running: bool,
}

/// A paused gate: name, when it paused, why.
pub type PausedGate = (String, Millis, String);

/// The schedule of probes. Written by the watchdog (which starts probes) and by the probe
/// threads (which report back), hence shared behind a mutex held for a map operation only.
#[derive(Debug, Default)]
pub struct Reprobe {
    gates: HashMap<String, Probing>,
}

impl Reprobe {
    /// The gates of `paused` whose probe is due at `now`, marked running; gates no longer
    /// paused are forgotten. Pure: no I/O, no clock but `now`.
    pub fn run_once(&mut self, paused: &[PausedGate], now: Millis) -> Vec<(String, String)> {
        self.gates.retain(|name, _| paused.iter().any(|(p, _, _)| p == name));
        let mut due = Vec::new();
        for (name, paused_at, reason) in paused {
            let first_at = paused_at.saturating_add(backoff(0).as_millis() as Millis);
            let entry = self.gates.entry(name.clone()).or_insert(Probing {
                paused_at: *paused_at,
                started: 0,
                next_at: first_at,
                running: false,
            });
            if entry.paused_at != *paused_at {
                *entry = Probing { paused_at: *paused_at, started: 0, next_at: first_at, running: false };
            }
            if !entry.running && now >= entry.next_at {
                entry.started += 1;
                entry.next_at = now.saturating_add(backoff(entry.started).as_millis() as Millis);
                entry.running = true;
                due.push((name.clone(), reason.clone()));
            }
        }
        due
    }

    /// A probe of `gate` finished; `lifts` is false when it said it cannot lift this pause.
    pub fn finished(&mut self, gate: &str, lifts: bool) {
        if let Some(entry) = self.gates.get_mut(gate) {
            entry.running = false;
            if !lifts {
                entry.next_at = Millis::MAX;
            }
        }
    }
}

/// The watchdog's turn of it: reads the paused gates that have a probe, starts the due ones.
pub(super) fn probe_due_gates(
    probes: &HashMap<String, GateProbe>,
    schedule: &Arc<Mutex<Reprobe>>,
    writer: &WriterHandle,
    waker: &Waker,
) {
    let listed = writer.call(false, Durability::Relaxed, |conn, now| Ok((gates::list(conn)?, now)));
    let (listed, now) = match listed {
        Ok(found) => found,
        Err(e) => return log::warn!(target: "queue", "could not read the paused gates to probe them: {e}"),
    };
    let paused: Vec<PausedGate> = listed
        .into_iter()
        .filter(|g| g.state == GateState::Paused && probes.contains_key(&g.name))
        .map(|g| (g.name, g.changed_at, g.reason.unwrap_or_default()))
        .collect();
    let due = lock(schedule).run_once(&paused, now);
    for (gate, reason) in due {
        let Some(probe) = probes.get(&gate).cloned() else { continue };
        let (shared, writer, waker) = (Arc::clone(schedule), writer.clone(), waker.clone());
        let name = gate.clone();
        let spawned = std::thread::Builder::new()
            .name("vl-gate-probe".into())
            .spawn(move || probe_one(&name, &reason, &probe, &shared, &writer, &waker));
        if let Err(e) = spawned {
            log::warn!(target: "queue", "could not start the probe of {gate}: {e}");
            lock(schedule).finished(&gate, true);
        }
    }
}

/// Runs one probe of `gate` and resumes the gate when it succeeds.
pub(super) fn probe_one(
    gate: &str,
    reason: &str,
    probe: &GateProbe,
    schedule: &Mutex<Reprobe>,
    writer: &WriterHandle,
    waker: &Waker,
) {
    let outcome = probe(reason);
    lock(schedule).finished(gate, outcome.is_some());
    match outcome {
        None => log::info!(target: "queue", "{gate} stays paused until its own condition lifts: {reason}"),
        Some(Err(why)) => log::info!(target: "queue", "{gate} is still refused; it is tried again later: {why}"),
        Some(Ok(())) => {
            // Only the pause this probe was for: one that began while it ran (a budget spent
            // after an admin's resume, say) has its own condition.
            let (name, probed) = (gate.to_owned(), reason.to_owned());
            let resume = move |conn: &rusqlite::Connection, now| match gates::pause_reason(conn, &name)? {
                Some(current) if current == probed => Ok(Some(gates::resume(conn, Some(&name), now)?)),
                _ => Ok(None),
            };
            match writer.call(true, Durability::Durable, resume) {
                Ok(None) => log::info!(target: "queue", "{gate} answered again; its pause had changed meanwhile"),
                Ok(Some(resumed)) => {
                    log::info!(
                        target: "queue",
                        "{gate} answered again and is resumed: {} held jobs released, {} refused jobs replayed",
                        resumed.released,
                        resumed.replayed.len()
                    );
                    waker.wake();
                }
                Err(e) => log::warn!(target: "queue", "{gate} answered again but could not be resumed: {e}"),
            }
        }
    }
}

fn lock(schedule: &Mutex<Reprobe>) -> std::sync::MutexGuard<'_, Reprobe> {
    // Held for a map operation only; a panic there leaves the map usable.
    schedule.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Millis = 60_000;

    fn paused(at: Millis) -> Vec<PausedGate> {
        vec![("command".to_owned(), at, "not authorised: not logged in".to_owned())]
    }

    #[test]
    fn probes_are_due_on_the_back_off_one_at_a_time() {
        let mut schedule = Reprobe::default();
        let gate = paused(1_000);
        assert!(schedule.run_once(&gate, 1_000 + 5 * MIN - 1).is_empty(), "not before five minutes");
        assert_eq!(schedule.run_once(&gate, 1_000 + 5 * MIN).len(), 1);
        assert!(schedule.run_once(&gate, 1_000 + 60 * MIN).is_empty(), "one probe at a time");
        schedule.finished("command", true);
        let t = 1_000 + 5 * MIN;
        assert!(schedule.run_once(&gate, t + 10 * MIN - 1).is_empty(), "then ten minutes");
        assert_eq!(schedule.run_once(&gate, t + 10 * MIN).len(), 1);
        schedule.finished("command", true);
        assert!(schedule.run_once(&gate, t + 10 * MIN + 20 * MIN - 1).is_empty(), "then twenty");
        assert_eq!(schedule.run_once(&gate, t + 30 * MIN).len(), 1);
        // A pause anew starts again at five minutes; a resumed gate is forgotten.
        schedule.finished("command", true);
        let again = paused(t + 31 * MIN);
        assert!(schedule.run_once(&again, t + 35 * MIN).is_empty());
        assert_eq!(schedule.run_once(&again, t + 36 * MIN).len(), 1);
        assert!(schedule.run_once(&[], t + 37 * MIN).is_empty());
        assert!(schedule.gates.is_empty());
    }

    #[test]
    fn a_pause_the_probe_cannot_lift_is_not_probed_again() {
        let mut schedule = Reprobe::default();
        let gate = paused(0);
        assert_eq!(schedule.run_once(&gate, 5 * MIN).len(), 1);
        schedule.finished("command", false);
        assert!(schedule.run_once(&gate, 1_000 * MIN).is_empty());
    }
}
