//! The clues the engine has about a URL before fetching it, scored with the
//! relevance vocabulary (`Rule::hint`) into the frontier's value
//! (`frontier::url_value`). Which clues count depends on
//! `crawl.frontier_policy`: `focused` uses anchor text, listed titles, the
//! URL slug, the linking page's relevance and the listing date; `best_first`
//! only anchor text, slug and the linking page (a plain best-first crawler);
//! `round_robin` none.

use chrono::{DateTime, Utc};

use super::Engine;
use crate::discover::Listed;
use crate::frontier::{Clues, NEUTRAL, Policy, slug_words, url_value};
use crate::url::Url;

impl Engine {
    /// Value of a link found on a page (`parent_relevant`: that page scored relevant).
    pub(super) fn link_value(&self, url: &Url, anchor: Option<&str>, parent_relevant: bool) -> f32 {
        if self.facts.config().crawl.frontier_policy == Policy::RoundRobin {
            return NEUTRAL as f32;
        }
        let anchor = anchor.map(str::trim).filter(|a| !a.is_empty());
        let mut clues = self.slug_clues(url);
        clues.text = anchor.map_or(0.0, |a| self.ctx.rule.hint(a));
        clues.text_known = anchor.is_some_and(|a| a.split_whitespace().count() >= 2);
        clues.parent_relevant = parent_relevant;
        let v = url_value(&clues) as f32;
        tracing::trace!(%url, ?anchor, value = v, "link valued");
        v
    }

    /// Value of a URL a feed or sitemap listed (its title and date count under `focused`).
    pub(super) fn listed_value(&self, item: &Listed) -> f32 {
        match self.facts.config().crawl.frontier_policy {
            Policy::RoundRobin => return NEUTRAL as f32,
            Policy::BestFirst => return url_value(&self.slug_clues(&item.url)) as f32,
            Policy::Focused => {}
        }
        let mut clues = self.slug_clues(&item.url);
        let title = item
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        clues.text = title.map_or(0.0, |t| self.ctx.rule.hint(t));
        clues.text_known = title.is_some();
        clues.age_days = item
            .lastmod
            .map(|d| age_days(d.with_timezone(&Utc), self.now_utc()));
        url_value(&clues) as f32
    }

    fn slug_clues(&self, url: &Url) -> Clues {
        let (words, known) = slug_words(url.path());
        Clues {
            slug: self.ctx.rule.hint(&words),
            slug_known: known,
            ..Clues::default()
        }
    }

    fn now_utc(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

fn age_days(then: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    (now - then).num_seconds() as f64 / 86_400.0
}
