//! URL families and what they yield, learned per host across runs.
//!
//! A URL's *family* is its host and the shape of its path
//! ([`crate::url::trap::family`]: numbers become `#`, every segment after
//! the first a `*`, so `/tag/robots`, `/tag/chips` are one family and
//! `/archive/2024/05/17` another). For each family the crawl keeps
//! [`FamilyStats`]: pages of it fetched, and a moving average of whether
//! they *paid*. A fetch pays when the page is an article that was new to
//! the run (not a redirect onto a page already fetched), and a family is
//! credited again when a URL it was the first to link turns out to be an
//! article (a tag page that leads to stories pays; one that only repeats
//! what the feed had does not).
//!
//! What the engine does with a family's [`Standing`]:
//! * `Pays` (or `Unknown` on a host's first run): links of the family are
//!   queued as usual;
//! * `Unknown` or `Explore` in a daily run (the host has a watermark): the
//!   link is *exploration*, served after every host's fresh work and
//!   backlog ([`super::Entry::explore`]);
//! * `Stopped`: the family brought no article in its last
//!   [`STOP_AFTER`]-odd fetches; its links are neither queued nor, if
//!   already queued, fetched. This is also what ends an archive hub that is
//!   a trap (a calendar of day pages, month after month, into the past).
//!   A stopped family is probed once more after [`RETRY_DAYS`] days.

use serde::{Deserialize, Serialize};

/// Weight of the newest fetch in the moving average.
const ALPHA: f32 = 0.4;
/// A family at or above this average pays.
const PAYS: f32 = 0.2;
/// A family below this average, after at least [`STOP_AFTER`] fetches, is stopped.
const STOP_BELOW: f32 = 0.05;
/// Fetches before a family can be stopped.
pub const STOP_AFTER: u32 = 3;
/// Days after its last fetch when a stopped family gets one more probe.
pub(crate) const RETRY_DAYS: u32 = 14;

/// What the crawl knows of one URL family of one host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FamilyStats {
    /// Pages of the family fetched (over all runs).
    #[serde(default)]
    pub fetched: u32,
    /// Fetches that paid, plus credits for articles its links led to.
    #[serde(default)]
    pub paid: u32,
    /// Moving average of paying (1) and not (0), newest weighted [`ALPHA`].
    #[serde(default)]
    pub(crate) ema: f32,
    /// Day stamp of the last fetch.
    #[serde(default)]
    pub day: u32,
}

/// What a family's record says about fetching its next page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Never fetched.
    Unknown,
    /// Pays: fetch as any page.
    Pays,
    /// Has not paid lately, not stopped yet: exploration.
    Explore,
    /// Brought nothing in its last fetches: do not fetch.
    Stopped,
}

impl FamilyStats {
    /// A page of the family was fetched on `day`; `paid` says whether it was a new article.
    pub fn fetched(&mut self, paid: bool, day: u32) {
        let x = f32::from(u8::from(paid));
        self.ema = if self.fetched == 0 {
            x
        } else {
            (1.0 - ALPHA) * self.ema + ALPHA * x
        };
        self.fetched += 1;
        self.paid += u32::from(paid);
        self.day = day;
    }

    /// A URL the family linked first turned out to be an article.
    pub fn credit(&mut self) {
        self.paid += 1;
        self.ema = (1.0 - ALPHA) * self.ema + ALPHA;
    }

    /// The family's standing on day `today`.
    pub(crate) fn standing(&self, today: u32) -> Standing {
        if self.fetched == 0 {
            Standing::Unknown
        } else if self.ema >= PAYS {
            Standing::Pays
        } else if self.fetched >= STOP_AFTER && self.ema < STOP_BELOW {
            if today >= self.day + RETRY_DAYS {
                Standing::Explore
            } else {
                Standing::Stopped
            }
        } else {
            Standing::Explore
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(pays: &[bool]) -> FamilyStats {
        let mut s = FamilyStats::default();
        for &p in pays {
            s.fetched(p, 100);
        }
        s
    }

    #[test]
    fn standings() {
        let cases: &[(&[bool], Standing)] = &[
            (&[], Standing::Unknown),
            (&[true], Standing::Pays),
            (&[false], Standing::Explore),
            (&[false, false], Standing::Explore),
            (&[false, false, false], Standing::Stopped),
            // A family that paid keeps paying for a few empty fetches, then explores, then stops.
            (&[true, true, false, false, false, false], Standing::Explore),
            (&[true, true, false], Standing::Pays),
            (
                &[true, true, false, false, false, false, false, false],
                Standing::Stopped,
            ),
            // Articles among misses (a general outlet's story pages) keep it paying.
            (
                &[false, true, false, true, false, true, false],
                Standing::Pays,
            ),
        ];
        for (pays, want) in cases {
            assert_eq!(after(pays).standing(100), *want, "{pays:?}");
        }
    }

    #[test]
    fn a_credit_revives_and_a_stopped_family_is_probed_again_later() {
        let mut s = after(&[false, false, false]);
        assert_eq!(s.standing(100), Standing::Stopped);
        assert_eq!(s.standing(100 + RETRY_DAYS), Standing::Explore);
        s.credit();
        assert_eq!(s.standing(100), Standing::Pays);
    }
}
