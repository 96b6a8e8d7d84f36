//! Yield of a host: a moving average of its hit ratio, and the share of turns it earns.
//!
//! The average starts as the plain mean of the first fetches (the step is
//! `max(alpha, 1/n)`), so it is unbiased from the first page and becomes an
//! exponential moving average with weight `alpha` once `n > 1/alpha`.

use super::Outcome;

/// A host's fetch record.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Yield {
    /// Fetches with a verdict (hit, miss or error).
    pub fetched: u64,
    pub hits: u64,
    /// Moving average of the hit ratio (0..=1).
    pub(crate) ema: f64,
}

impl Yield {
    pub fn record(&mut self, outcome: Outcome, alpha: f64) {
        self.fetched += 1;
        let x = if outcome == Outcome::Hit {
            self.hits += 1;
            1.0
        } else {
            0.0
        };
        let step = alpha.max(1.0 / self.fetched as f64);
        self.ema += step * (x - self.ema);
    }

    /// Past the warm-up, the weight applies.
    pub fn warm(&self, warmup_pages: u32) -> bool {
        self.fetched >= u64::from(warmup_pages)
    }
}

/// Share of turns for a host with `ema`, relative to the best host's `best`.
/// Hosts still warming up, or any host while no host has hits, get a full share.
pub(crate) fn weight(y: &Yield, best: f64, warmup_pages: u32, min_weight: f64) -> f64 {
    let floor = min_weight.clamp(1e-3, 1.0);
    if !y.warm(warmup_pages) || best <= 0.0 {
        return 1.0;
    }
    (y.ema / best).clamp(floor, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_and_weight() {
        let mut y = Yield::default();
        for o in [Outcome::Hit, Outcome::Miss, Outcome::Hit, Outcome::Error] {
            y.record(o, 0.1);
        }
        assert!((y.ema - 0.5).abs() < 1e-9, "plain mean at first: {}", y.ema);
        assert_eq!((y.fetched, y.hits), (4, 2));
        let table = [
            // (warmup, best, min_weight, want)
            (10, 0.5, 0.1, 1.0), // still warming up
            (4, 0.0, 0.1, 1.0),  // nobody has hits yet
            (4, 0.5, 0.1, 1.0),  // the best
            (4, 1.0, 0.1, 0.5),  // half the best
            (4, 10.0, 0.1, 0.1), // floored
        ];
        for (warmup, best, min_w, want) in table {
            let w = weight(&y, best, warmup, min_w);
            assert!((w - want).abs() < 1e-9, "{warmup} {best} {min_w}: {w}");
        }
        for _ in 0..200 {
            y.record(Outcome::Miss, 0.1);
        }
        assert!(y.ema < 1e-6, "decays: {}", y.ema);
    }
}
