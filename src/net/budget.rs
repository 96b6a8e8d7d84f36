//! One budget for body bytes in flight across all fetches
//! (`crawl.max_body_bytes_in_flight`), so that the memory bodies take is
//! bounded by the budget, not by concurrency times the body cap.
//!
//! Each body read takes a [`Lease`] and makes it [`Lease::cover`] the bytes
//! its buffer holds as it grows, in 64 KiB units; a fetch that would go over
//! waits (until its read deadline) for others to give bytes back. The lease
//! travels with the [`super::Response`] and is given back when the body is
//! dropped (after parsing). A compressed body is decoded in small steps, so
//! it can outgrow its lease by at most one step's output before it waits.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The unit the budget is counted in.
const UNIT: u64 = 64 * 1024;

/// The shared budget (cheap to clone). `0` bytes: no budget.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    sem: Option<Arc<Semaphore>>,
    units: u32,
}

impl BodyBudget {
    pub fn new(bytes: u64) -> BodyBudget {
        if bytes == 0 {
            return BodyBudget {
                sem: None,
                units: 0,
            };
        }
        let units = u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX >> 4);
        BodyBudget {
            sem: Some(Arc::new(Semaphore::new(units as usize))),
            units,
        }
    }

    /// An empty lease for one body.
    pub fn lease(&self) -> Lease {
        Lease {
            sem: self.sem.clone(),
            total: self.units,
            held: Mutex::new(None),
        }
    }

    /// Bytes not leased right now.
    #[cfg(test)]
    pub fn available(&self) -> u64 {
        self.sem
            .as_ref()
            .map_or(u64::MAX, |s| s.available_permits() as u64 * UNIT)
    }
}

/// The part of the budget one body holds; given back on drop.
#[derive(Debug)]
pub struct Lease {
    sem: Option<Arc<Semaphore>>,
    total: u32,
    held: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Lease {
    fn units(&self) -> u32 {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |p| p.num_permits() as u32)
    }

    /// Bytes this lease holds.
    pub fn bytes(&self) -> u64 {
        u64::from(self.units()) * UNIT
    }

    /// Grow the lease to cover `bytes`, waiting until `until` for room.
    /// `false` when the budget had no room by then. A body never asks for
    /// more than the whole budget (it waits for all of it instead).
    pub async fn cover(&self, bytes: u64, until: Instant) -> bool {
        let Some(sem) = &self.sem else {
            return true;
        };
        let want = u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .min(self.total);
        let have = self.units();
        if want <= have {
            return true;
        }
        let more = want - have;
        let permit = match sem.clone().try_acquire_many_owned(more) {
            Ok(p) => p,
            Err(_) => {
                tracing::debug!(
                    bytes,
                    waiting_for = u64::from(more) * UNIT,
                    "body budget: waiting for room"
                );
                match tokio::time::timeout_at(until, sem.clone().acquire_many_owned(more)).await {
                    Ok(Ok(p)) => p,
                    _ => return false,
                }
            }
        };
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        match held.as_mut() {
            Some(h) => h.merge(permit),
            None => *held = Some(permit),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn leases_share_one_budget_and_give_it_back() {
        let b = BodyBudget::new(4 * UNIT);
        let soon = || Instant::now() + Duration::from_millis(50);
        let a = b.lease();
        assert!(a.cover(100, soon()).await);
        assert!(a.cover(3 * UNIT, soon()).await);
        assert_eq!(a.bytes(), 3 * UNIT);
        let c = b.lease();
        assert!(c.cover(UNIT, soon()).await);
        assert!(!c.cover(2 * UNIT, soon()).await, "over the budget");
        drop(a);
        assert!(c.cover(4 * UNIT, soon()).await, "room again after a drop");
        // Never more than the whole budget, however large the body.
        assert!(c.cover(100 * UNIT, soon()).await);
        assert_eq!(c.bytes(), 4 * UNIT);
        drop(c);
        assert_eq!(b.available(), 4 * UNIT);
        assert!(BodyBudget::new(0).lease().cover(u64::MAX, soon()).await);
    }
}
