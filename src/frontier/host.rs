//! One host's scheduling state, what the frontier reports about it, and the
//! ordering of the ready heap.

use std::cmp::Ordering;
use std::time::Duration;

use super::queue::HostQueue;
use super::weight::Yield;

/// What the frontier knows about one host (for logs and the dashboard).
#[derive(Debug, Clone, PartialEq)]
pub struct HostStats {
    pub queued: usize,
    pub in_flight: usize,
    pub gap: Duration,
    pub last_sent: Option<Duration>,
    pub(crate) paused_until: Duration,
    /// When the gap and any pause allow the next request.
    pub ready_at: Duration,
    pub dropped: bool,
    pub yields: Yield,
    /// Current share of turns relative to the best host (0..=1).
    pub weight: f64,
    /// Left out by budget pacing for now.
    pub(crate) declined: bool,
}

#[derive(Debug, Default)]
pub(super) struct Host {
    pub(super) name: Box<str>,
    pub(super) queue: HostQueue,
    pub(super) in_flight: u32,
    /// Handed out by `next` but not reported `sent` yet (at most `in_flight`).
    pub(super) unsent: u32,
    pub(super) last_sent: Option<Duration>,
    pub(super) gap: Duration,
    pub(super) paused_until: Duration,
    pub(super) dropped: bool,
    /// Stride-scheduling pass: advances by `1 / weight` per turn.
    pub(super) pass: f64,
    /// Bumped on every change; heap entries with an older stamp are stale.
    pub(super) stamp: u32,
    pub(super) yields: Yield,
    /// Left out of the rotation by budget pacing: its best URL is worth less
    /// than the threshold (see `pace.rs`).
    pub(super) declined: bool,
}

impl Host {
    pub(super) fn ready_at(&self) -> Duration {
        let after_gap = self.last_sent.map_or(Duration::ZERO, |t| t + self.gap);
        after_gap.max(self.paused_until)
    }
}

/// A ready host, ordered so that `BinaryHeap` pops the lowest group (fresh
/// work before backlog), then the lowest pass, then the lowest id.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadyKey {
    /// 0: its best entry is fresh work; 1: backlog or exploration.
    pub(super) group: u8,
    pub(super) pass: f64,
    pub(super) id: u32,
    pub(super) stamp: u32,
}

impl PartialEq for ReadyKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ReadyKey {}
impl PartialOrd for ReadyKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ReadyKey {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .group
            .cmp(&self.group)
            .then(other.pass.total_cmp(&self.pass))
            .then(other.id.cmp(&self.id))
            .then(other.stamp.cmp(&self.stamp))
    }
}
