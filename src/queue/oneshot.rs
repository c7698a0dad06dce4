//! A one-value reply slot between the writer and a caller waiting for its commit.
//!
//! The caller blocks on a condition variable (a futex) at once. A crossbeam channel's `recv`
//! first spins and calls `sched_yield` in a loop; with many HTTP threads waiting on the writer
//! at once on two cores, that spinning took CPU from the writer itself. Measured over 6,000
//! observation POSTs at 16 connections: ~20,000 `sched_yield` calls and 33,000 context
//! switches with the channel, ~300 and 17,500 with this slot; worker CPU 14 % lower.

use std::sync::{Arc, Condvar, Mutex};

enum Slot<T> {
    Waiting,
    Sent(T),
    /// The sender was dropped without sending (its operation panicked).
    Gone,
}

struct Shared<T> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
}

/// The sending half; dropping it unsent wakes the receiver with `None`.
pub struct Sender<T> {
    shared: Option<Arc<Shared<T>>>,
}

/// The receiving half.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared { slot: Mutex::new(Slot::Waiting), ready: Condvar::new() });
    (Sender { shared: Some(Arc::clone(&shared)) }, Receiver { shared })
}

impl<T> Shared<T> {
    fn fill(&self, value: Slot<T>) {
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = value;
        self.ready.notify_one();
    }
}

impl<T> Sender<T> {
    pub fn send(mut self, value: T) {
        if let Some(shared) = self.shared.take() {
            shared.fill(Slot::Sent(value));
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.fill(Slot::Gone);
        }
    }
}

impl<T> Receiver<T> {
    /// Blocks until the value is sent; `None` if the sender was dropped without sending.
    pub fn recv(self) -> Option<T> {
        let mut slot = self.shared.slot.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match std::mem::replace(&mut *slot, Slot::Waiting) {
                Slot::Sent(value) => return Some(value),
                Slot::Gone => return None,
                Slot::Waiting => slot = self.shared.ready.wait(slot).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_sent_from_another_thread_is_received() {
        let (tx, rx) = channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            tx.send(42);
        });
        assert_eq!(rx.recv(), Some(42));
        sender.join().unwrap();
    }

    #[test]
    fn a_sender_dropped_unsent_wakes_the_receiver_with_none() {
        let (tx, rx) = channel::<u8>();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            drop(tx);
        });
        assert_eq!(rx.recv(), None);
        sender.join().unwrap();
    }
}
