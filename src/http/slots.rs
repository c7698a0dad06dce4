//! Connection slots: which connections are open, what each is doing and since when, and which
//! one gives way when all of them are taken.
//!
//! # Eviction instead of refusal
//! Refusing new connections at the cap let 300 slow clients (one header byte every 2 s) lock
//! every other client out: 10 of 10 `/api/health` requests got 503 (measured on the old
//! server). Now a newcomer at the cap takes the slot of the connection that has waited longest
//! without a complete request: first one closing after an error (lingering), then one waiting
//! for a head (a slow client, or an idle keep-alive connection), then one reading a body. A
//! connection inside a handler is never evicted; only when all are there is the newcomer
//! refused. The evicted connection's socket is shut down, which wakes its thread's blocked read
//! at once; [`Slot::enter`] tells the thread it was evicted, so a request that completed in
//! that instant is dropped rather than run without anyone to answer.
//!
//! # Locking
//! One `Mutex` over the table: it is taken three times per request (head, body, handler) and
//! held for a hash-map update. The worker's CPU per observation POST stayed at ~119 µs (118
//! before, 16 keep-alive connections, median of 56 runs each), so a lock-free table of atomics
//! would save nothing measurable and make the "evicted just as it entered the handler" race
//! much harder to see. Nothing that can panic runs under the lock.

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// A connection the table can close from another thread.
pub trait Evict {
    fn evict(&self);
}

impl Evict for TcpStream {
    fn evict(&self) {
        // Both directions: the owner's blocked read returns at once, the client sees the close.
        let _ = self.shutdown(Shutdown::Both);
    }
}

/// What a connection is doing, in eviction order: the first variants go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Answered an error and is draining what the client still sends before closing.
    Lingering,
    /// Waiting for a complete head: new, idle between keep-alive requests, or slow.
    Head,
    /// Reading a request body.
    Body,
    /// Inside a handler or writing its response: never evicted.
    Handling,
}

struct Entry<H> {
    handle: Arc<H>,
    phase: Phase,
    since: Instant,
}

struct Table<H> {
    next_id: u64,
    open: HashMap<u64, Entry<H>>,
}

/// The table of open connections, at most `capacity` of them. Shared by the accept thread
/// (admits, evicts) and the connection threads (update their phase, leave on drop).
pub struct Slots<H> {
    capacity: usize,
    table: Mutex<Table<H>>,
}

/// The outcome of [`Slots::admit`].
pub enum Admission<H: Evict> {
    /// The connection has a slot (and, at the cap, `evicted` lost its own).
    Admitted { slot: Slot<H>, evicted: bool },
    /// Every open connection is inside a handler: refuse the newcomer.
    Full,
}

impl<H: Evict> Slots<H> {
    pub fn new(capacity: usize) -> Arc<Slots<H>> {
        Arc::new(Slots { capacity, table: Mutex::new(Table { next_id: 0, open: HashMap::new() }) })
    }

    /// Gives `handle` a slot in [`Phase::Head`], evicting another connection at the cap.
    pub fn admit(self: &Arc<Self>, handle: Arc<H>, now: Instant) -> Admission<H> {
        let (id, victim) = {
            let mut table = self.lock();
            let mut victim = None;
            if table.open.len() >= self.capacity {
                let chosen = table
                    .open
                    .iter()
                    .filter(|(_, e)| e.phase != Phase::Handling)
                    .min_by_key(|(_, e)| (e.phase, e.since))
                    .map(|(id, _)| *id);
                match chosen {
                    Some(id) => victim = table.open.remove(&id).map(|e| e.handle),
                    None => return Admission::Full,
                }
            }
            let id = table.next_id;
            table.next_id += 1;
            table.open.insert(id, Entry { handle, phase: Phase::Head, since: now });
            (id, victim)
        };
        let evicted = victim.is_some();
        if let Some(victim) = victim {
            victim.evict();
        }
        Admission::Admitted { slot: Slot { slots: Arc::clone(self), id }, evicted }
    }

    /// Open connections now.
    pub fn open(&self) -> usize {
        self.lock().open.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table<H>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One connection's slot; dropping it (on any exit, a panic included) frees the slot.
pub struct Slot<H: Evict> {
    slots: Arc<Slots<H>>,
    id: u64,
}

impl<H: Evict> Slot<H> {
    /// Records that the connection now does `phase`, since `now`. `false`: it was evicted and
    /// must stop; in particular a request must not enter a handler.
    pub fn enter(&self, phase: Phase, now: Instant) -> bool {
        match self.slots.lock().open.get_mut(&self.id) {
            Some(entry) => {
                entry.phase = phase;
                entry.since = now;
                true
            }
            None => false,
        }
    }
}

impl<H: Evict> Drop for Slot<H> {
    fn drop(&mut self) {
        self.slots.lock().open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[derive(Default)]
    struct Fake(AtomicBool);

    impl Evict for Fake {
        fn evict(&self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn admit(slots: &Arc<Slots<Fake>>, at: Instant) -> (Slot<Fake>, Arc<Fake>, bool) {
        let fake = Arc::new(Fake::default());
        match slots.admit(Arc::clone(&fake), at) {
            Admission::Admitted { slot, evicted } => (slot, fake, evicted),
            Admission::Full => panic!("refused"),
        }
    }

    #[test]
    fn at_the_cap_the_longest_waiting_head_gives_way() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let slots = Slots::new(3);
        let (old, old_fake, _) = admit(&slots, at(0));
        let (newer, newer_fake, _) = admit(&slots, at(10));
        let (busy, busy_fake, _) = admit(&slots, at(20));
        assert!(busy.enter(Phase::Handling, at(1)), "the oldest, but inside a handler");
        let (_fresh, _, evicted) = admit(&slots, at(30));
        assert!(evicted);
        assert!(old_fake.0.load(Ordering::SeqCst) && !newer_fake.0.load(Ordering::SeqCst));
        assert!(!busy_fake.0.load(Ordering::SeqCst));
        assert!(!old.enter(Phase::Handling, at(31)), "an evicted connection must not run a handler");
        assert!(newer.enter(Phase::Body, at(31)));
        assert_eq!(slots.open(), 3);
    }

    #[test]
    fn lingering_goes_before_heads_and_heads_before_bodies() {
        let t0 = Instant::now();
        let slots = Slots::new(3);
        let (body, body_fake, _) = admit(&slots, t0);
        body.enter(Phase::Body, t0);
        let (_head, head_fake, _) = admit(&slots, t0 + Duration::from_millis(5));
        let (linger, linger_fake, _) = admit(&slots, t0);
        linger.enter(Phase::Lingering, t0 + Duration::from_millis(9));
        let _first = admit(&slots, t0 + Duration::from_millis(10));
        assert!(linger_fake.0.load(Ordering::SeqCst) && !head_fake.0.load(Ordering::SeqCst));
        drop(linger);
        assert_eq!(slots.open(), 3, "dropping an evicted slot frees nothing more");
        let _second = admit(&slots, t0 + Duration::from_millis(11));
        assert!(head_fake.0.load(Ordering::SeqCst) && !body_fake.0.load(Ordering::SeqCst));
    }

    #[test]
    fn all_in_handlers_refuses_and_a_dropped_slot_frees_its_place() {
        let t0 = Instant::now();
        let slots = Slots::new(2);
        let (a, _, _) = admit(&slots, t0);
        let (b, _, _) = admit(&slots, t0);
        a.enter(Phase::Handling, t0);
        b.enter(Phase::Handling, t0);
        assert!(matches!(slots.admit(Arc::new(Fake::default()), t0), Admission::Full));
        drop(a);
        assert_eq!(slots.open(), 1);
        let (_c, _, evicted) = admit(&slots, t0);
        assert!(!evicted);
    }

    #[test]
    fn a_panicking_owner_still_frees_its_slot() {
        let slots = Slots::new(1);
        let (slot, _, _) = admit(&slots, Instant::now());
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _slot = slot;
            panic!("a handler bug");
        }));
        assert!(result.is_err());
        assert_eq!(slots.open(), 0);
    }
}
