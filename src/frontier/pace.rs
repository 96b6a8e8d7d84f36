//! Budget pacing: when the fetch budget would run out before the time box, the
//! value a URL must reach to be fetched.
//!
//! The engine tells the frontier, every turn of its loop, what is left
//! ([`Pace`]: fetches, time, and how many fetches per second its slots
//! sustain). The frontier then looks at what it could fetch in the time left:
//! each host at most `time left / gap` URLs (its best ones), and the slots at
//! most `slot_rate × time left` in all. If the budget covers that, the time box
//! binds and nothing is declined (the threshold is 0: work-conserving). If not,
//! the budget is what is scarce: seeds and listings (tiers the pacing never
//! declines) are counted first, then the threshold is the expected value (the
//! chance of a hit, [`super::expected`]) of the last URL the remaining budget
//! buys when the offers of every host, best first and capped per host, are
//! ranked together. A host whose best URL is below it is declined until the
//! threshold falls or a better URL is queued for it. As time runs out with
//! budget left, the capacity shrinks and the threshold falls to 0.

use std::time::Duration;

/// What is left of the run, as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Requests the fetch budget still allows.
    pub budget_left: u64,
    /// Time until the time box ends.
    pub time_left: Duration,
    /// Fetches per second the worker slots can sustain (slots over the mean
    /// fetch time).
    pub slot_rate: f64,
}

/// Bins of expected value over `[0, 1]`.
const BINS: usize = 100;

/// What the hosts could fetch in the time left, by expected value.
#[derive(Debug, Clone)]
pub(super) struct Offers {
    /// URLs never declined (seeds, feeds and sitemaps) within the hosts' caps.
    must: f64,
    bins: [f64; BINS],
}

impl Default for Offers {
    fn default() -> Offers {
        Offers {
            must: 0.0,
            bins: [0.0; BINS],
        }
    }
}

impl Offers {
    /// Add one host: at most `cap` fetches; `must` URLs that are never
    /// declined go first, then `(expected value, count)` groups, best first.
    pub(super) fn add_host(
        &mut self,
        cap: f64,
        must: usize,
        groups: impl Iterator<Item = (f64, usize)>,
    ) {
        let mut left = cap.max(0.0);
        let m = (must as f64).min(left);
        self.must += m;
        left -= m;
        for (e, n) in groups {
            if left <= 0.0 {
                break;
            }
            let take = (n as f64).min(left);
            left -= take;
            let bin = ((e.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1);
            self.bins[bin] += take;
        }
    }

    /// The expected value a URL needs (0: take everything).
    pub(super) fn threshold(&self, p: &Pace) -> f64 {
        let secs = p.time_left.as_secs_f64();
        let offered = self.must + self.bins.iter().sum::<f64>();
        let capacity = offered.min(p.slot_rate.max(0.0) * secs);
        let budget = p.budget_left as f64;
        if budget >= capacity {
            return 0.0;
        }
        let mut left = budget - self.must;
        if left <= 0.0 {
            return 1.0;
        }
        for bin in (0..BINS).rev() {
            left -= self.bins[bin];
            if left <= 0.0 {
                return bin as f64 / BINS as f64;
            }
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(budget: u64, secs: u64) -> Pace {
        Pace {
            budget_left: budget,
            time_left: Duration::from_secs(secs),
            slot_rate: 100.0,
        }
    }

    #[test]
    fn time_bound_takes_everything() {
        let mut o = Offers::default();
        o.add_host(10.0, 1, [(0.9, 5), (0.1, 50)].into_iter());
        // 10 fetches possible, budget 20: the time box binds.
        assert_eq!(o.threshold(&pace(20, 100)), 0.0);
    }

    #[test]
    fn budget_bound_keeps_the_best() {
        let mut o = Offers::default();
        // Two hosts, each can do 100 fetches in the time left.
        o.add_host(100.0, 2, [(0.8, 30), (0.05, 500)].into_iter());
        o.add_host(100.0, 2, [(0.3, 200)].into_iter());
        // Budget 50: 4 seeds, then 30 at 0.8, then 16 of the 0.3s.
        let t = o.threshold(&pace(50, 1000));
        assert!((0.25..=0.3).contains(&t), "{t}");
        // Budget 20: only the 0.8s.
        let t = o.threshold(&pace(20, 1000));
        assert!((0.75..=0.8).contains(&t), "{t}");
        // Budget 3: not even every seed.
        assert_eq!(o.threshold(&pace(3, 1000)), 1.0);
        // Slots cap the capacity: 1 fetch/s for 40 s is less than the budget.
        let slow = Pace {
            slot_rate: 1.0,
            ..pace(50, 40)
        };
        assert_eq!(o.threshold(&slow), 0.0);
    }

    #[test]
    fn host_caps_bound_what_a_host_offers() {
        let mut o = Offers::default();
        // A rich host that can only do 10 fetches, a poor one that can do 1000.
        o.add_host(10.0, 0, [(0.9, 1000)].into_iter());
        o.add_host(1000.0, 0, [(0.2, 1000)].into_iter());
        // Budget 100: 10 from the rich host, then the poor host's best.
        let t = o.threshold(&pace(100, 1000));
        assert!((0.15..=0.2).contains(&t), "{t}");
    }
}
