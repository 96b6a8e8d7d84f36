//! A fetched page's AI-use signals, assembled one way for the crawl's worker,
//! `check-url` and `probe`'s start page and sampled pages, so they cannot drift: the response's headers
//! (`X-Robots-Tag`, `tdm-reservation`, `Content-Usage`), then the robots.txt
//! `Content-Signal` lines and `Content-Usage` rule of the final URL's origin
//! and path, the page's meta tags, and, when asked
//! for, the origin's `tdmrep.json`; and what the crawl does about them under
//! `ai_use_policy` ([`AiDecision`]).

use std::sync::Arc;

use crate::config::AiUsePolicy;
use crate::consent::{Signals, reserves_ai_training};
use crate::extract::Page;
use crate::net::{Net, Response, TdmRep};
use crate::url::Url;

/// The signals a response's headers carry.
pub fn from_headers(net: &Net, resp: &Response) -> Signals {
    let mut signals = Signals::default();
    signals.x_robots_tag(&resp.x_robots_tag, net.agent());
    signals.tdm_headers(resp.header("tdm-reservation"), resp.header("tdm-policy"));
    let usage: Vec<&str> = resp
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("content-usage"))
        .map(|(_, v)| v.as_str())
        .collect();
    signals.content_usage_header(&usage);
    signals
}

/// What the page adds to the header signals.
pub struct PageConsent {
    /// xxh3 of the robots.txt the page was fetched under (0: none).
    pub robots_hash: u64,
    /// The origin's `tdmrep.json`, when it was asked for.
    pub tdmrep: Option<Arc<TdmRep>>,
}

/// Add the robots.txt, meta and (with `ask_tdmrep`) TDMRep signals of the
/// page at `url` to `signals`.
pub async fn add_page_signals(
    net: &Net,
    url: &Url,
    page: &Page,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    add_signals(net, url, Some(page), ask_tdmrep, signals).await
}

/// Add the signals of the site at `url` when no page was read there (the
/// start URL `probe` could not read, or a feed): robots.txt's, and with
/// `ask_tdmrep` the origin's `tdmrep.json` rule for its path.
pub async fn add_site_signals(
    net: &Net,
    url: &Url,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    add_signals(net, url, None, ask_tdmrep, signals).await
}

/// The one order: robots.txt's Content-Signal and Content-Usage lines, the
/// page's meta tags, then tdmrep.json.
async fn add_signals(
    net: &Net,
    url: &Url,
    page: Option<&Page>,
    ask_tdmrep: bool,
    signals: &mut Signals,
) -> PageConsent {
    let robots = net.robots(url).await;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    signals.content_signals(&robots.content_signals);
    signals.content_usage_robots(&robots.content_usage, &path);
    if let Some(page) = page {
        signals.meta(&page.consent_meta, net.agent());
    }
    let tdmrep = if ask_tdmrep {
        let tdm = net.tdmrep(url).await;
        signals.tdmrep(&tdm.rules, &path);
        Some(tdm)
    } else {
        None
    };
    PageConsent {
        robots_hash: robots.hash,
        tdmrep,
    }
}

/// What the crawl does with a relevant article, given its AI-use signals and
/// `ai_use_policy`: the one rule the worker's store decision and `check-url`
/// both follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AiDecision {
    /// No signal reserves AI training: stored.
    NoReservation,
    /// Reserved, `respect`: withheld (`withheld: ai-use`).
    Withhold,
    /// Reserved, `record`: stored and marked `ai_reserved`.
    StoreMarked,
    /// Reserved, `ignore`: stored.
    StoreAnyway,
}

impl AiDecision {
    pub fn new(signals: &Signals, policy: AiUsePolicy) -> AiDecision {
        if !reserves_ai_training(signals) {
            return AiDecision::NoReservation;
        }
        match policy {
            AiUsePolicy::Respect => AiDecision::Withhold,
            AiUsePolicy::Record => AiDecision::StoreMarked,
            AiUsePolicy::Ignore => AiDecision::StoreAnyway,
        }
    }

    /// Does the publisher reserve AI training?
    pub fn reserved(self) -> bool {
        self != AiDecision::NoReservation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_follows_the_reservation_and_the_policy() {
        let mut reserved = Signals::default();
        reserved.tdm_headers(Some("1"), None);
        let mut open = Signals::default();
        open.tdm_headers(Some("0"), None);
        for (signals, policy, want) in [
            (&open, AiUsePolicy::Respect, AiDecision::NoReservation),
            (&open, AiUsePolicy::Ignore, AiDecision::NoReservation),
            (
                &Signals::default(),
                AiUsePolicy::Record,
                AiDecision::NoReservation,
            ),
            (&reserved, AiUsePolicy::Respect, AiDecision::Withhold),
            (&reserved, AiUsePolicy::Record, AiDecision::StoreMarked),
            (&reserved, AiUsePolicy::Ignore, AiDecision::StoreAnyway),
        ] {
            let got = AiDecision::new(signals, policy);
            assert_eq!(got, want, "{:?} under {policy:?}", signals.labels());
            assert_eq!(got.reserved(), reserves_ai_training(signals));
        }
    }
}
