//! Parse slots (`crawl.parse_concurrency`), handed out smallest body first.
//!
//! A body waits for a slot holding its lease on the body budget (and maybe
//! the budget's finisher token), so the order in which waiting bodies are
//! parsed decides how fast budget comes back. First come, first served let
//! a queue of multi-megabyte pages (each parse seconds long on a busy
//! machine) hold the slots and most of the budget while the small article
//! pages behind them waited, fetched but unparsed, until the time box
//! ended. Here a free slot goes to the smallest waiting body: a small page
//! is parsed in about a millisecond and gives its budget back, so it never
//! waits behind a parse bomb.
//!
//! No body waits forever: every grant to a body that came later passes over
//! the ones waiting before it, and a body passed over [`MAX_PASSED`] times
//! is served next, oldest first. Ties go to the one that came first.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// Grants that may go past one waiting body before it is served.
pub(crate) const MAX_PASSED: u32 = 16;

/// The parse slots (cheap to share behind the worker context).
#[derive(Debug)]
pub struct ParseSlots {
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    free: usize,
    next_seq: u64,
    waiting: Vec<Waiter>,
}

#[derive(Debug)]
struct Waiter {
    bytes: usize,
    seq: u64,
    passed: u32,
    tx: oneshot::Sender<Slot>,
}

/// One parse slot; freed (handed to the next waiter) on drop.
#[derive(Debug)]
pub struct Slot {
    state: Option<Arc<Mutex<State>>>,
}

impl ParseSlots {
    /// `n` slots (at least one).
    pub fn new(n: usize) -> ParseSlots {
        ParseSlots {
            state: Arc::new(Mutex::new(State {
                free: n.max(1),
                next_seq: 0,
                waiting: Vec::new(),
            })),
        }
    }

    /// Wait for a slot to parse a body of `bytes`. Dropping the future
    /// while it waits gives up its place (and any slot it was just given).
    pub async fn acquire(&self, bytes: usize) -> Slot {
        let rx = {
            let mut s = lock(&self.state);
            // A freed slot is handed on until a waiter takes it or none is
            // left (`hand_on`), so a free slot means nobody waits.
            if s.free > 0 {
                s.free -= 1;
                return Slot {
                    state: Some(self.state.clone()),
                };
            }
            let (tx, rx) = oneshot::channel();
            let seq = s.next_seq;
            s.next_seq += 1;
            s.waiting.push(Waiter {
                bytes,
                seq,
                passed: 0,
                tx,
            });
            rx
        };
        // The sender lives in `waiting` until it is used, so this only
        // fails if the slots were dropped: then parse without one.
        rx.await.unwrap_or(Slot { state: None })
    }

    /// Slots free right now.
    #[cfg(test)]
    fn free(&self) -> usize {
        lock(&self.state).free
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // The lock guards plain bookkeeping: a panic elsewhere cannot leave it half-done.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    /// The waiter to serve next: one passed over too often (oldest first),
    /// else the smallest body (oldest first among equals).
    fn pick(&mut self) -> Option<Waiter> {
        let starved = self
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, w)| w.passed >= MAX_PASSED)
            .min_by_key(|(_, w)| w.seq)
            .map(|(i, _)| i);
        let i = starved.or_else(|| {
            self.waiting
                .iter()
                .enumerate()
                .min_by_key(|(_, w)| (w.bytes, w.seq))
                .map(|(i, _)| i)
        })?;
        let chosen = self.waiting.swap_remove(i);
        for w in &mut self.waiting {
            if w.seq < chosen.seq {
                w.passed += 1;
            }
        }
        Some(chosen)
    }
}

/// Give one freed slot to the next waiter that still wants it, or mark it free.
fn hand_on(state: &Arc<Mutex<State>>) {
    loop {
        let next = {
            let mut s = lock(state);
            match s.pick() {
                Some(w) => w,
                None => {
                    s.free += 1;
                    return;
                }
            }
        };
        let slot = Slot {
            state: Some(state.clone()),
        };
        match next.tx.send(slot) {
            Ok(()) => return,
            // That waiter gave up: disarm the slot (no recursive release) and try the next.
            Err(mut slot) => slot.state = None,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            hand_on(&state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Queue waiters of the given sizes behind `slots` (all taken), in order.
    async fn queue(
        slots: &Arc<ParseSlots>,
        sizes: &[usize],
    ) -> tokio::sync::mpsc::UnboundedReceiver<usize> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for &n in sizes {
            let (s, tx) = (slots.clone(), tx.clone());
            tokio::spawn(async move {
                let slot = s.acquire(n).await;
                let _ = tx.send(n);
                drop(slot);
            });
            // Let it register before the next one comes.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        rx
    }

    #[tokio::test]
    async fn the_smallest_waiting_body_is_parsed_first() {
        let slots = Arc::new(ParseSlots::new(1));
        let held = slots.acquire(0).await;
        let mut order = queue(&slots, &[7_000_000, 6_000_000, 1_800, 9_000_000, 2_000]).await;
        drop(held);
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(order.recv().await.expect("every waiter is served"));
        }
        assert_eq!(got, vec![1_800, 2_000, 6_000_000, 7_000_000, 9_000_000]);
        assert_eq!(slots.free(), 1, "the slot is free again");
    }

    #[tokio::test]
    async fn a_large_body_is_not_passed_over_forever() {
        let slots = Arc::new(ParseSlots::new(1));
        let held = slots.acquire(0).await;
        let mut sizes = vec![50_000_000];
        sizes.extend(std::iter::repeat_n(10, MAX_PASSED as usize + 4));
        let mut order = queue(&slots, &sizes).await;
        drop(held);
        let mut got = Vec::new();
        for _ in 0..sizes.len() {
            got.push(order.recv().await.expect("every waiter is served"));
        }
        let big_at = got.iter().position(|&n| n == 50_000_000).expect("served");
        assert_eq!(
            big_at, MAX_PASSED as usize,
            "served right after {MAX_PASSED} smaller ones went past it: {got:?}"
        );
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_does_not_keep_a_slot() {
        let slots = Arc::new(ParseSlots::new(1));
        let held = slots.acquire(0).await;
        let s = slots.clone();
        let gave_up = tokio::spawn(async move { s.acquire(10).await });
        tokio::time::sleep(Duration::from_millis(5)).await;
        gave_up.abort();
        let _ = gave_up.await;
        drop(held);
        assert_eq!(slots.free(), 1);
        // And two slots let two through at once.
        let two = ParseSlots::new(2);
        let (_a, _b) = (two.acquire(1).await, two.acquire(1).await);
        assert_eq!(two.free(), 0);
    }
}
