//! Per-host politeness: the gate every request passes right before it is sent.
//!
//! For each host key (host plus explicit port) the [`Gate`] holds:
//! * `gap`: the minimum time between two request *starts* (config
//!   `min_host_gap`, raised by robots.txt `Crawl-delay` up to `max_crawl_delay`);
//! * `last_at`: stamped when a slot is taken, which is immediately before
//!   `send()`, never when a URL leaves a queue. The next request may go at
//!   `last_at + gap`: the gap counts from start to start, so a host that
//!   answers within its gap is asked once per gap. The server's clock is the
//!   judge, though, and a request can reach the server later than it was
//!   stamped: it had to open a connection (DNS, TCP, TLS), or the runtime was
//!   busy before it was written. So when the answer arrives
//!   ([`Gate::answered`]), `last_at` moves to the latest moment the server can
//!   have received the request had everything else been as quick as the
//!   host's quickest answer: `answer - fastest + JITTER`, where `fastest` is
//!   the shortest send-to-answer time seen on a reused connection (this
//!   answer's included, so an answer quicker than any before counts from
//!   itself; a host whose answers vary in time pays the variation) and
//!   [`JITTER`] allows for the scheduling noise of both ends. An answer on a
//!   new connection, or before [`QUICK_SAMPLES`] answers on reused ones have
//!   shown how quick the host is, counts from the answer itself. When nothing was late this is the send time; when something was,
//!   the next request waits for what the server saw. A gap raised later (a
//!   Crawl-delay read from robots.txt) applies at once;
//! * `in_flight` / the concurrency limit (`per_host_concurrency`);
//! * `paused_until`: set by 429/503 `Retry-After`;
//! * `rested`: the host is refused for the rest of the run;
//! * `failures`: consecutive network failures (rested at `host_max_failures`);
//! * `conn`: the (local, remote) addresses of the connection the last answer
//!   came on; `fastest`: the shortest send-to-answer time on a reused one.
//!
//! One small std `Mutex` map shared by all tasks; waits happen outside the lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Per-host state. See the module docs for each field.
#[derive(Debug)]
struct Host {
    gap: Duration,
    last_at: Option<Instant>,
    in_flight: usize,
    paused_until: Option<Instant>,
    rested: bool,
    failures: u32,
    conn: Option<Conn>,
    fastest: Option<Duration>,
    /// Answers seen on reused connections.
    quick_samples: u32,
    /// Woken when a slot is released.
    freed: Arc<Notify>,
}

/// Allowance for the scheduling noise of client and server when the gap is
/// counted from the send (see the module docs).
pub(crate) const JITTER: Duration = Duration::from_millis(5);
/// Answers on reused connections needed before the quickest one is trusted.
pub(crate) const QUICK_SAMPLES: u32 = 3;

/// A connection, as (local, remote) socket addresses.
pub(crate) type Conn = (std::net::SocketAddr, std::net::SocketAddr);

/// The politeness gate, shared by every fetch of a run.
#[derive(Debug)]
pub struct Gate {
    hosts: Mutex<HashMap<String, Host>>,
    default_gap: Duration,
    max_gap: Duration,
    per_host: usize,
    max_failures: u32,
}

/// A taken slot; releasing it (drop) lets the next request to the host start.
#[derive(Debug)]
pub(crate) struct Permit {
    gate: Arc<Gate>,
    host: String,
    /// How long the caller waited for this slot.
    pub waited: Duration,
}

/// Why the gate refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rested;

impl Gate {
    pub fn new(
        default_gap: Duration,
        max_gap: Duration,
        per_host: usize,
        max_failures: u32,
    ) -> Gate {
        Gate {
            hosts: Mutex::new(HashMap::new()),
            default_gap,
            max_gap: max_gap.max(default_gap),
            per_host: per_host.max(1),
            max_failures,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Host>> {
        // A panic while holding this lock leaves plain counters behind; keep going.
        self.hosts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with_host<T>(&self, host: &str, f: impl FnOnce(&mut Host) -> T) -> T {
        let mut map = self.lock();
        let h = map.entry(host.to_string()).or_insert_with(|| Host {
            gap: self.default_gap,
            last_at: None,
            in_flight: 0,
            paused_until: None,
            rested: false,
            failures: 0,
            conn: None,
            fastest: None,
            quick_samples: 0,
            freed: Arc::new(Notify::new()),
        });
        f(h)
    }

    /// Wait for the host's turn and take a slot. Call right before sending.
    pub(crate) async fn acquire(self: &Arc<Self>, host: &str) -> Result<Permit, Rested> {
        let start = Instant::now();
        loop {
            let freed = {
                let now = Instant::now();
                let step = self.with_host(host, |h| {
                    if h.rested {
                        return Err(Rested);
                    }
                    let ready = [h.last_at.map(|t| t + h.gap), h.paused_until]
                        .into_iter()
                        .flatten()
                        .max()
                        .unwrap_or(now);
                    if h.in_flight >= self.per_host {
                        return Ok(Wait::Slot(h.freed.clone()));
                    }
                    if ready > now {
                        return Ok(Wait::Until(ready));
                    }
                    h.in_flight += 1;
                    h.last_at = Some(now);
                    Ok(Wait::Go)
                })?;
                match step {
                    Wait::Go => {
                        let waited = start.elapsed();
                        tracing::debug!(
                            host,
                            waited_ms = waited.as_millis() as u64,
                            "gate: slot taken"
                        );
                        return Ok(Permit {
                            gate: self.clone(),
                            host: host.to_string(),
                            waited,
                        });
                    }
                    Wait::Until(t) => {
                        tokio::time::sleep_until(t).await;
                        continue;
                    }
                    Wait::Slot(n) => n,
                }
            };
            // Register interest, then re-check so a release between the check and
            // the wait is not missed.
            let notified = freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let still_full = self.with_host(host, |h| h.in_flight >= self.per_host && !h.rested);
            if still_full {
                notified.await;
            }
        }
    }

    /// The answer (status and headers) to a request sent at `sent_at`
    /// arrived on connection `conn` (None: unknown): move the gap's start to
    /// when the server can have seen the request at the latest (see the
    /// module docs).
    pub fn answered(&self, host: &str, sent_at: Instant, conn: Option<Conn>) {
        let now = Instant::now();
        let took = now.saturating_duration_since(sent_at);
        let late = self.with_host(host, |h| {
            let reused = conn.is_some() && h.conn == conn;
            if reused {
                h.fastest = Some(h.fastest.map_or(took, |f| f.min(took)));
                h.quick_samples += 1;
            }
            let seen_by = match (reused, h.fastest) {
                (true, Some(f)) if h.quick_samples > QUICK_SAMPLES => {
                    now.checked_sub(f.saturating_sub(JITTER)).unwrap_or(now)
                }
                _ => now,
            };
            h.conn = conn;
            let before = h.last_at;
            h.last_at = Some(h.last_at.map_or(seen_by, |t| t.max(seen_by)));
            h.last_at
                .zip(before)
                .map(|(a, b)| a.saturating_duration_since(b))
        });
        if let Some(late) = late.filter(|d| !d.is_zero()) {
            tracing::trace!(
                host,
                late_ms = late.as_millis() as u64,
                "gate: the gap counts from when the server can have seen the request"
            );
        }
    }

    fn release(&self, host: &str) {
        self.with_host(host, |h| {
            h.in_flight = h.in_flight.saturating_sub(1);
            h.freed.notify_waiters();
        });
    }

    /// Set the host's gap (clamped to at least the configured minimum).
    pub fn set_gap(&self, host: &str, gap: Duration) {
        let gap = gap.max(self.default_gap);
        self.with_host(host, |h| h.gap = gap);
        tracing::debug!(host, gap_ms = gap.as_millis() as u64, "gate: gap set");
    }

    /// Raise the gap for a robots.txt Crawl-delay, up to the configured maximum.
    pub(crate) fn apply_crawl_delay(&self, host: &str, delay: Duration) {
        let gap = crawl_delay_gap(delay, Duration::ZERO, self.max_gap);
        self.with_host(host, |h| {
            if gap > h.gap {
                h.gap = gap;
            }
        });
        tracing::debug!(
            host,
            delay_ms = delay.as_millis() as u64,
            "gate: crawl-delay applied"
        );
    }

    /// Back off after a 429/503 without Retry-After: double the gap, up to the maximum.
    pub(crate) fn back_off(&self, host: &str) {
        let max = self.max_gap;
        self.with_host(host, |h| {
            h.gap = (h.gap * 2)
                .max(Duration::from_millis(100))
                .min(max)
                .max(h.gap);
        });
    }

    /// How long until `host` could take a request (gap and pause; ignores
    /// the concurrency limit). Zero when it is ready now.
    pub fn ready_in(&self, host: &str) -> Duration {
        let now = Instant::now();
        self.with_host(host, |h| {
            [h.last_at.map(|t| t + h.gap), h.paused_until]
                .into_iter()
                .flatten()
                .max()
                .map_or(Duration::ZERO, |t| t.saturating_duration_since(now))
        })
    }

    pub fn gap(&self, host: &str) -> Duration {
        self.with_host(host, |h| h.gap)
    }

    /// No request to `host` before `until`.
    pub(crate) fn pause_until(&self, host: &str, until: Instant) {
        self.with_host(host, |h| {
            h.paused_until = Some(h.paused_until.map_or(until, |p| p.max(until)));
        });
    }

    /// Refuse `host` for the rest of the run, and wake its waiters so they see it.
    pub fn rest(&self, host: &str) {
        self.with_host(host, |h| {
            h.rested = true;
            h.freed.notify_waiters();
        });
        tracing::debug!(host, "gate: host rested for the rest of the run");
    }

    pub fn is_rested(&self, host: &str) -> bool {
        self.with_host(host, |h| h.rested)
    }

    /// Count a network failure; rests the host at the limit. Returns true if it did.
    pub fn failure(&self, host: &str) -> bool {
        let max = self.max_failures;
        let rest = self.with_host(host, |h| {
            h.failures += 1;
            max > 0 && h.failures >= max && !h.rested
        });
        if rest {
            self.rest(host);
        }
        rest
    }

    /// The host answered (any status): reset its failure count.
    pub fn success(&self, host: &str) {
        self.with_host(host, |h| h.failures = 0);
    }
}

enum Wait {
    Go,
    Until(Instant),
    Slot(Arc<Notify>),
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.release(&self.host);
    }
}

/// The one rule for a robots.txt Crawl-delay, obeyed by the sending gate
/// and by the frontier alike: the host's gap becomes the delay, held to at
/// most `max_crawl_delay` (a host asking for more is crawled at that gap,
/// not skipped) and never below `min_host_gap`.
pub(crate) fn crawl_delay_gap(delay: Duration, min_gap: Duration, max_gap: Duration) -> Duration {
    delay.min(max_gap).max(min_gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(gap_ms: u64, per_host: usize) -> Arc<Gate> {
        Arc::new(Gate::new(
            Duration::from_millis(gap_ms),
            Duration::from_secs(10),
            per_host,
            3,
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn gap_between_starts() {
        let g = gate(100, 4);
        let t0 = Instant::now();
        let a = g.acquire("h").await.unwrap();
        drop(a);
        let b = g.acquire("h").await.unwrap();
        assert_eq!(b.waited, Duration::from_millis(100));
        assert!(Instant::now() - t0 >= Duration::from_millis(100));
        // Other hosts are not held up.
        let c = g.acquire("other").await.unwrap();
        assert_eq!(c.waited, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_limit_waits_for_release() {
        let g = gate(0, 1);
        let a = g.acquire("h").await.unwrap();
        let g2 = g.clone();
        let waiter = tokio::spawn(async move { g2.acquire("h").await.map(|p| p.waited) });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!waiter.is_finished());
        drop(a);
        let waited = waiter.await.unwrap().unwrap();
        assert!(waited >= Duration::from_millis(500));
    }

    #[tokio::test(start_paused = true)]
    async fn pause_rest_and_failures() {
        let g = gate(0, 1);
        g.pause_until("h", Instant::now() + Duration::from_secs(3));
        let p = g.acquire("h").await.unwrap();
        assert_eq!(p.waited, Duration::from_secs(3));
        drop(p);
        assert!(!g.failure("h"));
        assert!(!g.failure("h"));
        assert!(g.failure("h"));
        assert_eq!(g.acquire("h").await.unwrap_err(), Rested);
    }

    #[tokio::test(start_paused = true)]
    async fn gap_counts_from_when_the_server_can_have_seen_the_request() {
        let g = gate(100, 1);
        let conn: Conn = (
            "127.0.0.1:5000".parse().unwrap(),
            "127.0.0.1:80".parse().unwrap(),
        );
        // Sends `a`, answered after `ms` on `c`; returns the next one's wait.
        async fn step(g: &Arc<Gate>, ms: u64, c: Conn) -> Duration {
            let a = g.acquire("h").await.unwrap();
            let sent = Instant::now();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            g.answered("h", sent, Some(c));
            drop(a);
            let b = g.acquire("h").await.unwrap();
            let waited = b.waited;
            drop(b);
            waited
        }
        let j = JITTER;
        // A new connection: from the answer (30 ms after the send).
        assert_eq!(step(&g, 30, conn).await, Duration::from_millis(100));
        // Reused, too few answers to know the host's quickest: from the answer.
        for _ in 0..QUICK_SAMPLES {
            assert_eq!(step(&g, 30, conn).await, Duration::from_millis(100));
        }
        // Reused, as quick as the quickest: from the send (plus the jitter allowance).
        assert_eq!(step(&g, 30, conn).await, Duration::from_millis(70) + j);
        // 20 ms later than the quickest: the server may have seen it 20 ms late.
        assert_eq!(step(&g, 50, conn).await, Duration::from_millis(70) + j);
        // Another connection: from the answer again.
        let other: Conn = ("127.0.0.1:5001".parse().unwrap(), conn.1);
        assert_eq!(step(&g, 30, other).await, Duration::from_millis(100));
    }

    #[test]
    fn one_crawl_delay_rule_below_at_and_above_the_cap() {
        let (min, max) = (Duration::from_millis(100), Duration::from_secs(30));
        for (delay, want) in [
            (0, 100),
            (50, 100),
            (2_000, 2_000),
            (30_000, 30_000),
            (31_000, 30_000),
            (3_600_000, 30_000),
        ] {
            assert_eq!(
                crawl_delay_gap(Duration::from_millis(delay), min, max),
                Duration::from_millis(want),
                "{delay} ms"
            );
        }
    }

    #[test]
    fn crawl_delay_is_capped_and_never_lowers() {
        let g = gate(200, 1);
        g.apply_crawl_delay("h", Duration::from_secs(60));
        assert_eq!(g.gap("h"), Duration::from_secs(10));
        g.apply_crawl_delay("x", Duration::from_millis(50));
        assert_eq!(g.gap("x"), Duration::from_millis(200));
    }
}
