//! What the engine does with URL families (`frontier::FamilyStats`,
//! `store::state::families`): links of a family that stopped paying are not
//! queued or fetched, links of one not yet known to pay are exploration in
//! a daily run, and every fetched page and every article a family's links
//! led to teach it.

use super::Engine;
use crate::crawl::worker::{Job, Meta};
use crate::frontier::{Entry, Kind, Origin, STOP_AFTER, Standing};
use crate::store::state::families;
use crate::url::{self, Url, trap};

impl Engine {
    /// Is `entry` a page found by a link (the URLs families are judged on)?
    fn by_link(entry: &Entry) -> bool {
        entry.kind == Kind::Page && matches!(entry.origin, Origin::Relevant | Origin::Other)
    }

    fn standing(&self, key: &str) -> Standing {
        self.work.standing(key, self.facts.day())
    }

    /// Judge a link by its family before it is queued: false when its
    /// family stopped paying (not queued); otherwise true, with `entry`
    /// marked exploration (a daily run, a family not known to pay) or
    /// backlog (dated before the host's fresh line).
    pub(super) fn admit_family(&mut self, host: &str, u: &Url, entry: &mut Entry) -> bool {
        if !Self::by_link(entry) {
            entry.explore = false;
            return true;
        }
        let key = families::key(host, &trap::family(u));
        // Links found on an exploration page (the flag is inherited).
        let from_explore = std::mem::take(&mut entry.explore);
        match self.standing(&key) {
            Standing::Stopped => {
                tracing::debug!(url = %u, family = %key, "URL family brought no article in its last fetches: not queued");
                self.ledger.host(host).family_stopped();
                return false;
            }
            Standing::Pays => {}
            Standing::Unknown | Standing::Explore if from_explore => {
                // Exploration goes one step deep: a tag page's own pages wait
                // until the tag pages have shown they pay.
                tracing::debug!(url = %u, family = %key, "link from an exploration page to a family not known to pay: not queued");
                self.ledger.host(host).family_stopped();
                return false;
            }
            Standing::Unknown | Standing::Explore if self.facts.daily(host) => {
                entry.explore = true;
                if self.work.probe(key, STOP_AFTER) {
                    // One of the family's first probes this run: with the
                    // backlog, first among it, so the family is learned on
                    // a backlog day rather than on the first quiet one.
                    entry.backlog = true;
                    entry.value = 1.0;
                    tracing::debug!(url = %u, "URL family not known to pay: probed with the backlog");
                }
            }
            Standing::Unknown | Standing::Explore => {}
        }
        let fresh_line = self.facts.fresh_since(host).date_naive();
        let floor = self
            .facts
            .cutoff()
            .for_listing(None)
            .map(|f| f.date_naive());
        match trap::url_date(u) {
            Some((d, _)) if floor.is_some_and(|f| d < f) => {
                // Dated before the crawl's cut-off: not wanted, as a listed
                // entry that old is not.
                tracing::debug!(url = %u, date = %d, "link dated before min_lastmod: not queued");
                return false;
            }
            Some((d, _)) if d < fresh_line => entry.backlog = true,
            _ => {}
        }
        true
    }

    /// At dispatch: a queued link whose family stopped paying since it was
    /// queued is not fetched. Returns whether it was dropped.
    pub(super) fn family_stopped_now(&mut self, host: &str, u: &Url, entry: &Entry) -> bool {
        if !Self::by_link(entry) {
            return false;
        }
        let key = families::key(host, &trap::family(u));
        if self.standing(&key) != Standing::Stopped {
            return false;
        }
        tracing::debug!(url = %u, family = %key, "URL family stopped paying since this link was queued: not fetched");
        self.ledger.host(host).family_stopped();
        true
    }

    /// A page was fetched and extracted: its family learns whether it paid
    /// (an article new to the run), and the family of the page whose link
    /// first led to it is credited when it is one.
    pub(super) fn learn_family(&mut self, job: &Job, meta: &Meta, is_article: bool) {
        let (req, fin) = (url::seen_hash(&job.url), url::seen_hash(&meta.url));
        if is_article && let Some(by) = self.work.owed(req) {
            self.work.family(&by, |s| s.credit());
        }
        if !Self::by_link(&job.entry) {
            return;
        }
        // A redirect onto a page this run already had is no new article.
        let known = fin != req && self.work.in_run(fin);
        let paid = is_article && !known;
        let key = families::key(&job.host, &trap::family(&job.url));
        let day = self.facts.day();
        let before = self.standing(&key);
        self.work.family(&key, |s| s.fetched(paid, day));
        if before != Standing::Stopped && self.standing(&key) == Standing::Stopped {
            tracing::info!(host = %job.host, family = %key, "URL family stopped: its last pages brought no article");
            let fam = trap::family(&job.url);
            self.ledger.host(&job.host).families_stopped.push(fam);
        }
    }
}
