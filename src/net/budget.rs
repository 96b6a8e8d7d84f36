//! One budget for body bytes in flight across all fetches
//! (`crawl.max_body_bytes_in_flight`), so that the memory bodies take is
//! bounded by the budget, not by concurrency times the body cap, and so that
//! large bodies cannot stall each other.
//!
//! Each body read takes a [`Lease`] and makes it [`Lease::cover`] its buffer's
//! capacity as it grows, in 64 KiB units. The budget `B` (rounded up to
//! 64 KiB) is split in two: a *reserve* of one body cap (the largest of
//! `max_body_bytes` and `max_robots_bytes`; all of `B` if `B` is smaller) and
//! a shared *pool* (the rest). A lease grows from the pool while it can.
//! When the pool has no room, it waits for room or for the single *finisher
//! token*, whichever comes first; the token holder may also draw on the
//! reserve, which only it can touch, so it always reaches its cap without
//! waiting. The lease gives back its bytes, reserve and token when it is
//! dropped (after parsing; the lease travels with the [`super::Response`]).
//!
//! A small *lane* of [`LANE_UNITS`] units is carved out of the pool (when
//! the pool holds at least four times that) for bodies of one unit: a
//! lease's first unit comes from the lane while it has room, and a lease that
//! grows past one unit trades its lane unit for pool (or reserve) units. So
//! an article page of a few kilobytes never waits behind multi-megabyte
//! bodies that hold the pool while they wait for a parse slot; the lane is
//! part of the budget, so the bound below is unchanged.
//!
//! Why it cannot stall: the token holder never waits for budget, so it
//! finishes (or fails on its own read deadline) and passes the token to the
//! next waiter. However many bodies hold part of the pool and want more, one
//! of them is always moving. The old hold-and-wait budget (one semaphore)
//! let every large body wait on the others until its read deadline.
//!
//! The bound: the bytes all leases hold never exceed `B` (pool plus
//! reserve), and one lease never holds more than the reserve. An identity
//! body is covered *before* its buffer grows, so its buffer never exceeds
//! its lease. A compressed body is decoded in small steps and covered right
//! after each one, so while it waits it can be ahead of its lease by its
//! latest growth (the buffer at most doubles, plus one step's output, and
//! never passes the body cap). Decoder windows, socket buffers and parsing
//! are outside the budget.
//!
//! Two rules for callers: a task must not hold one `Response` while it
//! fetches another body, or the second may wait on the first's token. With
//! `crawl.archive` on, a content-encoded body is held twice while it is read
//! (raw and decoded): the raw copy is covered before it grows, so one lease may
//! then cover a body cap plus a raw cap (`max_raw_bytes`); the raw bytes are
//! dropped once the page is parsed, and only a page that will be archived is
//! turned into gzip members on the worker, which keep the lease until the
//! engine has appended them.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::url::Url;

/// The unit the budget is counted in.
const UNIT: u64 = 64 * 1024;

/// Units of the small-body lane (2 MiB): more than the fetches in flight at
/// the default concurrency, so growing bodies waiting with a lane unit
/// cannot fill it.
const LANE_UNITS: u32 = 32;

/// The shared budget (cheap to clone). `0` bytes: no budget.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    shared: Option<Arc<Shared>>,
}

#[derive(Debug)]
struct Shared {
    /// Units any lease may take.
    pool: Arc<Semaphore>,
    /// Units only the token holder may take; full whenever the token is free.
    reserve: Arc<Semaphore>,
    /// The finisher token: one permit.
    token: Arc<Semaphore>,
    /// Size of the reserve, and the most one lease covers.
    reserve_units: u32,
    /// Units for bodies of one unit (see the module doc).
    lane: Arc<Semaphore>,
}

fn units(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX)
}

impl BodyBudget {
    /// A budget of `bytes` for bodies of at most `body_cap` decoded bytes.
    pub(crate) fn new(bytes: u64, body_cap: u64) -> BodyBudget {
        if bytes == 0 {
            return BodyBudget { shared: None };
        }
        // Semaphores hold at most `usize::MAX >> 3` permits.
        let total = units(bytes).min(u32::MAX >> 4);
        let reserve_units = units(body_cap).clamp(1, total);
        let pool = total - reserve_units;
        let lane = if pool >= 4 * LANE_UNITS {
            LANE_UNITS
        } else {
            0
        };
        BodyBudget {
            shared: Some(Arc::new(Shared {
                pool: Arc::new(Semaphore::new((pool - lane) as usize)),
                reserve: Arc::new(Semaphore::new(reserve_units as usize)),
                token: Arc::new(Semaphore::new(1)),
                reserve_units,
                lane: Arc::new(Semaphore::new(lane as usize)),
            })),
        }
    }

    /// An empty lease for the body of `url` (named in the debug log).
    pub(crate) fn lease(&self, url: &Url) -> Lease {
        Lease {
            shared: self.shared.clone(),
            url: url.clone(),
            pool: None,
            reserve: None,
            token: None,
            lane: None,
        }
    }

    /// Bytes not leased right now (pool and reserve).
    #[cfg(test)]
    pub(crate) fn available(&self) -> u64 {
        self.shared.as_ref().map_or(u64::MAX, |s| {
            (s.pool.available_permits()
                + s.reserve.available_permits()
                + s.lane.available_permits()) as u64
                * UNIT
        })
    }

    /// The finisher token is free.
    #[cfg(test)]
    fn token_free(&self) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|s| s.token.available_permits() == 1)
    }
}

/// The part of the budget one body holds; given back on drop.
#[derive(Debug)]
pub(crate) struct Lease {
    shared: Option<Arc<Shared>>,
    url: Url,
    pool: Option<OwnedSemaphorePermit>,
    reserve: Option<OwnedSemaphorePermit>,
    token: Option<OwnedSemaphorePermit>,
    /// One lane unit while the body is no bigger than that.
    lane: Option<OwnedSemaphorePermit>,
}

/// What a lease waiting for the pool got first.
enum Grant {
    Pool(OwnedSemaphorePermit),
    Token(OwnedSemaphorePermit),
}

fn count(p: &Option<OwnedSemaphorePermit>) -> u32 {
    p.as_ref().map_or(0, |p| p.num_permits() as u32)
}

fn add(slot: &mut Option<OwnedSemaphorePermit>, permit: OwnedSemaphorePermit) {
    match slot {
        Some(h) => h.merge(permit),
        None => *slot = Some(permit),
    }
}

impl Lease {
    fn units(&self) -> u32 {
        count(&self.pool) + count(&self.reserve) + count(&self.lane)
    }

    /// Bytes this lease holds.
    pub(crate) fn bytes(&self) -> u64 {
        u64::from(self.units()) * UNIT
    }

    /// Grow the lease to cover `bytes`, waiting until `until` for room.
    /// `false` when it got no room by then. A lease never covers more than
    /// the reserve (one body cap, or the whole budget if that is smaller).
    /// Dropping the future while it waits gives back whatever it was given.
    pub(crate) async fn cover(&mut self, bytes: u64, until: Instant) -> bool {
        let Some(s) = self.shared.clone() else {
            return true;
        };
        let want = units(bytes).min(s.reserve_units);
        if want <= self.units() {
            return true;
        }
        if want == 1
            && let Ok(p) = s.lane.clone().try_acquire_owned()
        {
            self.lane = Some(p);
            return true;
        }
        // Past one unit, the lane unit (if any) is traded for pool or reserve units.
        let ok = self.grow(&s, want, bytes, until).await;
        if ok {
            self.lane = None;
        }
        ok
    }

    /// Take pool units (or the token and reserve units) until the pool and
    /// reserve parts cover `want` units.
    async fn grow(&mut self, s: &Arc<Shared>, want: u32, bytes: u64, until: Instant) -> bool {
        let more = want - count(&self.pool) - count(&self.reserve);
        if self.token.is_none() {
            if let Ok(p) = s.pool.clone().try_acquire_many_owned(more) {
                add(&mut self.pool, p);
                return true;
            }
            tracing::debug!(
                url = %self.url,
                bytes,
                holding = self.bytes(),
                waiting_for = u64::from(more) * UNIT,
                "body budget: waiting for room or the finisher token"
            );
            let first = async {
                tokio::select! {
                    biased;
                    p = s.pool.clone().acquire_many_owned(more) => p.map(Grant::Pool),
                    t = s.token.clone().acquire_owned() => t.map(Grant::Token),
                }
            };
            match tokio::time::timeout_at(until, first).await {
                Ok(Ok(Grant::Pool(p))) => {
                    add(&mut self.pool, p);
                    return true;
                }
                Ok(Ok(Grant::Token(t))) => {
                    tracing::debug!(
                        url = %self.url,
                        bytes,
                        holding = self.bytes(),
                        "body budget: took the finisher token"
                    );
                    self.token = Some(t);
                }
                // Deadline, or the semaphores closed (they never are).
                _ => return false,
            }
        }
        // The token holder alone draws on the reserve, which was full when it
        // took the token: `more <= reserve_units - held reserve` because
        // `want <= reserve_units`, so this never fails.
        match s.reserve.clone().try_acquire_many_owned(more) {
            Ok(p) => {
                add(&mut self.reserve, p);
                true
            }
            Err(_) => false,
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // The reserve goes back before the token, so the next holder finds it full.
        self.reserve.take();
        self.pool.take();
        self.lane.take();
        self.token.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    fn url(i: usize) -> Url {
        Url::parse(&format!("http://news.test/{i}")).unwrap()
    }

    #[tokio::test]
    async fn leases_share_one_budget_and_give_it_back() {
        // Budget of 4 units, cap of 2: pool 2, reserve 2.
        let b = BodyBudget::new(4 * UNIT, 2 * UNIT);
        let soon = || Instant::now() + Duration::from_millis(50);
        let mut a = b.lease(&url(0));
        assert!(a.cover(100, soon()).await);
        assert!(a.cover(2 * UNIT, soon()).await);
        assert_eq!(a.bytes(), 2 * UNIT);
        assert!(b.token_free(), "the pool was enough");
        let mut c = b.lease(&url(1));
        assert!(c.cover(UNIT, soon()).await, "pool empty: takes the token");
        assert!(!b.token_free());
        assert!(c.cover(2 * UNIT, soon()).await);
        // Never more than one cap, however large the body.
        assert!(c.cover(100 * UNIT, soon()).await);
        assert_eq!(c.bytes(), 2 * UNIT);
        let mut d = b.lease(&url(2));
        assert!(!d.cover(UNIT, soon()).await, "no pool, token taken");
        drop(a);
        assert!(d.cover(2 * UNIT, soon()).await, "room again after a drop");
        drop(c);
        drop(d);
        assert_eq!(b.available(), 4 * UNIT);
        assert!(b.token_free());
        let mut none = BodyBudget::new(0, UNIT).lease(&url(3));
        assert!(none.cover(u64::MAX, soon()).await);
    }

    #[tokio::test]
    async fn a_budget_under_one_cap_is_all_reserve() {
        let b = BodyBudget::new(2 * UNIT, 10 * UNIT);
        let soon = || Instant::now() + Duration::from_millis(50);
        let mut a = b.lease(&url(0));
        assert!(a.cover(10 * UNIT, soon()).await, "covers the whole budget");
        assert_eq!(a.bytes(), 2 * UNIT);
        let mut c = b.lease(&url(1));
        assert!(!c.cover(1, soon()).await, "one body at a time");
        drop(a);
        assert!(c.cover(1, soon()).await);
    }

    /// A tiny xorshift, so the random steps are the same every run.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// (a) Many leases growing in random steps, dropped at random: the bytes
    /// held (counted up after each grant, down before each drop) never pass
    /// the budget, and every grant covers what was asked, up to the cap.
    #[tokio::test(start_paused = true)]
    async fn the_bound_holds_under_random_growth() {
        // 20 units and a byte: rounds up to 21 units (no lane).
        random_growth(8 * UNIT, 20 * UNIT + 1, 21 * UNIT).await;
        // 168 units: a reserve of 8, a lane of 32, a pool of 128.
        random_growth(8 * UNIT, 168 * UNIT, 168 * UNIT).await;
    }

    async fn random_growth(cap: u64, budget: u64, bound: u64) {
        let b = BodyBudget::new(budget, cap);
        let held = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for i in 0..24u64 {
            let (b, held) = (b.clone(), held.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = 0x9e37_79b9_7f4a_7c15 ^ (i + 1).wrapping_mul(0x2545_f491);
                for round in 0..6 {
                    let mut lease = b.lease(&url(i as usize));
                    let mut asked = 0u64;
                    let target = next(&mut rng) % (cap + UNIT) + 1;
                    while asked < target {
                        asked = (asked + next(&mut rng) % (3 * UNIT) + 1).min(target);
                        let before = lease.bytes();
                        let until = Instant::now() + Duration::from_secs(30);
                        assert!(lease.cover(asked, until).await, "lease {i}/{round} stalled");
                        assert!(lease.bytes() >= asked.min(cap), "{i}: asked {asked}");
                        assert!(lease.bytes() <= cap);
                        let now = held.fetch_add(lease.bytes() - before, Ordering::SeqCst)
                            + lease.bytes()
                            - before;
                        assert!(now <= bound, "{now} bytes held over the bound {bound}");
                        tokio::time::sleep(Duration::from_millis(next(&mut rng) % 5)).await;
                    }
                    tokio::time::sleep(Duration::from_millis(next(&mut rng) % 20)).await;
                    held.fetch_sub(lease.bytes(), Ordering::SeqCst);
                    drop(lease);
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(b.available(), bound);
        assert!(b.token_free());
    }

    /// (d) Bodies of one unit come from the lane: a small page is read at
    /// once while large bodies hold the whole pool and the token, and a body
    /// that grows past one unit gives its lane unit back.
    #[tokio::test(start_paused = true)]
    async fn a_small_body_does_not_wait_behind_large_ones() {
        // A reserve of 2 units, a lane of 32, a pool of 96.
        let b = BodyBudget::new(130 * UNIT, 2 * UNIT);
        let far = || Instant::now() + Duration::from_secs(60);
        let soon = || Instant::now() + Duration::from_millis(10);
        let mut large = Vec::new();
        for i in 0..48 {
            let mut l = b.lease(&url(i));
            assert!(l.cover(2 * UNIT, far()).await);
            large.push(l);
        }
        let mut holder = b.lease(&url(48));
        assert!(holder.cover(2 * UNIT, far()).await, "takes the token");
        assert!(!b.token_free());
        assert_eq!(b.available(), 32 * UNIT, "only the lane is left");
        let mut small = b.lease(&url(49));
        assert!(
            small.cover(1_820, soon()).await,
            "a small page is not held up"
        );
        assert_eq!(small.bytes(), UNIT);
        // Growing past one unit needs the pool: it waits like any other body.
        assert!(!small.cover(2 * UNIT, soon()).await);
        drop(large.pop());
        assert!(small.cover(2 * UNIT, soon()).await);
        assert_eq!(small.bytes(), 2 * UNIT, "the lane unit was traded");
        assert_eq!(b.available(), 32 * UNIT, "the lane is whole again");
        drop((large, holder, small));
        assert_eq!(b.available(), 130 * UNIT);
        assert!(b.token_free());
    }

    /// (b) N bodies each growing to the cap in 64 KiB steps with a budget of
    /// 2.5 caps: with one shared semaphore they would all hold a share and
    /// wait on each other until the deadline; here all finish, long before it.
    #[tokio::test(start_paused = true)]
    async fn large_bodies_all_finish_without_stalling() {
        let cap = 16 * UNIT;
        let b = BodyBudget::new(40 * UNIT, cap);
        let deadline = Duration::from_secs(60);
        let start = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..8 {
            let b = b.clone();
            tasks.push(tokio::spawn(async move {
                let mut lease = b.lease(&url(i));
                let mut bytes = 0;
                while bytes < cap {
                    bytes += UNIT;
                    // A fresh read deadline per step, as the body loop does.
                    if !lease.cover(bytes, Instant::now() + deadline).await {
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                // Parsing takes a moment before the body is dropped.
                tokio::time::sleep(Duration::from_millis(5)).await;
                true
            }));
        }
        for t in tasks {
            assert!(t.await.unwrap(), "a body timed out waiting for budget");
        }
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}: stalled",
            start.elapsed()
        );
        assert_eq!(b.available(), 40 * UNIT);
        assert!(b.token_free());
    }

    /// (c) A waiter cancelled (its fetch dropped or timed out) leaks nothing,
    /// not even the part of the pool it was given while it waited, and the
    /// token goes on to the next waiter.
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_waiter_leaks_nothing_and_the_token_moves_on() {
        // Pool 2 units, reserve 2.
        let b = BodyBudget::new(4 * UNIT, 2 * UNIT);
        let far = || Instant::now() + Duration::from_secs(60);
        let mut a = b.lease(&url(0));
        assert!(a.cover(UNIT, far()).await, "half the pool");
        let mut holder = b.lease(&url(1));
        assert!(
            holder.cover(2 * UNIT, far()).await,
            "pool short: takes the token"
        );
        assert!(!b.token_free());
        assert_eq!(b.available(), UNIT);

        // It waits (one unit short, token taken), holding the free unit.
        let mut cancelled = b.lease(&url(2));
        let waiting =
            tokio::time::timeout(Duration::from_millis(10), cancelled.cover(2 * UNIT, far()));
        assert!(waiting.await.is_err(), "it waited");
        // One that gives up on its own deadline.
        let mut late = b.lease(&url(3));
        assert!(
            !late
                .cover(2 * UNIT, Instant::now() + Duration::from_millis(10))
                .await
        );
        assert_eq!((cancelled.bytes(), late.bytes()), (0, 0));
        assert_eq!(b.available(), UNIT, "the unit they waited on is back");

        // A waiter queued behind them gets the token when the holder drops.
        let next = b.clone();
        let waiter = tokio::spawn(async move {
            let mut lease = next.lease(&url(4));
            let ok = lease.cover(2 * UNIT, far()).await;
            (ok, lease.bytes(), lease)
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        drop(cancelled);
        drop(late);
        drop(holder);
        let (ok, bytes, lease) = waiter.await.unwrap();
        assert!(ok);
        assert_eq!(bytes, 2 * UNIT);
        assert!(!b.token_free(), "the waiter holds the token now");
        drop(lease);
        drop(a);
        assert_eq!(b.available(), 4 * UNIT, "everything given back");
        assert!(b.token_free());
    }
}
